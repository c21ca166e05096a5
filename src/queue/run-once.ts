import { setTimeout as sleep } from 'node:timers/promises';
import { QueueEvents } from 'bullmq';
import type { App } from '../app.js';
import type { ResourceName } from '../config.js';
import { coerceError } from '../errors.js';
import { redactSecrets } from '../secret.js';
import type { RequestedMode, RunSummary } from '../sync/run-resource.js';
import { enqueueRun, QUEUE_NAME, type SyncJob, type SyncWorker } from './sync-queue.js';

/** How one resource's run ended. */
export type RunOnceOutcome =
  | { resource: ResourceName; ok: true; summary: RunSummary }
  | { resource: ResourceName; ok: false; error: string };

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
function lostMessage(resource: ResourceName, jobId: string): string {
  return (
    `the queued run of ${resource} (job ${jobId}) vanished from Redis before it finished ` +
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
  app: App,
  worker: SyncWorker,
  job: SyncJob,
  options: RunOnceOptions,
  signal: AbortSignal,
): Promise<RunSummary> {
  const id = job.id as string;
  const pollMs = options.pollMs ?? 1000;
  const lostAfterMs = options.lostAfterMs ?? 5000;
  let missingSince: number | undefined;
  while (!signal.aborted) {
    await sleep(pollMs, undefined, { signal }).catch(() => {});
    if (signal.aborted) break;
    const state = await app.queue.getJobState(id).catch(() => undefined);
    if (state === 'completed') {
      const done = await app.queue.getJob(id);
      if (done) return done.returnvalue as RunSummary;
    } else if (state === 'failed') {
      const done = await app.queue.getJob(id);
      if (done) throw new Error(done.failedReason);
    }
    if (state !== 'unknown') {
      missingSince = undefined;
      continue;
    }
    const seen = worker.settlements.get(id);
    if (seen?.state === 'completed') return seen.result as RunSummary;
    if (seen?.state === 'failed') throw new Error(seen.error);
    if (seen?.state === 'active') continue; // still running here; it settles when it ends
    missingSince ??= Date.now();
    if (Date.now() - missingSince >= lostAfterMs) {
      app.logger.error({ resource: job.data.resource, jobId: id }, 'queued run lost from Redis');
      throw new Error(lostMessage(job.data.resource, id));
    }
  }
  return new Promise<never>(() => {}); // the abort outcome wins the race
}

/**
 * `hiresync sync`: one run of each resource through the queue, processed in
 * this process (or by any worker sharing the Redis), waited for to the end.
 * Resolves early with `interrupted` outcomes when the app's shutdown signal fires.
 */
export async function runOnce(
  app: App,
  resources: ResourceName[],
  requested: RequestedMode,
  options: RunOnceOptions = {},
): Promise<RunOnceOutcome[]> {
  const eventsRedis = app.queueRedis.duplicate();
  eventsRedis.on('error', () => {
    // Reconnection is ioredis's job; the main connections log the outage.
  });
  const events = new QueueEvents(QUEUE_NAME, {
    connection: eventsRedis,
    prefix: app.config.redisPrefix,
  });
  const stopPolling = new AbortController();
  try {
    await events.waitUntilReady();
    const worker = app.startWorker();
    const jobs = await Promise.all(
      resources.map((resource) =>
        enqueueRun(
          app.queue,
          {
            resource,
            requested,
            origin: 'cli',
            ...(options.allowMassDelete ? { allowMassDelete: true } : {}),
          },
          app.config,
        ),
      ),
    );
    const signal = app.shutdown.signal;
    const aborted = new Promise<'aborted'>((resolve) => {
      if (signal.aborted) resolve('aborted');
      signal.addEventListener('abort', () => resolve('aborted'));
    });
    return await Promise.all(
      jobs.map((job, i): Promise<RunOnceOutcome> => {
        const resource = resources[i] as ResourceName;
        return Promise.race([
          job.waitUntilFinished(events) as Promise<RunSummary>,
          pollJob(app, worker, job, options, stopPolling.signal),
          aborted,
        ]).then(
          (value) =>
            value === 'aborted'
              ? { resource, ok: false, error: 'interrupted' }
              : { resource, ok: true, summary: value },
          (error: unknown) => ({
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
  }
}
