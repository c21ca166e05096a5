import { type Job, Queue, Worker } from 'bullmq';
import type { Kysely } from 'kysely';
import { formatDuration } from '../config/fields.js';
import { HiresyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/connect.js';
import type { Database } from '../warehouse/tables.js';
import {
  type DeletedErasure,
  deletionCutoff,
  type ErasableAccount,
  eraseDeletedRecords,
} from '../warehouse/upkeep/erase-deleted.js';
import type { ErasableResource } from '../warehouse/upkeep/erase-records.js';
import { throttledWarn } from './throttled-warn.js';

/** The queue of the erasure of records deleted upstream: one job scheduler, one job a day. */
export const ERASE_QUEUE = 'erase';

/** Key (and job name) of its job scheduler. */
export const ERASE_SCHEDULER = 'erase-deleted';

/** How often it runs: daily (the first job at the worker start that turns it on). */
export const ERASE_EVERY_MS = 86_400_000;

/**
 * Longest wait, per transaction, for a sync run of the resource in progress
 * (which holds its resource until it ends); past it the resource is left
 * for a retry of the job.
 */
export const ERASE_WAIT_MS = 60_000;

/**
 * Attempts of a day's job: the (account, resource)s a run kept busy past the
 * wait, or that failed, are tried again with backoff (1, 2, 4 … 64 minutes:
 * about two hours in all), then at the next day's job.
 */
const ATTEMPTS = 8;
const BACKOFF_MS = 60_000;

/** A job's data: the (account, resource)s left by an earlier attempt, or all (none given). */
export interface EraseJobData {
  only?: Array<{ account: string; resource: string }>;
}

/** What a day's erasure needs. */
export interface EraseDeletedDeps {
  db: Kysely<Database>;
  /** HIRESYNC_ERASE_DELETED_AFTER. */
  afterMs: number;
  /** The resources of an account's schema (see erasableResourcesOf). */
  resourcesOf: (account: ErasableAccount) => Promise<readonly ErasableResource[]>;
  logger: Logger;
  /** Default {@link ERASE_WAIT_MS}. */
  waitMs?: number;
  /** Ids per transaction; default 1,000. */
  batchSize?: number;
}

/** The (account, resource)s a run kept busy or that failed: what the job's next attempt retries. */
export class ErasureIncompleteError extends HiresyncError {}

/**
 * One erasure of the records deleted upstream longer ago than
 * HIRESYNC_ERASE_DELETED_AFTER, across every account and resource (or
 * `only` those), each recorded in hiresync.erasures with the cutoff and the
 * setting as its note. Logs a line per (account, resource) that erased
 * something (info) or stopped short (warn; the others at debug), and one for
 * the whole. Returns what each did.
 */
export async function eraseDeletedOnce(
  deps: EraseDeletedDeps,
  only?: EraseJobData['only'],
  signal?: AbortSignal,
): Promise<DeletedErasure[]> {
  const { logger } = deps;
  const before = await deletionCutoff(deps.db, deps.afterMs);
  const setting = `HIRESYNC_ERASE_DELETED_AFTER=${formatDuration(deps.afterMs)}`;
  const results = await eraseDeletedRecords(deps.db, {
    before,
    note: `deleted upstream before ${before} (${setting})`,
    waitMs: deps.waitMs ?? ERASE_WAIT_MS,
    batchSize: deps.batchSize,
    signal,
    only,
    resourcesOf: deps.resourcesOf,
    onResult: ({ problem, ...counts }) => {
      const line = { ...counts, before };
      if (problem) {
        logger.warn(
          { ...line, reason: problem.message, busy: problem.kind === 'busy' },
          'erasure of records deleted upstream stopped short; retried',
        );
      } else if (counts.records > 0) {
        logger.info(line, 'records deleted upstream erased');
      } else {
        logger.debug(line, 'no record deleted upstream to erase');
      }
    },
  });
  const erased = results.reduce((n, r) => n + r.records, 0);
  logger.info(
    {
      before,
      records: erased,
      accounts: new Set(results.map((r) => r.account)).size,
      resources: results.length,
      stoppedShort: results.filter((r) => r.problem).length,
    },
    'erasure of records deleted upstream done',
  );
  return results;
}

/** Runs a job: what the earlier attempt left, or all; throws (to retry) what stopped short. */
async function processEraseJob(
  job: Job<EraseJobData>,
  deps: EraseDeletedDeps,
  signal: AbortSignal,
): Promise<{ records: number }> {
  const results = await eraseDeletedOnce(deps, job.data.only, signal);
  const short = results.filter((r) => r.problem);
  const records = results.reduce((n, r) => n + r.records, 0);
  if (short.length === 0) return { records };
  const left = short.map(({ account, resource }) => ({ account, resource }));
  await job.updateData({ only: left });
  const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  const names = left.map((t) => `${t.account}/${t.resource}`).join(', ');
  if (last) {
    deps.logger.error(
      { left: names },
      "erasure of records deleted upstream left resources busy or failing after every attempt; tomorrow's erasure tries them again",
    );
  }
  throw new ErasureIncompleteError(
    `${short.length} (account, resource) not erased yet (${names}): ${short[0]?.problem?.message ?? ''}`,
  );
}

/** The erasure schedule of a worker process; closed with the worker. */
export interface EraseSchedule {
  /** Stops after the transaction in hand; `force`: BullMQ's, waiting for nothing Redis must answer. */
  close: (force?: boolean) => Promise<void>;
}

/**
 * The daily erasure of records deleted upstream (HIRESYNC_ERASE_DELETED_AFTER):
 * a BullMQ job scheduler on a queue of its own, upserted by every worker
 * (one scheduler whatever their number; the first job at once, then every
 * 24 hours), and a worker of concurrency 1 per process. Unset
 * (`deps.afterMs` undefined), the scheduler and its next job are removed
 * (an operator who turns it off) and nothing is started.
 */
export async function startEraseSchedule(
  connection: RedisConnection,
  prefix: string,
  deps: Omit<EraseDeletedDeps, 'afterMs'> & { afterMs: number | undefined },
): Promise<EraseSchedule> {
  const queue = new Queue<EraseJobData>(ERASE_QUEUE, { connection, prefix });
  queue.on('error', throttledWarn(deps.logger, 'erasure queue error'));
  const { afterMs } = deps;
  if (afterMs === undefined) {
    try {
      if (await queue.removeJobScheduler(ERASE_SCHEDULER)) {
        deps.logger.info(
          'HIRESYNC_ERASE_DELETED_AFTER is unset: the erasure of records deleted upstream is no longer scheduled',
        );
      }
    } finally {
      await queue.close();
    }
    return { close: async () => {} };
  }
  await queue.upsertJobScheduler(
    ERASE_SCHEDULER,
    { every: ERASE_EVERY_MS },
    {
      name: ERASE_SCHEDULER,
      data: {},
      opts: {
        attempts: ATTEMPTS,
        backoff: { type: 'exponential', delay: BACKOFF_MS },
        removeOnComplete: { count: 10 },
        removeOnFail: { count: 10 },
      },
    },
  );
  const stop = new AbortController();
  const worker = new Worker<EraseJobData>(
    ERASE_QUEUE,
    (job) => processEraseJob(job, { ...deps, afterMs }, stop.signal),
    // A transaction may wait ERASE_WAIT_MS for its lock; the job's lock is renewed meanwhile.
    { connection, prefix, concurrency: 1, lockDuration: 2 * ERASE_WAIT_MS },
  );
  worker.on('error', throttledWarn(deps.logger, 'erasure worker error'));
  return {
    close: async (force = false) => {
      stop.abort(new Error('shutting down'));
      await worker.close(force);
      await queue.close();
    },
  };
}
