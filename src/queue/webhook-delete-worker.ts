import { DelayedError, Worker } from 'bullmq';
import type { Kysely } from 'kysely';
import { runKey } from '../account-name.js';
import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/connect.js';
import type { HistoryTarget } from '../warehouse/pages/history.js';
import type { Database } from '../warehouse/tables.js';
import { applyWebhookDeletion } from '../warehouse/upkeep/webhook-deletions.js';
import {
  WEBHOOK_QUEUE_NAME,
  type WebhookDeleteJob,
  type WebhookDeleteJobData,
} from './webhook-jobs.js';

/** What the processor of delete events needs. */
export interface WebhookDeleteDeps {
  /** The process's pool (made by createDatabase): every statement names the account it is for. */
  db: Kysely<Database>;
  /** Where a resource's records and history are; undefined for a name that cannot be a resource. */
  resourceOf: (name: string) => (HistoryTarget & { readonly table: string }) | undefined;
  /** HIRESYNC_HISTORY: record a deletion version. */
  history: boolean;
  logger: Logger;
}

/**
 * How long a delete held up by a run of its resource waits before it tries
 * again, the `waits + 1`th time: 250 ms, doubling, at most 2 s (most runs a
 * webhook meets are incremental ones of a second or less; a full run's
 * lock is tried every 2 s, one cheap statement).
 */
export function deleteWaitMs(waits: number): number {
  return Math.min(250 * 2 ** Math.max(0, waits), 2000);
}

/**
 * The processor of delete events: each part soft-deletes its records in the
 * account's schema ({@link applyWebhookDeletion}). While a run of the
 * resource holds it, the job goes back to the queue, delayed (no attempt
 * spent), and tries again: the records are marked once the run ends. A part
 * done before another is held up is done again harmlessly (only live rows
 * are marked). Any other failure (Postgres away) is retried with backoff.
 */
export function createWebhookDeleteProcessor(deps: WebhookDeleteDeps) {
  return async (job: WebhookDeleteJob, token?: string): Promise<void> => {
    const { account, action, eventId, deletions } = job.data;
    for (const { resource, ids } of deletions) {
      const logger = deps.logger.child({ account, resource, action, eventId, jobId: job.id });
      const target = deps.resourceOf(resource);
      if (!target) {
        logger.warn('webhook delete: not a resource; nothing done');
        continue;
      }
      const done = await applyWebhookDeletion(deps.db, {
        account,
        target,
        ids,
        lockName: runKey(account, resource),
        history: deps.history,
      });
      if (done.outcome === 'busy') {
        const waits = job.data.busyWaits ?? 0;
        const delayMs = deleteWaitMs(waits);
        logger.info(
          { delayMs, waits },
          'webhook delete: a run of the resource is writing; waiting for it to end',
        );
        await job.updateData({ ...job.data, busyWaits: waits + 1 });
        await job.moveToDelayed(Date.now() + delayMs, token);
        throw new DelayedError(`${runKey(account, resource)} is running`);
      }
      if (done.outcome === 'no table') {
        logger.info(
          { ids: ids.length },
          'webhook delete: the account has no table of the resource yet; nothing to delete',
        );
        continue;
      }
      logger.info({ ids: ids.length, deleted: done.deleted }, 'webhook delete applied');
    }
  };
}

/** A BullMQ worker applying the delete events of the queue {@link WEBHOOK_QUEUE_NAME}. */
export function createWebhookDeleteWorker(
  connection: RedisConnection,
  prefix: string,
  deps: WebhookDeleteDeps,
  options: { concurrency?: number } = {},
): Worker<WebhookDeleteJobData, void> {
  return new Worker<WebhookDeleteJobData, void>(
    WEBHOOK_QUEUE_NAME,
    createWebhookDeleteProcessor(deps),
    { connection, prefix, concurrency: options.concurrency ?? 4 },
  );
}
