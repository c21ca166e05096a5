import type { Queue } from 'bullmq';
import { DEFAULT_ACCOUNT, runKey } from '../account-name.js';
import type { Config } from '../config/types.js';
import type { ResourceName } from '../config.js';
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
  'incrementalEveryMs' | 'fullCron' | 'runAttempts' | 'runBackoffMs'
>;

/** A scheduler as kept: its key and how it repeats. */
interface Wanted {
  key: string;
  repeat: { every: number } | { pattern: string };
  requested: 'auto' | 'full';
  target: ScheduleTarget;
}

/** The schedulers of `targets`: an incremental one and a full one each, with their repeat. */
function wantedOf(config: ScheduleConfig, targets: readonly ScheduleTarget[]): Wanted[] {
  return targets.flatMap((target) => {
    const key = runKey(target.account, target.resource);
    return [
      {
        key: `incremental:${key}`,
        repeat: { every: target.incrementalEveryMs ?? config.incrementalEveryMs },
        requested: 'auto',
        target,
      },
      {
        key: `full:${key}`,
        repeat: { pattern: target.fullCron ?? config.fullCron },
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

/** Is `key` the key of a scheduler hiresync keeps? */
function isScheduleKey(key: string): boolean {
  return /^(incremental|full):/.test(key);
}

/** A scheduler as BullMQ lists it (getJobSchedulers). */
export interface ListedScheduler {
  key?: string | undefined;
  id?: string | null | undefined;
  every?: number | undefined;
  pattern?: string | null | undefined;
}

/**
 * Keys of the schedulers of `targets` that Redis holds with another interval
 * or cron pattern than wanted (an account's settings, or the deployment's
 * HIRESYNC_INCREMENTAL_EVERY or HIRESYNC_FULL_CRON, changed).
 */
export function changedSchedules(
  config: ScheduleConfig,
  targets: readonly ScheduleTarget[],
  present: readonly ListedScheduler[],
): string[] {
  const byKey = new Map(present.map((s) => [s.key ?? s.id ?? '', s]));
  return wantedOf(config, targets)
    .filter(({ key, repeat }) => {
      const held = byKey.get(key);
      if (!held) return false;
      return 'every' in repeat ? held.every !== repeat.every : held.pattern !== repeat.pattern;
    })
    .map((w) => w.key);
}

/** What {@link upsertSchedules} changed. */
export interface ScheduleChanges {
  /** Keys upserted. */
  upserted: string[];
  /** Keys of schedulers replaced (removed, then upserted) because their interval or cron changed. */
  replaced: string[];
  /** Keys of schedulers removed: their account was disabled or removed, or the resource is no longer configured. */
  removed: string[];
}

/**
 * Keeps the schedules of `targets`: an incremental run of each every
 * target's interval (default HIRESYNC_INCREMENTAL_EVERY) and a full run on
 * its cron pattern (default HIRESYNC_FULL_CRON). Upserts are idempotent
 * across restarts and replicas; with `only`, just those keys are upserted
 * (the others are known to be there). A scheduler whose interval or pattern
 * changed is replaced: removed with its next delayed run, then upserted, so
 * the next run follows the new schedule. Schedulers of targets no longer
 * wanted are removed.
 */
export async function upsertSchedules(
  queue: Queue<SyncJobData>,
  config: ScheduleConfig,
  targets: readonly ScheduleTarget[],
  only?: ReadonlySet<string>,
): Promise<ScheduleChanges> {
  const present = await queue.getJobSchedulers();
  const changed = new Set(changedSchedules(config, targets, present));
  const wanted = wantedOf(config, targets);
  const upserted: string[] = [];
  const replaced: string[] = [];
  for (const { key, repeat, requested, target } of wanted) {
    if (only && !only.has(key) && !changed.has(key)) continue;
    const name = runKey(target.account, target.resource);
    const data =
      target.account === DEFAULT_ACCOUNT
        ? { resource: target.resource }
        : { account: target.account, resource: target.resource };
    if (changed.has(key)) {
      await queue.removeJobScheduler(key);
      replaced.push(key);
    }
    await queue.upsertJobScheduler(key, repeat, {
      name,
      data: { ...data, requested, origin: 'schedule' },
      opts: runJobOptions(config),
    });
    upserted.push(key);
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
  return { upserted, replaced, removed };
}
