import { AccountStore } from '../accounts/account-store.js';
import type { App } from '../app.js';
import type { Env } from '../config/types.js';
import { connectRoutes, type HttpRoute } from '../http/connect-routes.js';
import { type HttpServers, startHttpServer } from '../http/server.js';
import type { Logger } from '../logger.js';
import type { CloseOutcome } from '../queue/app-services.js';
import { type EraseSchedule, startEraseSchedule } from '../queue/erase-schedule.js';
import { startKeepalive } from '../queue/keepalive.js';
import type { ScheduleKeeper } from '../queue/schedule-keeper.js';
import type { Service } from '../queue/services.js';
import type { ScheduleChanges } from '../queue/upsert-schedules.js';
import { type Heartbeat, startHeartbeat } from '../queue/worker-heartbeat.js';
import { readVersion } from '../version.js';
import { authorizeEndpoint } from './accounts/partner-app.js';
import { erasableResourcesOf } from './erasable-resources.js';
import { consoleOptionsOf } from './worker-console.js';
import { workerWebhooks } from './worker-webhooks.js';

/** What the worker's services report once started, and once the app is closed. */
export interface WorkerState {
  http?: HttpServers;
  schedules?: ScheduleChanges;
  /** What App.close left (see CloseOutcome). */
  appClosed?: CloseOutcome;
}

/** What the worker's services run on. */
interface WorkerParts {
  app: App;
  env: Env;
  keeper: ScheduleKeeper;
  logger: Logger;
}

/**
 * With HIRESYNC_PUBLIC_URL, the partner app and HIRESYNC_SECRET_KEY: the
 * connect links' routes; a connected account's schedulers are made at once.
 */
function connectRoutesOf({ app, env, keeper, logger }: WorkerParts): HttpRoute | undefined {
  const { partner, publicUrl, secretKeys } = app.config;
  if (publicUrl && partner && secretKeys) {
    return connectRoutes({
      db: app.db,
      publicUrl,
      secretKeys,
      partner,
      authorizeEndpoint: (authUrl) => authorizeEndpoint(env, partner, authUrl),
      logger,
      // A connected account's schedulers now, not at the next check.
      onConnected: () => keeper.repair(),
    });
  }
  if (publicUrl) {
    logger.warn(
      {
        missing: [
          ...(partner ? [] : ['HIRESYNC_PARTNER_CLIENT_ID', 'HIRESYNC_PARTNER_CLIENT_SECRET']),
          ...(secretKeys ? [] : ['HIRESYNC_SECRET_KEY']),
        ],
      },
      'HIRESYNC_PUBLIC_URL is set, but connect links need the partner app and HIRESYNC_SECRET_KEY: /connect/… and /oauth/callback are not served',
    );
  }
  return undefined;
}

/** /healthz, /metrics, the console, the webhooks and the connect links (docs/operating.md). */
function httpListeners(parts: WorkerParts, routes: HttpRoute[], state: WorkerState): Service {
  const { app, keeper, logger } = parts;
  const { config } = app;
  return {
    name: 'HTTP listeners',
    start: async () => {
      state.http = await startHttpServer({
        port: config.listeners.http.port,
        host: config.listeners.http.host,
        publicListener: config.listeners.public,
        db: app.db,
        redis: app.redis,
        metrics: app.metrics,
        schedules: () => keeper.health(),
        routes,
        console: consoleOptionsOf(config, app, logger, {
          queue: app.queue,
          env: parts.env,
          repairSchedules: () => keeper.repair(),
        }),
      });
    },
    close: async () => state.http?.close(),
  };
}

/** The partner keep-alive: every enabled partner account refreshed at least every HIRESYNC_REFRESH_KEEPALIVE. */
function keepalive({ app, logger }: WorkerParts): Service {
  const { config } = app;
  let started: { close: (force?: boolean) => Promise<void> } | undefined;
  const due = async () => {
    const store = new AccountStore(app.db, config.secretKeys, { partner: config.partner });
    // The gauge follows the accounts' states, re-authorizations included.
    for (const account of await store.list()) {
      if (account.authMode !== 'partner') continue;
      app.metrics
        .forAccount(account.name)
        .onNeedsReauthorization?.(account.state === 'needs_reauthorization');
    }
    return store.partnerAccountsDue(config.refreshKeepaliveMs);
  };
  const renew = async (account: string) => {
    await (await app.contextOf(account)).renewToken?.();
  };
  return {
    name: 'keep-alive',
    start: async () => {
      started = await startKeepalive(
        app.queueRedis,
        config.redisPrefix,
        config.refreshKeepaliveMs,
        {
          due,
          renew,
          logger,
        },
      );
    },
    close: async ({ force }) => started?.close(force),
  };
}

/** Daily with HIRESYNC_ERASE_DELETED_AFTER; unset, its scheduler is removed. */
function erasure({ app, logger }: WorkerParts): Service {
  let started: EraseSchedule | undefined;
  return {
    name: 'erasure',
    start: async () => {
      started = await startEraseSchedule(app.queueRedis, app.config.redisPrefix, {
        db: app.db,
        afterMs: app.config.eraseDeletedAfterMs,
        resourcesOf: ({ schema }) => erasableResourcesOf(app.db, schema),
        logger,
      });
    },
    close: async ({ force }) => started?.close(force),
  };
}

/**
 * The worker's heartbeat in Redis (src/queue/worker-heartbeat.ts): started
 * last, once the worker takes jobs, and stopped first, its live entry
 * removed while Redis is still open.
 */
function heartbeat({ app, logger }: WorkerParts): Service {
  let started: Heartbeat | undefined;
  return {
    name: 'heartbeat',
    start: async () => {
      started = await startHeartbeat(app.redis, app.config.redisPrefix, {
        version: readVersion(),
        logger,
      });
    },
    close: async ({ force }) => started?.stop(force),
  };
}

/**
 * The services of `hiresync worker` in the order they start. At SIGTERM they
 * are closed in reverse: the heartbeat stops (the worker's live entry
 * removed), the schedule keeper, the keep-alive, the erasure and the
 * webhook deletes stop taking work; then the queue worker lets the
 * runs in hand commit their page and App.close closes the queue, the pool
 * and Redis; the HTTP listeners close last (/healthz answers until then).
 */
export function workerServices(parts: WorkerParts, state: WorkerState): Service[] {
  const { app, keeper, logger } = parts;
  const connect = connectRoutesOf(parts);
  const webhooks = workerWebhooks(app, logger);
  return [
    httpListeners(parts, connect ? [webhooks.route, connect] : [webhooks.route], state),
    {
      name: 'queue worker, queue, pool and Redis',
      start: () => void app.startWorker(),
      close: async ({ deadline }) => {
        state.appClosed = await app.close({ deadline });
      },
      // App.close holds its parts to the deadline, but for a refresh grant on the wire.
      waitsPastDeadline: true,
    },
    webhooks,
    erasure(parts),
    ...(app.config.partner ? [keepalive(parts)] : []),
    {
      name: 'schedule repair',
      start: async () => {
        state.schedules = await keeper.upsertAll();
        keeper.start(app.queueRedis);
      },
      close: () => keeper.stop(),
    },
    heartbeat(parts),
  ];
}
