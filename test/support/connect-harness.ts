import type { Server } from 'node:http';
import { sql } from 'kysely';
import { inject } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { type App, createApp } from '../../src/app.js';
import { registryOf } from '../../src/commands/account-options.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/types.js';
import { connectRoutes, type HttpRoute } from '../../src/http/connect-routes.js';
import { startHttpServer } from '../../src/http/server.js';
import { main } from '../../src/main.js';
import { ScheduleKeeper } from '../../src/queue/schedule-keeper.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { captureIo } from './capture-io.js';
import { captureLogger } from './capture-logger.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { clearRedisPrefix, PARTNER_APP_ENV, servicesEnv, simulatorEnv } from './test-env.js';

/** A worker process of the deployment, as far as connect links go: its app and its HTTP server. */
export interface ConnectWorker {
  app: App;
  /** http://127.0.0.1:PORT of this worker's server. */
  origin: string;
  server: Server;
  /** Its log (warn and above kept). */
  log: ReturnType<typeof captureLogger>;
}

/** A deployment with two workers behind HIRESYNC_PUBLIC_URL (the first's address), and a simulator. */
export interface ConnectHarness {
  sim: ApiSimulator;
  database: TestDatabase;
  env: Record<string, string>;
  config: Config;
  store: AccountStore;
  publicUrl: string;
  /** The worker HIRESYNC_PUBLIC_URL names, and another sharing its Postgres and Redis. */
  workers: [ConnectWorker, ConnectWorker];
  /** Accounts the workers told to schedule (onConnected), in order. */
  connected: string[];
  /** `hiresync accounts invite ARGV` in process: exit, output and the link printed. */
  invite: (
    argv: string[],
    overrides?: Record<string, string>,
  ) => Promise<{ code: number; stdout: string; stderr: string; link: URL | undefined }>;
  /** `url` sent to `worker` instead of the public URL's (a load balancer's choice). */
  at: (url: URL | string, worker: ConnectWorker) => URL;
  /** The browser opens `url` without following a redirect (keeping its cookies, as a browser does). */
  get: (url: URL | string) => Promise<Response>;
  /** Another browser (a cookie jar of its own): e.g. the administrator's when someone else opened the link. */
  newBrowser: () => CookieBrowser;
  /**
   * The administrator approves at the simulator's authorize endpoint
   * `location` (for the simulated account `account`): the callback URL it
   * redirects the browser to.
   */
  approve: (location: URL | string, account: string) => Promise<URL>;
  /** Every row of the accounts, refresh tokens and connect links, as text (not the states). */
  snapshot: () => Promise<string>;
  close: () => Promise<void>;
}

/** A browser as far as cookies go: what it is sent, it sends back. */
export interface CookieBrowser {
  /** Opens `url` without following a redirect, sending the cookies it holds for it. */
  get: (url: URL | string) => Promise<Response>;
  /** The cookies it holds: name, value and attributes as set. */
  cookies: () => { name: string; value: string; attributes: string[] }[];
}

/**
 * A cookie jar enough for the connect routes: host-only cookies (ports do
 * not separate them, as in browsers), `Path` prefixes, `Max-Age=0` deletes.
 */
export function cookieBrowser(): CookieBrowser {
  const jar = new Map<
    string,
    { host: string; path: string; value: string; attributes: string[] }
  >();
  return {
    get: async (target) => {
      const url = new URL(target);
      const sent = [...jar.entries()]
        .filter(([, c]) => c.host === url.hostname && url.pathname.startsWith(c.path))
        .map(([key, c]) => `${key.split(' ')[2]}=${c.value}`);
      const res = await fetch(url, {
        redirect: 'manual',
        headers: sent.length > 0 ? { cookie: sent.join('; ') } : {},
      });
      for (const header of res.headers.getSetCookie()) {
        const [pair = '', ...attributes] = header.split(';').map((part) => part.trim());
        const at = pair.indexOf('=');
        const name = pair.slice(0, at);
        const path = attributes.find((a) => a.startsWith('Path='))?.slice(5) ?? '/';
        const key = `${url.hostname} ${path} ${name}`;
        if (attributes.includes('Max-Age=0')) jar.delete(key);
        else jar.set(key, { host: url.hostname, path, value: pair.slice(at + 1), attributes });
      }
      return res;
    },
    cookies: () =>
      [...jar.entries()].map(([key, c]) => ({
        name: key.split(' ')[2] as string,
        value: c.value,
        attributes: c.attributes,
      })),
  };
}

/**
 * Starts a {@link ConnectHarness}: a simulator serving `acme` and `beta`
 * (25 records each), a migrated test database, and two workers' HTTP servers
 * with the connect routes, each keeping the schedules as `worker` does (and
 * repairing them when an account is connected).
 */
export async function startConnectHarness(
  simulator: SimulatorOptions = {},
): Promise<ConnectHarness> {
  const counts = { jobs: 25, job_posts: 25, tracking_links: 25 };
  const sim = await ApiSimulator.start({
    clientSecrets: ['sync-secret'],
    accounts: ['acme', 'beta'].map((name, i) => ({
      name,
      dataset: { seed: 41 + i, idOffset: (i + 1) * 1_000_000, counts },
    })),
    ...simulator,
  });
  const database = await createTestDatabase(inject('databaseUrl'));
  const cleanups: (() => Promise<unknown>)[] = [() => sim.close(), () => database.drop()];
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    await migrateAll(database.db);
    const base: Record<string, string> = {
      ...servicesEnv(database.url),
      ...simulatorEnv(sim),
      ...PARTNER_APP_ENV,
      HIRESYNC_AUTHORIZE_URL: sim.authorizeUrl,
      HIRESYNC_RESOURCES: 'jobs',
      HIRESYNC_PER_PAGE: '10',
      HIRESYNC_RUN_ATTEMPTS: '1',
      LOG_LEVEL: 'warn',
    };
    cleanups.push(() => clearRedisPrefix(base));
    const connected: string[] = [];
    const routes: HttpRoute[][] = [[], []];
    const workers: ConnectWorker[] = [];
    for (const i of [0, 1]) {
      // The public URL is the first worker's address, known once it listens.
      const config = loadConfig(base, RESOURCE_NAMES);
      const log = captureLogger('warn');
      const app = createApp(config, log.logger, {
        defaultMetrics: false,
        registry: registryOf(config),
      });
      cleanups.push(() => app.close());
      const { server, port } = await startHttpServer({
        port: 0,
        host: '127.0.0.1',
        db: app.db,
        redis: app.redis,
        metrics: app.metrics,
        routes: routes[i],
      });
      cleanups.push(() => new Promise((resolve) => server.close(resolve)));
      workers.push({ app, origin: `http://127.0.0.1:${port}`, server, log });
    }
    const [first, second] = workers as [ConnectWorker, ConnectWorker];
    const publicUrl = first.origin;
    const env = { ...base, HIRESYNC_PUBLIC_URL: publicUrl };
    const config = loadConfig(env, RESOURCE_NAMES);
    for (const [i, worker] of workers.entries()) {
      // Each worker keeps the schedules, as `worker` does.
      const keeper = new ScheduleKeeper({
        queue: worker.app.queue,
        config,
        targets: async () =>
          (await worker.app.accounts.enabledNames()).flatMap((account) =>
            config.resources.map((resource) => ({ account, resource })),
          ),
        logger: worker.log.logger,
      });
      cleanups.push(() => keeper.stop());
      routes[i]?.push(
        connectRoutes({
          db: worker.app.db,
          publicUrl,
          secretKeys: config.secretKeys as NonNullable<Config['secretKeys']>,
          partner: config.partner as NonNullable<Config['partner']>,
          authorizeEndpoint: () => sim.authorizeUrl,
          logger: worker.log.logger,
          onConnected: async (account) => {
            connected.push(account);
            await keeper.repair();
          },
        }),
      );
    }
    const store = new AccountStore(database.db, config.secretKeys, { partner: config.partner });
    const browser = cookieBrowser();
    return {
      sim,
      database,
      env,
      config,
      store,
      publicUrl,
      workers: [first, second],
      connected,
      invite: async (argv, overrides = {}) => {
        const io = captureIo();
        const code = await main(['accounts', 'invite', ...argv], { ...env, ...overrides }, io);
        const printed = /^(https?:\/\/\S+\/connect\/\S+)$/m.exec(io.out())?.[1];
        return {
          code,
          stdout: io.out(),
          stderr: io.err(),
          link: printed === undefined ? undefined : new URL(printed),
        };
      },
      at: (url, worker) => {
        const moved = new URL(url);
        const target = new URL(worker.origin);
        moved.host = target.host;
        return moved;
      },
      get: browser.get,
      newBrowser: cookieBrowser,
      approve: async (location, account) => {
        const request = new URL(location);
        request.searchParams.set('sim_account', account);
        const res = await fetch(request, { redirect: 'manual' });
        if (res.status !== 302) {
          throw new Error(`the authorize endpoint answered ${res.status}: ${await res.text()}`);
        }
        return new URL(res.headers.get('location') as string);
      },
      snapshot: async () => {
        const { rows } = await sql<{ row: string }>`
          select 'account ' || row_to_json(a)::text as row from hiresync.accounts a
          union all select 'token ' || row_to_json(r)::text from hiresync.refresh_tokens r
          union all select 'link ' || row_to_json(l)::text from hiresync.connect_links l
          order by 1`.execute(database.db);
        return rows.map((r) => r.row).join('\n');
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
