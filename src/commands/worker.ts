import { type App, createApp, withResolvedPolicy } from '../app.js';
import { formatDuration } from '../config/fields.js';
import { loadConfig } from '../config/load-config.js';
import type { Config } from '../config/types.js';
import { createLogger, type Logger } from '../logger.js';
import { accountTargets } from '../queue/account-targets.js';
import { queueInterruptedRuns } from '../queue/resume-interrupted.js';
import { ScheduleKeeper } from '../queue/schedule-keeper.js';
import { closeServices, type Service, type Stop, startServices } from '../queue/services.js';
import type { ScheduleTarget } from '../queue/upsert-schedules.js';
import { RESOURCE_NAMES } from '../resources/index.js';
import { checkConnections } from '../status/preflight.js';
import {
  foreignCreatorWarnings,
  refuseForeignCreatorsOfControl,
} from '../warehouse/layout/schema-creators.js';
import { registryOf, resolveAccounts } from './account-options.js';
import { defineCommand, EXIT, type Output } from './command.js';
import type { OptionTable } from './options.js';
import { confirmRedisOrWait } from './worker-redis-wait.js';
import { type WorkerState, workerServices } from './worker-services.js';

/** `hiresync worker` takes no option but `--help`. */
export const options = {} as const satisfies OptionTable;

/**
 * What the worker schedules and resumes: each enabled account's resources,
 * each with the account's interval and cron (its settings, else the
 * deployment's), read now; its schedule keeper calls it every minute.
 */
export async function scheduleTargetsOf(
  app: Pick<App, 'accounts' | 'accountSettings' | 'config'>,
): Promise<ScheduleTarget[]> {
  return accountTargets(await app.accounts.enabledNames(), await app.accountSettings(), app.config);
}

/**
 * Before the worker's services start: the connections and their ownership,
 * no other role's object in hiresync's way (docs/operating.md, "Roles"), an
 * account to sync or a partner app to connect them (else exit 2 saying what
 * to do), and a resume job queued for each run another process left. The
 * enabled accounts' resources, returned.
 */
async function checkAndResume(app: App, logger: Logger): Promise<ScheduleTarget[]> {
  const { config } = app;
  await checkConnections(app.db, app.redis, { prefix: config.redisPrefix, claimPrefix: true });
  await refuseForeignCreatorsOfControl(app.db);
  for (const { schema, roles, message } of await foreignCreatorWarnings(app.db)) {
    logger.warn({ schema, roles }, message);
  }
  await resolveAccounts(app, undefined, config, { waitForConnects: true });
  // Before this worker takes a job or upserts a schedule: the checkpoints
  // pending now were left by other processes, never by a run of its own.
  const runs = await scheduleTargetsOf(app);
  await queueInterruptedRuns({
    queue: app.queue,
    config,
    targets: runs,
    checkpointsOf: app.checkpointsOf,
    runLock: app.runLock,
    logger,
  });
  return runs;
}

/**
 * The worker's logger. Its logs are its output, on standard output: JSON
 * lines, written by pino's own writer as always, or with LOG_FORMAT=pretty,
 * or unset on a terminal, one human line per event.
 */
export function workerLogger(
  config: Pick<Config, 'logLevel' | 'logFormat'>,
  stdout: Output,
): Logger {
  const pretty =
    config.logFormat === 'pretty' || (config.logFormat === undefined && stdout.isTTY === true);
  return pretty
    ? createLogger({ level: config.logLevel, format: 'pretty', destination: stdout })
    : createLogger({ level: config.logLevel, format: 'json' });
}

/** The line `worker started`: where it listens, what it schedules. */
function logStarted(
  logger: Logger,
  config: Config,
  state: WorkerState,
  runs: readonly ScheduleTarget[],
): void {
  const { http, schedules } = state;
  logger.info(
    {
      port: http?.port,
      host: config.listeners.http.host,
      ...(config.listeners.public
        ? { publicPort: http?.publicPort, publicHost: config.listeners.public.host }
        : {}),
      schedules: schedules?.upserted.length,
      // Their interval, offset or cron changed (the first start after the spread: all of them).
      ...(schedules && schedules.replaced.length > 0
        ? { schedulesReplaced: schedules.replaced.length }
        : {}),
      accounts: new Set(runs.map((r) => r.account)).size,
      resources: config.resources,
      ...(runs.length === 0
        ? {
            waiting:
              'no enabled account yet: accounts added, enabled or connected are picked up within a minute',
          }
        : {}),
      concurrency: config.concurrency,
      ...(config.eraseDeletedAfterMs === undefined
        ? {}
        : { eraseDeletedAfter: formatDuration(config.eraseDeletedAfterMs) }),
    },
    'worker started',
  );
}

/** `hiresync worker`: runs until SIGTERM/SIGINT, then finishes the pages in hand and exits 0. */
export const worker = defineCommand({
  name: 'worker',
  description: `Runs until SIGTERM/SIGINT: processes queued runs (HIRESYNC_CONCURRENCY at once),
    keeps the incremental (HIRESYNC_INCREMENTAL_EVERY) and full (HIRESYNC_FULL_CRON)
    schedules of each resource (HIRESYNC_RESOURCES) of default (when the environment
    sets credentials) and of every enabled account, each account with its own
    resources, interval and cron where 'accounts add|update' set them (accounts added,
    disabled or removed, and settings changed, are picked up within a minute), and
    serves /healthz and /metrics on HIRESYNC_HTTP_PORT, the vendor's webhooks at
    POST /webhooks/<account> (under HIRESYNC_PUBLIC_URL's path; an account's secret:
    HIRESYNC_WEBHOOK_SECRET for default, 'accounts update NAME --webhook-secret'),
    and with HIRESYNC_PUBLIC_URL,
    the partner app and HIRESYNC_SECRET_KEY the connect links' /connect/<token> and
    /oauth/callback, and with HIRESYNC_CONSOLE_PASSWORD the operators' console at /.
    With HIRESYNC_PUBLIC_PORT, the webhooks and connect links are served on that
    port (HIRESYNC_PUBLIC_HOST, default 0.0.0.0) only, every other path 404 there,
    and HIRESYNC_HTTP_PORT binds HIRESYNC_HTTP_HOST (default 127.0.0.1).
    With a partner app configured, it refreshes every enabled
    partner account at least every HIRESYNC_REFRESH_KEEPALIVE. With
    HIRESYNC_ERASE_DELETED_AFTER, it erases daily the records deleted upstream
    longer ago than that (see 'hiresync erase'). Every 15 s it records a
    heartbeat in Redis (its host and pid: 'hiresync status' lists the workers
    alive, and 'status --check' fails when none was seen). On SIGTERM it
    finishes the pages in hand, checkpoints and exits 0; when Redis does not answer,
    it stops waiting after HIRESYNC_HTTP_TIMEOUT at most, still exits 0, and logs the
    runs left in hand (they resume from their last checkpoints). Exit 2 when there is
    nothing it could ever sync: no environment credentials and no HIRESYNC_SECRET_KEY
    (before connecting), or no account registered and no partner app (a partner app's
    worker waits for its customers to connect). Exit 1 when a listener cannot listen
    (a port in use or privileged, an address not of this machine), naming the setting.
    When Redis's TLS does not verify (REDIS_CA_FILE, or REDIS_URL's scheme), it does
    not start, nor fall back to plain text: it logs why, answers /healthz 503 with the
    reason, and tries again every 10 s.`,
  options,
  async execute(_values, { env, stdout, signals }) {
    const config = withResolvedPolicy(loadConfig(env, RESOURCE_NAMES));
    const logger = workerLogger(config, stdout);
    // Before any connection of the app: nothing may be written to a database
    // REDIS_URL does not name. A TLS that does not verify: not ready, until it does.
    if (!(await confirmRedisOrWait(config, logger, signals))) {
      logger.info('worker stopped before it started: Redis TLS never verified');
      return EXIT.ok;
    }
    const app = createApp(config, logger, { registry: registryOf(config) });
    // Redis gone, BullMQ's close and a run's checkpoint would wait for good:
    // what has not closed by then is left (the runs resume from their checkpoints).
    const stopNow = (): Stop => ({
      deadline: Date.now() + config.api.httpTimeoutMs,
      force: app.queueRedis.status !== 'ready',
    });
    const state: WorkerState = {};
    let runs: ScheduleTarget[];
    let services: Service[];
    try {
      runs = await checkAndResume(app, logger);
      const targets = () => scheduleTargetsOf(app);
      const keeper = new ScheduleKeeper({ queue: app.queue, config, targets, logger });
      services = workerServices({ app, env, keeper, logger }, state);
      await startServices(services, stopNow, logger);
    } catch (error) {
      await app.close({ deadline: stopNow().deadline });
      throw error;
    }
    // Listened for before 'worker started' is logged: a supervisor (or a test)
    // that stops the worker as soon as it reads that line gets a clean stop.
    const stopped = new Promise<string>((resolve) => {
      signals.once('SIGINT', () => resolve('SIGINT'));
      signals.once('SIGTERM', () => resolve('SIGTERM'));
    });
    logStarted(logger, config, state, runs);
    const signal = await stopped;
    logger.info({ signal }, 'shutting down: finishing the pages in hand');
    const stop = stopNow();
    const { left } = await closeServices([...services].reverse(), stop, logger);
    const abandoned = [...left, ...(state.appClosed?.abandoned ?? [])];
    if (stop.force || abandoned.length > 0) {
      logger.warn(
        { abandoned, inHand: state.appClosed?.inHand ?? [], redisUnreachable: stop.force },
        'stopped without waiting for Redis: the runs in hand resume from their checkpoints',
      );
    }
    logger.info('worker stopped');
    return EXIT.ok;
  },
});
