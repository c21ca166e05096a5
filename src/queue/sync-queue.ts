import { DelayedError, type Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { DEFAULT_ACCOUNT, runKey } from '../account-name.js';
import { AccountUnavailableError } from '../accounts/account.js';
import { SecretKeyError } from '../accounts/secret-box.js';
import type { Config } from '../config/types.js';
import type { ResourceName } from '../config.js';
import {
  ApiError,
  ConfigError,
  CrossOriginLinkError,
  coerceError,
  HiresyncError,
  PaginationLoopError,
  ReauthorizationRequiredError,
  RedirectedError,
  ResponseTooLargeError,
  RunInterruptedError,
  SlotYieldError,
  UnexpectedBodyError,
} from '../errors.js';
import type { Logger } from '../logger.js';
import { redactError, redactSecrets } from '../secret.js';
import type { CheckpointStore, PageSource, RunStore } from '../sync/ports.js';
import {
  type RequestedMode,
  type RunMetrics,
  type RunProgress,
  type RunSummary,
  runResource,
} from '../sync/run-resource.js';
import type { RunLock } from './run-lock.js';

export const QUEUE_NAME = 'sync';

/** A job: one run of one resource of one account. */
export interface SyncJobData {
  /** The account; absent on jobs queued before accounts existed, which are `default`'s. */
  account?: string;
  resource: ResourceName;
  requested: RequestedMode;
  /** Who asked: the `sync` command, a schedule, or a worker resuming a checkpoint. */
  origin: 'cli' | 'schedule' | 'resume';
  /**
   * A full run may soft-delete more than HIRESYNC_MAX_DELETE_FRACTION of the
   * resource's live rows. Set only by `sync --full --allow-mass-delete`.
   */
  allowMassDelete?: boolean;
  /** How many times this job found its resource busy and waited (its backoff); set by the processor. */
  busyWaits?: number;
}

/** What a job returns: its run's summary, or why it ran nothing. */
export type SyncJobResult = (RunSummary & { account: string }) | { skipped: string };

export type SyncJob = Job<SyncJobData, SyncJobResult>;

/** The account of a job. */
export function accountOf(data: SyncJobData): string {
  return data.account ?? DEFAULT_ACCOUNT;
}

/** The queue `name` (default the shared queue of scheduled and resumed runs). */
export function createSyncQueue(
  connection: Redis,
  prefix: string,
  name: string = QUEUE_NAME,
): Queue<SyncJobData> {
  return new Queue<SyncJobData>(name, { connection, prefix });
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

/**
 * Queues a run. Resume jobs are deduplicated by (account, resource): one is
 * enough. The run lock, not the queue, guarantees one run per (account,
 * resource) at a time, so a `sync` after a crash need not wait for the dead
 * job's queue lock to expire.
 */
export async function enqueueRun(
  queue: Queue<SyncJobData>,
  data: SyncJobData,
  config: Pick<Config, 'runAttempts' | 'runBackoffMs'>,
): Promise<SyncJob> {
  const key = runKey(accountOf(data), data.resource);
  return (await queue.add(key, data, {
    ...runJobOptions(config),
    ...(data.origin === 'resume' ? { deduplication: { id: `resume:${key}` } } : {}),
  })) as SyncJob;
}

/** Errors a retry cannot cure: the run fails at once. */
export function isUnrecoverable(error: unknown): boolean {
  // The deletion guard (src/warehouse/sync-runs.ts) will say the same on every attempt.
  if (error instanceof Error && error.name === 'DeletionGuardError') return true;
  // Sealed credentials no configured HIRESYNC_SECRET_KEY opens: the same on every attempt.
  if (error instanceof SecretKeyError) return true;
  // A partner account whose authorization is gone: only the customer can restore it.
  if (error instanceof ReauthorizationRequiredError) return true;
  if (
    error instanceof ConfigError ||
    error instanceof CrossOriginLinkError ||
    error instanceof PaginationLoopError
  ) {
    return true;
  }
  // A body that is not a list, or a redirect: the same URL answers the same
  // way on a retry; the message says what to fix.
  if (error instanceof UnexpectedBodyError || error instanceof RedirectedError) return true;
  // Too large a page fails the run's attempt (the contract): the page may be
  // smaller on a later attempt; the attempts are bounded all the same.
  if (error instanceof ResponseTooLargeError) return false;
  // 401 after a renewal, 403, 422 and other 4xx: the API said no, and will again.
  return (
    error instanceof ApiError &&
    error.status >= 400 &&
    error.status < 500 &&
    // 408 (the server timed the request out) and 429 pass: a retry may succeed.
    error.status !== 408 &&
    error.status !== 429
  );
}

/** First wait of a job whose resource is busy; it doubles on each wait, up to {@link BUSY_MAX_DELAY_MS}. */
export const BUSY_FIRST_DELAY_MS = 2000;
export const BUSY_MAX_DELAY_MS = 60_000;

/** How long a job waits after finding its resource busy for the `waits + 1`th time: 2 s, 4 s, 8 s, … 60 s. */
export function busyDelayMs(waits: number): number {
  return Math.min(BUSY_FIRST_DELAY_MS * 2 ** Math.max(0, waits), BUSY_MAX_DELAY_MS);
}

/** What a run of one account runs on: its API, its schema, its checkpoints. */
export interface AccountContext {
  source: PageSource;
  store: RunStore;
  checkpoints: CheckpointStore;
  /** The process's metrics, labelled with the account. */
  metrics?: RunMetrics & { onNeedsReauthorization?(needed: boolean): void };
  /** Obtains a new access token now: the keep-alive of a partner account's refresh token. */
  renewToken?: () => Promise<void>;
}

/**
 * Why a run ends failed when Redis lost its job mid-run (a FLUSHALL, the
 * prefix's keys deleted, a failover to an empty replica): the job cannot go
 * back to the queue, so nothing would ever resume or finish the run.
 */
export const QUEUE_STATE_LOST =
  "the queue's state was lost: Redis lost this run's job while it ran (a FLUSHALL or FLUSHDB, " +
  'keys under HIRESYNC_REDIS_PREFIX deleted, or a failover to a replica without them), so the run ' +
  'could not go back to the queue; run sync again (a new run starts from its first page), and give ' +
  'Redis persistence (AOF) so a restart keeps the queue';

/** Is the job gone from Redis (its keys lost)? A Redis that does not answer says nothing: false. */
async function jobGone(job: SyncJob): Promise<boolean> {
  return (await job.getState().catch(() => undefined)) === 'unknown';
}

/**
 * Puts the job back in the queue, delayed until `at`. Resolves false when the
 * job is gone from Redis (nothing can put it back), and throws any other error.
 */
async function putBack(job: SyncJob, at: number, token: string | undefined): Promise<boolean> {
  try {
    await job.moveToDelayed(at, token);
    return true;
  } catch (error) {
    if (await jobGone(job)) return false;
    throw error;
  }
}

/** What the processor needs. */
export interface SyncProcessorDeps {
  /**
   * The context of an account's runs. Throws AccountUnavailableError for an
   * account that must run nothing, or another error (its credentials cannot
   * be opened) that fails the job at once.
   */
  accounts: (account: string) => Promise<AccountContext>;
  runLock: RunLock;
  logger: Logger;
  /** Aborted on shutdown: runs stop after the page in hand. */
  shutdown: AbortSignal;
  onProgress?: (progress: RunProgress & { account: string }) => void;
  /** HIRESYNC_MAX_SLOT_WAIT: a longer rate-limit wait gives the slot up (SlotYieldError). */
  maxSlotWaitMs?: number;
  /** Incremental runs' updated filter (HIRESYNC_UPDATED_FILTER, _LOOKBACK), if configured. */
  updatedFilter?: { template: string; lookbackMs: number } | undefined;
  /** `HIRESYNC_UPDATED_LOOKBACK`: a larger skew of the API's clock is logged as a warning (see RunResourceOptions). */
  maxClockSkewMs?: number | undefined;
}

/**
 * The job processor, and the one place where errors become queue behaviour:
 * - a resume job whose checkpoint is gone once it holds the lock (another
 *   job resumed and finished the run meanwhile): it runs nothing;
 * - another process runs the resource: the job waits (delayed, backing off
 *   from 2 s to 60 s, logged at info once per job), or a scheduled
 *   incremental run is skipped, as the running one covers it;
 * - shutdown, or the run lock lost (Redis lost the key, another owner took
 *   it, or it could not be renewed within its TTL): the run stops after the
 *   page in hand, which is checkpointed; the job goes back to the queue
 *   (delayed, no attempt used) for the next worker to resume, as BullMQ does
 *   with a job whose own lock was lost;
 * - the job gone from Redis (its keys lost mid-run): nothing can put it back
 *   or retry it, so the run is recorded as failed ({@link QUEUE_STATE_LOST})
 *   and its checkpoint cleared;
 * - an error a retry cannot cure (403, 422, 401 after renewal, a foreign next
 *   link, a loop): the run is recorded as failed, UnrecoverableError;
 * - anything else: retried with backoff from the checkpoint, and recorded as
 *   failed once the attempts are spent.
 */
export function createSyncProcessor(deps: SyncProcessorDeps) {
  return async (job: SyncJob, token?: string): Promise<SyncJobResult> => {
    const { resource, requested, origin } = job.data;
    const account = accountOf(job.data);
    const logger = deps.logger.child({
      account,
      resource,
      jobId: job.id,
      attempt: job.attemptsMade + 1,
    });
    let context: AccountContext;
    try {
      context = await deps.accounts(account);
    } catch (error) {
      if (error instanceof AccountUnavailableError) {
        logger.info({ reason: error.message }, 'account runs nothing now; skipping this job');
        return { skipped: error.message };
      }
      if (!isUnrecoverable(error)) throw error; // Postgres away: retried like any attempt
      const message = redactSecrets(coerceError(error).message);
      logger.error({ err: error }, 'run failed: the account cannot be prepared');
      throw new UnrecoverableError(message);
    }
    const lock = await deps.runLock.acquire(runKey(account, resource));
    if (!lock) {
      if (origin === 'schedule' && requested === 'auto') {
        logger.info('resource already running elsewhere; skipping this scheduled incremental run');
        return { skipped: 'already running' };
      }
      // A long run elsewhere would otherwise wake this job, and the log, every 2 s for hours.
      const waits = job.data.busyWaits ?? 0;
      const delayMs = busyDelayMs(waits);
      if (waits === 0) logger.info({ delayMs }, 'resource already running elsewhere; waiting');
      else logger.debug({ delayMs, waits }, 'resource still running elsewhere; waiting');
      await job.updateData({ ...job.data, busyWaits: waits + 1 });
      await job.moveToDelayed(Date.now() + delayMs, token);
      throw new DelayedError(`${runKey(account, resource)} is already running`);
    }
    const onLost = () =>
      logger.warn(
        { reason: coerceError(lock.lost.reason).message },
        'run lock lost; stopping after the page in hand',
      );
    lock.lost.addEventListener('abort', onLost, { once: true });
    const { checkpoints, store, metrics } = context;
    /** The run of this attempt, once a page of it is committed. */
    let runId: string | undefined;
    /**
     * Records the run as failed (the run of this attempt, else the one its
     * checkpoint names) and clears its checkpoint: no attempt will follow.
     */
    const failRun = async (error: unknown, message: string) => {
      const pending = await checkpoints.load(resource);
      const failed = runId ?? pending?.runId;
      if (failed !== undefined)
        await store.finishRun(failed, { outcome: 'failed', error: message });
      if (pending && pending.runId === failed) await checkpoints.clear(resource);
      const seconds = (Date.now() - (job.processedOn ?? Date.now())) / 1000;
      metrics?.onRunFinished?.(resource, pending?.mode ?? 'full', 'failed', seconds);
      if (error instanceof ReauthorizationRequiredError) metrics?.onNeedsReauthorization?.(true);
      logger.error({ err: error, runId: failed }, 'run failed');
    };
    /** The job is gone from Redis: the run ends failed, and the job with it. */
    const failLost = async (error: unknown): Promise<never> => {
      await failRun(error, QUEUE_STATE_LOST);
      throw new UnrecoverableError(QUEUE_STATE_LOST);
    };
    try {
      if (origin === 'resume' && !(await checkpoints.load(resource))) {
        // Its run was resumed and finished by another job (a schedule's, a
        // sync's) while this one waited: a resume job never starts a new run.
        logger.info('no checkpoint pending any more; nothing to resume');
        return { skipped: 'nothing to resume' };
      }
      if (job.data.busyWaits !== undefined) {
        // The next wait (after an interruption, or a retry) starts short again.
        const { busyWaits: _, ...data } = job.data;
        await job.updateData(data).catch(() => {});
      }
      const onProgress = deps.onProgress;
      const summary = await runResource({
        resource,
        requested,
        source: context.source,
        store,
        checkpoints,
        logger,
        // A lost lock stops the run as a shutdown does: another worker may hold it now.
        signal: AbortSignal.any([deps.shutdown, lock.lost]),
        metrics,
        onProgress: (progress) => {
          runId = progress.runId;
          onProgress?.({ ...progress, account });
        },
        allowMassDelete: job.data.allowMassDelete === true,
        updatedFilter: deps.updatedFilter,
        maxClockSkewMs: deps.maxClockSkewMs,
        maxSlotWaitMs: deps.maxSlotWaitMs,
      });
      return { ...summary, account };
    } catch (error) {
      if (error instanceof RunInterruptedError) {
        if (!(await putBack(job, Date.now() + 1000, token))) return await failLost(error);
        logger.info(
          { reason: error.message },
          'run interrupted; checkpoint kept, job back in the queue',
        );
        throw new DelayedError(error.message);
      }
      if (error instanceof AccountUnavailableError) {
        // Disabled or removed while the run was in flight: it stopped before
        // writing the page in hand; a disabled account's checkpoint stays.
        logger.info({ reason: error.message }, 'account runs nothing now; run stopped');
        return { skipped: error.message };
      }
      if (error instanceof SlotYieldError) {
        // The account's rate limit, not this worker, holds the run up: its
        // slot goes to other accounts' runs, and it resumes from its checkpoint.
        if (!(await putBack(job, error.resumeAt, token))) return await failLost(error);
        logger.info(
          { reason: error.message, resumeInMs: Math.max(0, error.resumeAt - Date.now()) },
          'run waiting for its rate limit off the worker slot; checkpoint kept',
        );
        throw new DelayedError(error.message);
      }
      const unrecoverable = isUnrecoverable(error);
      const final = unrecoverable || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      // A retry needs the job: gone from Redis, nothing would ever retry or finish the run.
      if (!final && (await jobGone(job))) return await failLost(error);
      // The API may echo a token or credential in its error text: nothing stored
      // (sync_runs.error, the job's failedReason and stacktrace) may carry it.
      const message = redactSecrets(coerceError(error).message);
      if (final) {
        await failRun(error, message);
      } else {
        logger.warn({ err: error }, 'run attempt failed; retrying from its checkpoint');
      }
      if (unrecoverable) {
        const thrown = new UnrecoverableError(message);
        thrown.stack = redactSecrets(thrown.stack ?? message);
        throw thrown;
      }
      throw error instanceof Error ? redactError(error) : new HiresyncError(message);
    } finally {
      lock.lost.removeEventListener('abort', onLost);
      await lock.release();
    }
  };
}

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
}

/** A BullMQ worker running the processor; one job per resource at a time, resources in parallel. */
export function createSyncWorker(
  connection: Redis,
  prefix: string,
  deps: SyncProcessorDeps,
  options: SyncWorkerOptions,
): SyncWorker {
  const processor = createSyncProcessor(deps);
  const settlements = new Map<string, JobSettlement>();
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
      settle(job.id, { state: 'active' });
      try {
        const result = await processor(job, token);
        settle(job.id, { state: 'completed', result });
        return result;
      } catch (error) {
        // A delayed job goes back to the queue: it has not ended.
        settle(
          job.id,
          error instanceof DelayedError
            ? undefined
            : { state: 'failed', error: coerceError(error).message },
        );
        throw error;
      }
    },
    {
      connection,
      prefix,
      concurrency: options.concurrency,
      // A page can take a while behind a long Retry-After; the lock is renewed meanwhile.
      lockDuration: 60_000,
    },
  );
  return Object.assign(worker, { settlements });
}

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
