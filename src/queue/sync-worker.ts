import { DelayedError, Worker } from 'bullmq';
import { coerceError } from '../errors.js';
import type { RedisConnection } from '../redis/connect.js';
import { fullWindowStrategy } from './schedule-offsets.js';
import { QUEUE_NAME, type SyncJob, type SyncJobData, type SyncJobResult } from './sync-job.js';
import { createSyncProcessor, type SyncProcessorDeps } from './sync-processor.js';

/** What this process's worker saw of a job: kept so `sync` learns how its run ended even if Redis lost the job. */
export type JobSettlement =
  | { state: 'active' }
  | { state: 'completed'; result: SyncJobResult }
  | { state: 'failed'; error: string };

/** How many settlements a worker remembers. */
const MAX_SETTLEMENTS = 1000;

/** The BullMQ worker of hiresync, with what it saw of each job it processed. */
export type SyncWorker = Worker<SyncJobData, SyncJobResult> & {
  /** By job id, newest last; bounded. */
  settlements: Map<string, JobSettlement>;
};

/** Options of {@link createSyncWorker}. */
export interface SyncWorkerOptions {
  /** Jobs processed at once. */
  concurrency: number;
  /** The queue it processes; default the shared queue ({@link QUEUE_NAME}). */
  queueName?: string;
  /**
   * HIRESYNC_FULL_WINDOW: the worker moves a full scheduler on to its
   * cron's next time plus its offset within this window, as the queue that
   * upserted it did. Default 0.
   */
  fullWindowMs?: number;
  /**
   * How long a job stays active without its worker renewing its lock (BullMQ's
   * lockDuration, renewed every half of it); the stalled-job check runs every
   * half of it too (at most 30 s), so a job of a worker that vanished (killed,
   * its host cut off) is back in the queue within 1.5 times this. Default 60 s.
   */
  jobLockMs?: number;
}

/** A BullMQ worker running the processor; one job per resource at a time, resources in parallel. */
export function createSyncWorker(
  connection: RedisConnection,
  prefix: string,
  deps: SyncProcessorDeps,
  options: SyncWorkerOptions,
): SyncWorker {
  return createJobWorker(connection, prefix, createSyncProcessor(deps), options);
}

/** What a worker runs for each job it takes: the sync processor, or a test's. */
export type JobProcessor = (job: SyncJob, token?: string) => Promise<SyncJobResult>;

/**
 * Renews the lock of the job taken with `token` every half of `lockMs` until
 * the returned function is called. BullMQ renews the locks of a worker's jobs
 * too, but by job id: when Redis was away for longer than the lock, the
 * stalled-job check hands the job out again, to this worker as well, while
 * the attempt that lost it is still ending here; that attempt's end then stops
 * BullMQ renewing the new attempt's lock, which lapses in its turn, and the
 * job, stalled twice, fails ("job stalled more than allowable limit") though
 * its run goes on. Each attempt therefore keeps its own lock (a renewal with
 * a token that no longer holds the lock changes nothing).
 */
function keepJobLock(job: SyncJob, token: string | undefined, lockMs: number): () => void {
  if (token === undefined) return () => {};
  let renewing = false;
  const timer = setInterval(() => {
    // A renewal waiting for Redis to come back is not stacked on.
    if (renewing) return;
    renewing = true;
    job
      .extendLock(token, lockMs)
      .catch(() => 0)
      .finally(() => {
        renewing = false;
      });
  }, lockMs / 2);
  timer.unref();
  return () => clearInterval(timer);
}

/** A BullMQ worker running `processor`, with what it saw of each job (see {@link createSyncWorker}). */
export function createJobWorker(
  connection: RedisConnection,
  prefix: string,
  processor: JobProcessor,
  options: SyncWorkerOptions,
): SyncWorker {
  const jobLockMs = options.jobLockMs ?? 60_000;
  const settlements = new Map<string, JobSettlement>();
  /** The attempt in hand of each job this worker is running. */
  const attempts = new Map<string, symbol>();
  const settle = (id: string | undefined, settlement: JobSettlement | undefined) => {
    if (id === undefined) return;
    settlements.delete(id);
    if (settlement) settlements.set(id, settlement);
    while (settlements.size > MAX_SETTLEMENTS) {
      settlements.delete(settlements.keys().next().value as string);
    }
  };
  const worker = new Worker<SyncJobData, SyncJobResult>(
    options.queueName ?? QUEUE_NAME,
    async (job: SyncJob, token?: string) => {
      // The job may be handed out again while an attempt that lost its lock
      // is still ending here (keepJobLock): only the newest attempt settles it.
      const attempt = Symbol(job.id);
      if (job.id !== undefined) attempts.set(job.id, attempt);
      const settleOwn = (settlement: JobSettlement | undefined) => {
        if (job.id !== undefined && attempts.get(job.id) === attempt) settle(job.id, settlement);
      };
      settleOwn({ state: 'active' });
      const releaseLock = keepJobLock(job, token, jobLockMs);
      try {
        const result = await processor(job, token);
        settleOwn({ state: 'completed', result });
        return result;
      } catch (error) {
        // A delayed job goes back to the queue: it has not ended.
        settleOwn(
          error instanceof DelayedError
            ? undefined
            : { state: 'failed', error: coerceError(error).message },
        );
        throw error;
      } finally {
        releaseLock();
        if (job.id !== undefined && attempts.get(job.id) === attempt) attempts.delete(job.id);
      }
    },
    {
      connection,
      prefix,
      concurrency: options.concurrency,
      // A page can take a while behind a long Retry-After; the lock is renewed meanwhile.
      lockDuration: jobLockMs,
      stalledInterval: Math.min(30_000, jobLockMs / 2),
      settings: { repeatStrategy: fullWindowStrategy(options.fullWindowMs ?? 0) },
    },
  );
  return Object.assign(worker, { settlements });
}
