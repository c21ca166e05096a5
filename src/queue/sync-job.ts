import { type Job, Queue } from 'bullmq';
import { DEFAULT_ACCOUNT, runKey } from '../account-name.js';
import type { ResourceName } from '../config/load-config.js';
import type { Config } from '../config/types.js';
import type { RedisConnection } from '../redis/connect.js';
import type { RequestedMode, RunSummary } from '../sync/run-resource.js';
import { fullWindowStrategy } from './schedule-offsets.js';

export const QUEUE_NAME = 'sync';

/** A job: one run of one resource of one account. */
export interface SyncJobData {
  /** The account; absent on jobs queued before accounts existed, which are `default`'s. */
  account?: string;
  resource: ResourceName;
  requested: RequestedMode;
  /**
   * Who asked: the `sync` command, a schedule, a worker resuming a
   * checkpoint, a webhook event naming the resource (an incremental run), or
   * an operator's "sync now" in the console (an incremental run).
   */
  origin: 'cli' | 'schedule' | 'resume' | 'webhook' | 'console';
  /**
   * A full run may soft-delete more than HIRESYNC_MAX_DELETE_FRACTION of the
   * resource's live rows. Set only by `sync --full --allow-mass-delete`.
   */
  allowMassDelete?: boolean;
  /** How many times this job found its resource busy and waited (its backoff); set by the processor. */
  busyWaits?: number;
  /**
   * The run an attempt of this job failed at, to be retried from its
   * checkpoint (`status` names the failure beside the run); set by the processor.
   */
  failedRun?: string;
  /**
   * The run this job's attempt was interrupted at (shutdown, the run lock
   * lost: no attempt spent), to be resumed from its checkpoint; with how many
   * times and the last reason (`status` names them beside the run).
   */
  interruptedRun?: string;
  interruptions?: number;
  lastInterruption?: string;
}

/** What a job returns: its run's summary, or why it ran nothing. */
export type SyncJobResult = (RunSummary & { account: string }) | { skipped: string };

export type SyncJob = Job<SyncJobData, SyncJobResult>;

/** The account of a job. */
export function accountOf(data: SyncJobData): string {
  return data.account ?? DEFAULT_ACCOUNT;
}

/** Options of {@link createSyncQueue}. */
export interface SyncQueueOptions {
  /**
   * HIRESYNC_FULL_WINDOW, for a queue that upserts the schedulers
   * (upsertSchedules): its full runs fire at their cron's times plus their
   * offset within it. Default 0 (at the cron's times), enough for a queue
   * that only queues runs or removes schedulers.
   */
  fullWindowMs?: number;
}

/** The queue `name` (default the shared queue of scheduled and resumed runs). */
export function createSyncQueue(
  connection: RedisConnection,
  prefix: string,
  name: string = QUEUE_NAME,
  options: SyncQueueOptions = {},
): Queue<SyncJobData> {
  return new Queue<SyncJobData>(name, {
    connection,
    prefix,
    settings: { repeatStrategy: fullWindowStrategy(options.fullWindowMs ?? 0) },
  });
}

/** Job options of every run: bounded retries with exponential backoff. */
export function runJobOptions(config: Pick<Config, 'runAttempts' | 'runBackoffMs'>) {
  return {
    attempts: config.runAttempts,
    backoff: { type: 'exponential' as const, delay: config.runBackoffMs },
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 1000 },
  };
}

/** The deduplication id of a run of `data`'s origin, or undefined for an origin whose runs are not deduplicated. */
export function deduplicationIdOf(data: SyncJobData): string | undefined {
  const key = runKey(accountOf(data), data.resource);
  return data.origin === 'resume' || data.origin === 'webhook' || data.origin === 'console'
    ? `${data.origin}:${key}`
    : undefined;
}

/**
 * Queues a run. Resume jobs are deduplicated by (account, resource): one is
 * enough. So are a webhook's runs while one waits in the queue; while one is
 * running, one more is kept for after it (BullMQ's `keepLastIfActive`), as
 * the running one may have read past what the event changed. A console's
 * "sync now" is deduplicated until its run ends: pressing it again while one
 * waits or runs queues nothing more. The run lock,
 * not the queue, guarantees one run per (account, resource) at a time, so a
 * `sync` after a crash need not wait for the dead job's queue lock to expire.
 */
export async function enqueueRun(
  queue: Queue<SyncJobData>,
  data: SyncJobData,
  config: Pick<Config, 'runAttempts' | 'runBackoffMs'>,
): Promise<SyncJob> {
  const key = runKey(accountOf(data), data.resource);
  const id = deduplicationIdOf(data);
  return (await queue.add(key, data, {
    ...runJobOptions(config),
    ...(id === undefined
      ? {}
      : {
          deduplication: { id, ...(data.origin === 'webhook' ? { keepLastIfActive: true } : {}) },
        }),
  })) as SyncJob;
}
