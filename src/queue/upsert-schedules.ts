import type { Queue } from 'bullmq';
import { DEFAULT_ACCOUNT, runKey } from '../account-name.js';
import type { ResourceName } from '../config/load-config.js';
import type { Config } from '../config/types.js';
import { cronFiresAt, fullOffsetMs, incrementalOffsetMs } from './schedule-offsets.js';
import { runJobOptions, type SyncJobData } from './sync-job.js';

/** One (account, resource) the schedules cover. */
export interface ScheduleTarget {
  account: string;
  resource: ResourceName;
  /** The account's incremental interval; default HIRESYNC_INCREMENTAL_EVERY. */
  incrementalEveryMs?: number | undefined;
  /** The account's full-run cron pattern; default HIRESYNC_FULL_CRON. */
  fullCron?: string | undefined;
}

/** The job-scheduler settings {@link upsertSchedules} works with. */
export type ScheduleConfig = Pick<
  Config,
  'incrementalEveryMs' | 'fullCron' | 'fullWindowMs' | 'runAttempts' | 'runBackoffMs'
>;

/** A scheduler as kept: its key, how it repeats, and where in its period it fires. */
interface Wanted {
  key: string;
  repeat: { every: number; offset: number } | { pattern: string };
  /** Of a full scheduler: how long after each of its cron's times it fires. */
  fullOffsetMs?: number;
  requested: 'auto' | 'full';
  target: ScheduleTarget;
}

/**
 * The schedulers of `targets`: an incremental one and a full one each, with
 * their repeat. The incremental one fires every interval at the offset of its
 * (account, resource) (BullMQ's `offset`); the full one at its cron's times
 * plus an offset within HIRESYNC_FULL_WINDOW, which the queue's repeat
 * strategy adds (fullWindowStrategy) to the jobs named by the run key.
 */
function wantedOf(config: ScheduleConfig, targets: readonly ScheduleTarget[]): Wanted[] {
  return targets.flatMap((target) => {
    const key = runKey(target.account, target.resource);
    const every = target.incrementalEveryMs ?? config.incrementalEveryMs;
    return [
      {
        key: `incremental:${key}`,
        repeat: { every, offset: incrementalOffsetMs(key, every) },
        requested: 'auto',
        target,
      },
      {
        key: `full:${key}`,
        repeat: { pattern: target.fullCron ?? config.fullCron },
        fullOffsetMs: fullOffsetMs(key, config.fullWindowMs),
        requested: 'full',
        target,
      },
    ] satisfies Wanted[];
  });
}

/** Scheduler keys of the schedules: `incremental:<run key>` and `full:<run key>`. */
export function scheduleKeys(targets: readonly ScheduleTarget[]): string[] {
  return targets.flatMap(({ account, resource }) => {
    const key = runKey(account, resource);
    return [`incremental:${key}`, `full:${key}`];
  });
}

/**
 * The schedule a scheduler key names ({@link scheduleKeys}'s inverse: a run
 * key without `:` is `default`'s), or undefined for a key hiresync does not keep.
 */
export function scheduleOfKey(
  key: string,
): { kind: 'incremental' | 'full'; account: string; resource: string } | undefined {
  const match = /^(incremental|full):(?:([^:]+):)?([^:]+)$/.exec(key);
  if (!match?.[1] || !match[3]) return undefined;
  const kind = match[1] === 'full' ? 'full' : 'incremental';
  return { kind, account: match[2] ?? DEFAULT_ACCOUNT, resource: match[3] };
}

/** Is `key` the key of a scheduler hiresync keeps? */
function isScheduleKey(key: string): boolean {
  return /^(incremental|full):/.test(key);
}

/** A scheduler as BullMQ lists it (getJobSchedulers). */
export interface ListedScheduler {
  key?: string | undefined;
  id?: string | null | undefined;
  every?: number | undefined;
  offset?: number | undefined;
  pattern?: string | null | undefined;
  /** When its next job is due (ms since the epoch). */
  next?: number | null | undefined;
}

/**
 * Is `held` the scheduler `wanted` describes? The same interval at the same
 * offset, or the same cron pattern whose next job is due at one of its times
 * plus the wanted full offset (a scheduler of a version before the spread,
 * or of another HIRESYNC_FULL_WINDOW, is due at another moment).
 */
function holds(held: ListedScheduler, wanted: Wanted, cache: Map<string, boolean>): boolean {
  const { repeat } = wanted;
  if ('every' in repeat) return held.every === repeat.every && held.offset === repeat.offset;
  if (held.pattern !== repeat.pattern) return false;
  // A scheduler listed without its next time cannot be told apart: left as it is.
  if (held.next === undefined || held.next === null) return true;
  return cronFiresAt(repeat.pattern, held.next - (wanted.fullOffsetMs ?? 0), cache);
}

/**
 * Keys of the schedulers of `targets` that Redis holds with another interval,
 * offset or cron pattern than wanted (an account's settings, or the
 * deployment's HIRESYNC_INCREMENTAL_EVERY, HIRESYNC_FULL_CRON or
 * HIRESYNC_FULL_WINDOW, changed; or they were made before schedules were
 * spread over their period).
 */
export function changedSchedules(
  config: ScheduleConfig,
  targets: readonly ScheduleTarget[],
  present: readonly ListedScheduler[],
): string[] {
  const byKey = new Map(present.map((s) => [s.key ?? s.id ?? '', s]));
  const cache = new Map<string, boolean>();
  return wantedOf(config, targets)
    .filter((wanted) => {
      const held = byKey.get(wanted.key);
      return held !== undefined && !holds(held, wanted, cache);
    })
    .map((w) => w.key);
}

/** What {@link upsertSchedules} changed. */
export interface ScheduleChanges {
  /** Keys upserted. */
  upserted: string[];
  /** Keys of schedulers replaced (removed, then upserted) because their interval, offset or cron changed. */
  replaced: string[];
  /** Keys of schedulers removed: their account was disabled or removed, or the resource is no longer configured. */
  removed: string[];
  /** Keys of incremental schedulers Redis did not hold, whose first run was queued at once. */
  started: string[];
}

/**
 * Keeps the schedules of `targets`: an incremental run of each every
 * target's interval (default HIRESYNC_INCREMENTAL_EVERY) at the offset of its
 * (account, resource), and a full run at its cron pattern's times (default
 * HIRESYNC_FULL_CRON) plus its offset within HIRESYNC_FULL_WINDOW (the queue
 * must have been made with the same window: createSyncQueue). Upserts are
 * idempotent across restarts and replicas; with `only`, just those keys are
 * upserted (the others are known to be there). An incremental scheduler
 * Redis did not hold (an account added, enabled or connected, a resource
 * added, Redis emptied) also gets its first run queued at once, as before
 * the spread, then fires at its offset. A scheduler whose interval, offset or
 * pattern changed is replaced: removed with its next delayed run, then
 * upserted, so the next run follows the new schedule. Schedulers of targets
 * no longer wanted are removed.
 */
export async function upsertSchedules(
  queue: Queue<SyncJobData>,
  config: ScheduleConfig,
  targets: readonly ScheduleTarget[],
  only?: ReadonlySet<string>,
): Promise<ScheduleChanges> {
  const present = await queue.getJobSchedulers();
  const held = new Set(present.map((s) => s.key ?? s.id ?? ''));
  const changed = new Set(changedSchedules(config, targets, present));
  const wanted = wantedOf(config, targets);
  const upserted: string[] = [];
  const replaced: string[] = [];
  const started: string[] = [];
  for (const { key, repeat, requested, target } of wanted) {
    if (only && !only.has(key) && !changed.has(key)) continue;
    const name = runKey(target.account, target.resource);
    const data: SyncJobData = {
      ...(target.account === DEFAULT_ACCOUNT ? {} : { account: target.account }),
      resource: target.resource,
      requested,
      origin: 'schedule',
    };
    if (changed.has(key)) {
      await queue.removeJobScheduler(key);
      replaced.push(key);
    }
    // The name is the run key: the queue's repeat strategy derives the full offset from it.
    await queue.upsertJobScheduler(key, repeat, { name, data, opts: runJobOptions(config) });
    upserted.push(key);
    if ('every' in repeat && !held.has(key)) {
      // One job per key until it ends, whichever replica queues it.
      await queue.add(name, data, {
        ...runJobOptions(config),
        deduplication: { id: `first:${name}` },
      });
      started.push(key);
    }
  }
  const keys = new Set(wanted.map((w) => w.key));
  const removed: string[] = [];
  for (const scheduler of present) {
    const key = scheduler.key ?? scheduler.id;
    if (key && isScheduleKey(key) && !keys.has(key)) {
      await queue.removeJobScheduler(key);
      removed.push(key);
    }
  }
  return { upserted, replaced, removed, started };
}
