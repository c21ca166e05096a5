import { webhookAccounts } from '../accounts/webhook-accounts.js';
import type { App } from '../app.js';
import { coerceError } from '../errors.js';
import { BodyBudget } from '../http/body-budget.js';
import type { HttpRoute } from '../http/connect-routes.js';
import { webhookRoutes } from '../http/webhook-routes.js';
import type { Logger } from '../logger.js';
import type { Service } from '../queue/services.js';
import { throttledWarn } from '../queue/throttled-warn.js';
import { createWebhookDeleteWorker } from '../queue/webhook-delete-worker.js';
import {
  createWebhookQueue,
  enqueueWebhookDeletion,
  enqueueWebhookRun,
  WebhookEventLedger,
} from '../queue/webhook-jobs.js';

/**
 * The worker's webhook endpoint, and the service applying its delete events
 * after the answer (`webhook deletes`): started with the queue worker of
 * runs, it stops after the delete in hand and closes the queue (without
 * waiting for Redis when `force`).
 */
export interface WorkerWebhooks extends Service {
  /** `POST …/webhooks/<account>`, for the HTTP server's routes. */
  route: HttpRoute;
  /** What the bodies not yet authenticated hold (HIRESYNC_WEBHOOK_MAX_INFLIGHT, _MAX_BUFFERED_BYTES). */
  budget: BodyBudget;
}

/**
 * The webhooks of `hiresync worker` (docs/privacy.md, "Webhooks"): the
 * endpoint, checking each delivery against the account's webhook secret
 * (HIRESYNC_WEBHOOK_SECRET for `default`, hiresync.webhook_secrets for a
 * registered account) and claiming its event id in Redis; the queue
 * `webhooks` its delete events go to, and the worker applying them in
 * Postgres; its other events queue an incremental run on the shared queue.
 */
export function workerWebhooks(app: App, logger: Logger): WorkerWebhooks {
  const { config } = app;
  const queue = createWebhookQueue(app.queueRedis, config.redisPrefix);
  queue.on('error', throttledWarn(logger, 'webhook queue error'));
  const ledger = new WebhookEventLedger(app.redis, config.redisPrefix);
  let worker: ReturnType<typeof createWebhookDeleteWorker> | undefined;
  const budget = new BodyBudget({
    maxInflight: config.webhookIntake.maxInflight,
    maxBytes: config.webhookIntake.maxBufferedBytes,
  });
  const route = webhookRoutes({
    publicUrl: config.publicUrl,
    accountOf: webhookAccounts({ db: app.db, secretKeys: config.secretKeys, config }),
    ledger: {
      claim: (account, eventId) => ledger.claim(account, eventId),
      release: (account, eventId) => ledger.release(account, eventId),
    },
    queueDeletion: (work) => enqueueWebhookDeletion(queue, work),
    queueRun: (account, resource) => enqueueWebhookRun(app.queue, account, resource, config),
    logger,
    budget,
  });
  return {
    name: 'webhook deletes',
    route,
    budget,
    start: () => {
      worker = createWebhookDeleteWorker(app.queueRedis, config.redisPrefix, {
        db: app.db,
        resourceOf: (name) => app.resources.get(name),
        history: config.history,
        logger,
      });
      worker.on('error', throttledWarn(logger, 'webhook delete worker error'));
      worker.on('failed', (job, error) => {
        logger.error(
          {
            account: job?.data.account,
            action: job?.data.action,
            eventId: job?.data.eventId,
            attempt: job?.attemptsMade,
            err: coerceError(error),
          },
          'webhook delete failed; retried with backoff until its attempts are spent',
        );
      });
    },
    close: async ({ force }) => {
      await worker?.close(force);
      await queue.close();
    },
  };
}
