import { QueueEvents } from 'bullmq';
import type { App } from '../app.js';
import type { ResourceName } from '../config.js';
import { coerceError } from '../errors.js';
import { redactSecrets } from '../secret.js';
import type { RequestedMode, RunSummary } from '../sync/run-resource.js';
import { enqueueRun, QUEUE_NAME } from './sync-queue.js';

/** How one resource's run ended. */
export type RunOnceOutcome =
  | { resource: ResourceName; ok: true; summary: RunSummary }
  | { resource: ResourceName; ok: false; error: string };

/**
 * `hiresync sync`: one run of each resource through the queue, processed in
 * this process (or by any worker sharing the Redis), waited for to the end.
 * Resolves early with `interrupted` outcomes when the app's shutdown signal fires.
 */
export async function runOnce(
  app: App,
  resources: ResourceName[],
  requested: RequestedMode,
): Promise<RunOnceOutcome[]> {
  const eventsRedis = app.queueRedis.duplicate();
  eventsRedis.on('error', () => {
    // Reconnection is ioredis's job; the main connections log the outage.
  });
  const events = new QueueEvents(QUEUE_NAME, {
    connection: eventsRedis,
    prefix: app.config.redisPrefix,
  });
  try {
    await events.waitUntilReady();
    app.startWorker();
    const jobs = await Promise.all(
      resources.map((resource) =>
        enqueueRun(app.queue, { resource, requested, origin: 'cli' }, app.config),
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
        return Promise.race([job.waitUntilFinished(events) as Promise<RunSummary>, aborted]).then(
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
    await events.close();
    eventsRedis.disconnect();
  }
}
