import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Queue, QueueEvents } from 'bullmq';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import type { ResourceName } from '../config/load-config.js';
import type { Config } from '../config/types.js';
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { duplicateConnection, type RedisConnection } from '../redis/connect.js';
import { redactSecrets } from '../secret.js';
import type { RequestedMode, RunSummary } from '../sync/run-resource.js';
import {
  accountOf,
  createSyncQueue,
  enqueueRun,
  type SyncJob,
  type SyncJobData,
  type SyncJobResult,
} from './sync-job.js';
import type { SyncWorker } from './sync-worker.js';
import { throttledWarn } from './throttled-warn.js';
import type { ScheduleTarget } from './upsert-schedules.js';

/** Queue names of `sync` commands: `sync-once-<uuid>`, one per command, obliterated at its end. */
export const ONCE_QUEUE_PREFIX = 'sync-once-';

/** What {@link runOnce} runs on (the App provides all of it). */
export interface RunOnceDeps {
  /** BullMQ's connection (maxRetriesPerRequest null); duplicated for the queue events. */
  queueRedis: RedisConnection;
  /** The Redis prefix, and the job options of every run. */
  config: Pick<Config, 'redisPrefix' | 'runAttempts' | 'runBackoffMs'>;
  logger: Logger;
  /** Aborted on SIGINT/SIGTERM: the runs stop after the page in hand and report `interrupted`. */
  shutdown: { readonly signal: AbortSignal };
  /** Starts a worker running the sync processor on the queue named `queueName` only. */
  startWorker: (queueName: string) => SyncWorker;
}

/** How one (account, resource)'s run ended. */
export type RunOnceOutcome =
  | { account: string; resource: ResourceName; ok: true; summary: RunSummary }
  | { account: string; resource: ResourceName; ok: false; error: string };

/** Options of {@link runOnce}. */
export interface RunOnceOptions {
  /** Let full runs soft-delete more than HIRESYNC_MAX_DELETE_FRACTION (`--allow-mass-delete`). */
  allowMassDelete?: boolean;
  /** How often the job's state is read from Redis, besides the queue events. Default 1 s. */
  pollMs?: number;
  /** How long a job may be missing from Redis, and unknown to this process, before it counts as lost. Default 5 s. */
  lostAfterMs?: number;
}

/** A job missing from Redis: its keys were lost (FLUSHDB, failover to an empty replica). */
function lostMessage(data: SyncJobData, jobId: string): string {
  const account = accountOf(data);
  const what = account === DEFAULT_ACCOUNT ? data.resource : `${data.resource} of ${account}`;
  return (
    `the queued run of ${what} (job ${jobId}) vanished from Redis before it finished ` +
    '(Redis lost its keys: FLUSHDB, or a failover to an empty replica?); ' +
    "its outcome is unknown: check 'hiresync status', and run sync again (it resumes from a checkpoint if one survived)"
  );
}

/**
 * Waits for a job by reading its state, the fallback to the queue events:
 * when Redis loses the job's keys, BullMQ can neither record its completion
 * nor publish the event, and `waitUntilFinished` would wait forever. A job
 * that is gone is settled by what this process's worker saw of it, else
 * reported as lost.
 */
async function pollJob(
  deps: RunOnceDeps,
  queue: Queue<SyncJobData>,
  worker: SyncWorker,
  job: SyncJob,
  options: RunOnceOptions,
  signal: AbortSignal,
): Promise<SyncJobResult> {
  const id = job.id as string;
  const pollMs = options.pollMs ?? 1000;
  const lostAfterMs = options.lostAfterMs ?? 5000;
  let missingSince: number | undefined;
  while (!signal.aborted) {
    await sleep(pollMs, undefined, { signal }).catch(() => {});
    if (signal.aborted) break;
    const state = await queue.getJobState(id).catch(() => undefined);
    if (state === 'completed') {
      const done = await queue.getJob(id);
      if (done) return done.returnvalue as SyncJobResult;
    } else if (state === 'failed') {
      const done = await queue.getJob(id);
      if (done) throw new Error(done.failedReason);
    }
    if (state !== 'unknown') {
      missingSince = undefined;
      continue;
    }
    const seen = worker.settlements.get(id);
    if (seen?.state === 'completed') return seen.result;
    if (seen?.state === 'failed') throw new Error(seen.error);
    if (seen?.state === 'active') continue; // still running here; it settles when it ends
    missingSince ??= Date.now();
    if (Date.now() - missingSince >= lostAfterMs) {
      deps.logger.error(
        { account: accountOf(job.data), resource: job.data.resource, jobId: id },
        'queued run lost from Redis',
      );
      throw new Error(lostMessage(job.data, id));
    }
  }
  return new Promise<never>(() => {}); // the abort outcome wins the race
}

/**
 * Removes a `sync` command's queue and everything in it (jobs an interruption
 * left delayed: their runs resume from their checkpoints). Gives up after
 * `timeoutMs` when Redis does not answer, leaving the keys behind.
 */
async function removeQueue(queue: Queue<SyncJobData>, logger: Logger, timeoutMs = 5000) {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      queue.obliterate({ force: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('Redis did not answer')), timeoutMs);
      }),
    ]);
  } catch (error) {
    logger.warn({ err: coerceError(error), queue: queue.name }, 'could not remove the sync queue');
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `hiresync sync`: one run of each (account, resource), queued to a queue of this command
 * only (`sync-once-<uuid>`) and processed by a worker of this process on that
 * queue only, waited for to the end; the queue is then removed. A deployment's
 * jobs in the shared queue are never taken; the run locks keep these runs from
 * overlapping the deployment's. Resolves early with `interrupted` outcomes when
 * the shutdown signal fires.
 */
export async function runOnce(
  deps: RunOnceDeps,
  /** What to run: (account, resource) pairs; a bare resource name is `default`'s. */
  runs: readonly (ScheduleTarget | ResourceName)[],
  requested: RequestedMode,
  options: RunOnceOptions = {},
): Promise<RunOnceOutcome[]> {
  const targets = runs.map((run) =>
    typeof run === 'string' ? { account: DEFAULT_ACCOUNT, resource: run } : run,
  );
  const prefix = deps.config.redisPrefix;
  const queueName = `${ONCE_QUEUE_PREFIX}${randomUUID()}`;
  const queue = createSyncQueue(deps.queueRedis, prefix, queueName);
  queue.on('error', throttledWarn(deps.logger, 'queue error'));
  const eventsRedis = duplicateConnection(deps.queueRedis);
  eventsRedis.on('error', () => {
    // Reconnection is ioredis's job; the main connections log the outage.
  });
  const events = new QueueEvents(queueName, { connection: eventsRedis, prefix });
  // Without a listener BullMQ prints each of its connection's errors raw on
  // stderr (console.error) all through a Redis outage or failover; the main
  // connections log the outage once.
  events.on('error', () => {});
  const stopPolling = new AbortController();
  // Each run waits with a listener on both: as many listeners as runs, which
  // is no leak (Node would warn past ten: four accounts' three resources).
  setMaxListeners(targets.length + 10, stopPolling.signal);
  events.setMaxListeners(targets.length + 10);
  queue.setMaxListeners(targets.length + 10);
  let worker: SyncWorker | undefined;
  try {
    await events.waitUntilReady();
    const started = deps.startWorker(queueName);
    worker = started;
    const jobs = await Promise.all(
      targets.map(({ account, resource }) =>
        enqueueRun(
          queue,
          {
            ...(account === DEFAULT_ACCOUNT ? {} : { account }),
            resource,
            requested,
            origin: 'cli',
            ...(options.allowMassDelete ? { allowMassDelete: true } : {}),
          },
          deps.config,
        ),
      ),
    );
    const signal = deps.shutdown.signal;
    const aborted = new Promise<'aborted'>((resolve) => {
      if (signal.aborted) resolve('aborted');
      signal.addEventListener('abort', () => resolve('aborted'));
    });
    return await Promise.all(
      jobs.map((job, i): Promise<RunOnceOutcome> => {
        const { account, resource } = targets[i] as ScheduleTarget;
        return Promise.race([
          job.waitUntilFinished(events) as Promise<SyncJobResult>,
          pollJob(deps, queue, started, job, options, stopPolling.signal),
          aborted,
        ]).then(
          (value): RunOnceOutcome =>
            value === 'aborted'
              ? { account, resource, ok: false, error: 'interrupted' }
              : 'skipped' in value
                ? { account, resource, ok: false, error: `did not run: ${value.skipped}` }
                : { account, resource, ok: true, summary: value },
          (error: unknown) => ({
            account,
            resource,
            ok: false,
            error: redactSecrets(coerceError(error).message),
          }),
        );
      }),
    );
  } finally {
    stopPolling.abort();
    await events.close();
    eventsRedis.disconnect();
    // Interrupted runs stop after the page in hand; their checkpoints outlive the queue.
    await worker?.close();
    await removeQueue(queue, deps.logger);
    await queue.close();
  }
}
