import { DelayedError, UnrecoverableError } from 'bullmq';
import type { Kysely } from 'kysely';
import { runKey } from '../account-name.js';
import { coerceError, HiresyncError, ReauthorizationRequiredError } from '../errors.js';
import type { Logger } from '../logger.js';
import { redactError, redactSecrets } from '../secret.js';
import { NotPermittedSkip } from '../sync/not-permitted.js';
import type {
  CheckpointStore,
  PageSource,
  ReadPlan,
  ResourceName,
  RunStore,
} from '../sync/ports.js';
import { type RunMetrics, type RunProgress, runResource } from '../sync/run-resource.js';
import type { Database } from '../warehouse/tables.js';
import { busyDelayMs } from './busy-delay.js';
import { jobBehaviourOf } from './error-policy.js';
import type { RunLock } from './run-lock.js';
import { SlotYield } from './slot-yield.js';
import { accountOf, type SyncJob, type SyncJobResult } from './sync-job.js';

/** What a run of one account runs on: its API, its store, its checkpoints, its reads. */
export interface AccountContext {
  source: PageSource;
  /** What a run of `resource` reads for this account (planRead), planned once per run. */
  plan: (resource: ResourceName) => ReadPlan;
  store: RunStore;
  /**
   * The store over the connection of a run's Postgres lock (see
   * HeldResourceLock.session): a run's statements then go through that one
   * connection. Without it, `store`.
   */
  pinned?: { over: (session: Kysely<Database>) => RunStore };
  checkpoints: CheckpointStore;
  /** The process's metrics, labelled with the account. */
  metrics?: RunMetrics & { onNeedsReauthorization?(needed: boolean): void };
  /** Obtains a new access token now: the keep-alive of a partner account's refresh token. */
  renewToken?: () => Promise<void>;
  /**
   * Makes sure an access token is at hand without forcing a new one (the one
   * in force needs no request): `sync`'s check that the token service can be
   * reached before the runs are queued. Ends when the process shuts down.
   */
  ensureToken?: () => Promise<void>;
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

/**
 * Says on the job which run was interrupted, how often and why (read by
 * status beside the run); nothing when the run is unknown or Redis refuses.
 */
async function noteInterruption({ job, runOf }: Attempt, reason: string): Promise<void> {
  const run = await runOf().catch(() => undefined);
  if (run === undefined) return;
  const before = job.data.interruptedRun === run ? (job.data.interruptions ?? 0) : 0;
  await job
    .updateData({
      ...job.data,
      interruptedRun: run,
      interruptions: before + 1,
      lastInterruption: reason,
    })
    .catch(() => {});
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
  /** HIRESYNC_MAX_SLOT_WAIT: a longer rate-limit wait gives the slot up (see SlotYield). */
  maxSlotWaitMs?: number;
}

/**
 * The context of the job's account, or the job's end: skipped for an account
 * that runs nothing now, failed at once when it cannot be prepared; any other
 * error (Postgres away) is thrown, to be retried like any attempt.
 */
async function contextOf(
  deps: SyncProcessorDeps,
  account: string,
  logger: Logger,
): Promise<AccountContext | { skipped: string }> {
  try {
    return await deps.accounts(account);
  } catch (error) {
    const behaviour = jobBehaviourOf(error);
    if (behaviour.action === 'skip') {
      const reason = coerceError(error).message;
      logger.info({ reason }, 'account runs nothing now; skipping this job');
      return { skipped: reason };
    }
    if (behaviour.action !== 'fail') throw error;
    const message = redactSecrets(coerceError(error).message);
    logger.error({ err: error }, 'run failed: the account cannot be prepared');
    throw new UnrecoverableError(message);
  }
}

/**
 * Another process runs the resource: a scheduled incremental run is skipped,
 * as the running one covers it; any other job waits, delayed with backoff.
 */
async function whileBusy(
  job: SyncJob,
  token: string | undefined,
  key: string,
  logger: Logger,
): Promise<SyncJobResult> {
  if (job.data.origin === 'schedule' && job.data.requested === 'auto') {
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
  throw new DelayedError(`${key} is already running`);
}

/** A job's attempt at its run, as its failure is settled. */
interface Attempt {
  job: SyncJob;
  token: string | undefined;
  logger: Logger;
  /** The run's signal: shutdown, the run lock lost, or the slot given up. */
  signal: AbortSignal;
  /**
   * Records the run as failed (the run of this attempt, else the one its
   * checkpoint names) and clears its checkpoint: no attempt will follow.
   */
  failRun: (error: unknown, message: string) => Promise<void>;
  /** The run of this attempt, else the one its checkpoint names. */
  runOf: () => Promise<string | undefined>;
}

/** The job is gone from Redis: the run ends failed, and the job with it. */
async function failLost(error: unknown, { failRun }: Attempt): Promise<never> {
  await failRun(error, QUEUE_STATE_LOST);
  throw new UnrecoverableError(QUEUE_STATE_LOST);
}

/** What becomes of a job whose run threw `error`, as the error policy says (see createSyncProcessor). */
async function settleFailure(error: unknown, attempt: Attempt): Promise<SyncJobResult> {
  const { job, token, logger, signal, failRun } = attempt;
  if (error instanceof NotPermittedSkip) {
    logger.info(
      { scope: error.scope },
      'not permitted (its last run was answered 403); skipping this scheduled incremental run until a full run succeeds',
    );
    return { skipped: error.message };
  }
  const behaviour = jobBehaviourOf(error, signal.aborted ? signal.reason : undefined);
  if (behaviour.action === 'resume-later') {
    const { message } = coerceError(error);
    if (!(await putBack(job, behaviour.at, token))) return await failLost(error, attempt);
    // Back in the queue first (a shutdown is waiting); then why it stopped (the
    // run lock lost, a shutdown) and where, for status.
    const why = signal.aborted ? `${coerceError(signal.reason).message}; ` : '';
    await noteInterruption(attempt, redactSecrets(`${why}${message}`));
    logger.info({ reason: message }, 'run interrupted; checkpoint kept, job back in the queue');
    throw new DelayedError(message);
  }
  if (behaviour.action === 'skip') {
    // Disabled or removed while the run was in flight: it stopped before
    // writing the page in hand; a disabled account's checkpoint stays.
    const reason = coerceError(error).message;
    logger.info({ reason }, 'account runs nothing now; run stopped');
    return { skipped: reason };
  }
  if (behaviour.action === 'yield-slot') {
    // The account's rate limit, not this worker, holds the run up: its
    // slot goes to other accounts' runs, and it resumes from its checkpoint.
    const { wait } = behaviour;
    if (!(await putBack(job, behaviour.at, token))) return await failLost(wait, attempt);
    logger.info(
      { reason: wait.message, resumeInMs: Math.max(0, behaviour.at - Date.now()) },
      'run waiting for its rate limit off the worker slot; checkpoint kept',
    );
    throw new DelayedError(wait.message);
  }
  const unrecoverable = behaviour.action === 'fail';
  const final = unrecoverable || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  // A retry needs the job: gone from Redis, nothing would ever retry or finish the run.
  if (!final && (await jobGone(job))) return await failLost(error, attempt);
  // The API may echo a token or credential in its error text: nothing stored
  // (sync_runs.error, the job's failedReason and stacktrace) may carry it.
  const message = redactSecrets(coerceError(error).message);
  if (final) {
    await failRun(error, message);
  } else {
    logger.warn({ err: error }, 'run attempt failed; retrying from its checkpoint');
    // The job's failedReason says why; this says which run (read by status).
    const run = await attempt.runOf().catch(() => undefined);
    if (run !== undefined) await job.updateData({ ...job.data, failedRun: run }).catch(() => {});
  }
  if (unrecoverable) {
    const thrown = new UnrecoverableError(message);
    thrown.stack = redactSecrets(thrown.stack ?? message);
    throw thrown;
  }
  throw error instanceof Error ? redactError(error) : new HiresyncError(message);
}

/**
 * The job processor: it carries out the error policy ({@link jobBehaviourOf},
 * the one place where errors become queue behaviour):
 * - a scheduled incremental run of a resource whose last run was refused
 *   403 (not permitted, src/sync/not-permitted.ts): skipped, logged once,
 *   until a full run succeeds;
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
 * - a rate-limit wait longer than HIRESYNC_MAX_SLOT_WAIT ({@link SlotYield}):
 *   the run stops the same way, and its job is delayed until the wait is
 *   over, so the slot serves other accounts' runs meanwhile;
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
    const context = await contextOf(deps, account, logger);
    if ('skipped' in context) return context;
    const lock = await deps.runLock.acquire(runKey(account, resource));
    if (!lock) return await whileBusy(job, token, runKey(account, resource), logger);
    const onLost = () =>
      logger.warn(
        { reason: coerceError(lock.lost.reason).message },
        'run lock lost; stopping after the page in hand',
      );
    lock.lost.addEventListener('abort', onLost, { once: true });
    const { checkpoints, store, metrics } = context;
    /** The run of this attempt, once a page of it is committed. */
    let runId: string | undefined;
    /** See {@link Attempt.failRun}. */
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
    const runOf = async () => runId ?? (await checkpoints.load(resource))?.runId;
    const slot = new SlotYield(deps.maxSlotWaitMs);
    // A lost lock stops the run as a shutdown does (another worker may hold it
    // now), and so does a rate-limit wait too long to spend on the slot.
    const signal = AbortSignal.any([deps.shutdown, lock.lost, slot.signal]);
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
      // The run's statements go through its lock's connection, one per run.
      const pinned = lock.session && context.pinned?.over(lock.session);
      const summary = await runResource(context.plan(resource), {
        requested,
        source: slot.watch(context.source),
        store: pinned ?? store,
        checkpoints,
        logger,
        signal,
        metrics,
        onProgress: (progress) => {
          runId = progress.runId;
          onProgress?.({ ...progress, account });
        },
        allowMassDelete: job.data.allowMassDelete === true,
        // A 403 answers the same until the scope is granted: only a full run
        // (its cron, or sync by hand) tries again, not every incremental tick
        // nor every webhook event.
        skipNotPermitted: (origin === 'schedule' || origin === 'webhook') && requested === 'auto',
      });
      return { ...summary, account };
    } catch (error) {
      return await settleFailure(error, { job, token, logger, signal, failRun, runOf });
    } finally {
      lock.lost.removeEventListener('abort', onLost);
      await lock.release();
    }
  };
}
