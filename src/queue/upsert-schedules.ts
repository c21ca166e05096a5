import type { Queue } from 'bullmq';
import { DEFAULT_ACCOUNT, runKey } from '../account-name.js';
import type { Config } from '../config/types.js';
import type { ResourceName } from '../config.js';
import { runJobOptions, type SyncJobData } from './sync-job.js';

/** One (account, resource) the schedules cover. */
export interface ScheduleTarget {
  account: string;
  resource: ResourceName;
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

/** What {@link upsertSchedules} changed. */
export interface ScheduleChanges {
  /** Keys upserted. */
  upserted: string[];
  /** Keys of schedulers removed: their account was disabled or removed, or the resource is no longer configured. */
  removed: string[];
}

/**
 * Keeps the schedules of `targets`: an incremental run of each every
 * HIRESYNC_INCREMENTAL_EVERY and a full run on HIRESYNC_FULL_CRON. Upserts
 * are idempotent across restarts and replicas; with `only`, just those keys
 * are upserted (the others are known to be there). Schedulers of targets no
 * longer wanted are removed.
 */
export async function upsertSchedules(
  queue: Queue<SyncJobData>,
  config: Pick<Config, 'incrementalEveryMs' | 'fullCron' | 'runAttempts' | 'runBackoffMs'>,
  targets: readonly ScheduleTarget[],
  only?: ReadonlySet<string>,
): Promise<ScheduleChanges> {
  const wanted = new Set<string>();
  const upserted: string[] = [];
  for (const { account, resource } of targets) {
    const key = runKey(account, resource);
    const data = account === DEFAULT_ACCOUNT ? { resource } : { account, resource };
    const schedules = [
      [`incremental:${key}`, { every: config.incrementalEveryMs }, 'auto'],
      [`full:${key}`, { pattern: config.fullCron }, 'full'],
    ] as const;
    for (const [scheduler, repeat, requested] of schedules) {
      wanted.add(scheduler);
      if (only && !only.has(scheduler)) continue;
      await queue.upsertJobScheduler(scheduler, repeat, {
        name: key,
        data: { ...data, requested, origin: 'schedule' },
        opts: runJobOptions(config),
      });
      upserted.push(scheduler);
    }
  }
  const removed: string[] = [];
  for (const scheduler of await queue.getJobSchedulers()) {
    const key = scheduler.key ?? scheduler.id;
    if (key && isScheduleKey(key) && !wanted.has(key)) {
      await queue.removeJobScheduler(key);
      removed.push(key);
    }
  }
  return { upserted, removed };
}
