import { sql } from 'kysely';
import { inject } from 'vitest';
import { DEFAULT_ACCOUNT } from '../../src/account-name.js';
import { AccountStore } from '../../src/accounts/account-store.js';
import { type App, type AppOptions, createApp } from '../../src/app.js';
import { registryOf } from '../../src/commands/account-options.js';
import { loadConfig, type ResourceName } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/types.js';
import { runOnce } from '../../src/queue/run-once.js';
import type { ScheduleTarget } from '../../src/queue/upsert-schedules.js';
import { RESOURCE_NAMES, validateRecord } from '../../src/resources/index.js';
import { Secret } from '../../src/secret.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import type { RequestedMode } from '../../src/sync/run-resource.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { captureLogger } from './capture-logger.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { clearRedisPrefix, DEFAULT_CLIENT_SECRET, servicesEnv, simulatorEnv } from './test-env.js';

/** The credentials the simulator gives a test account: `<name>-client` and `<name>-secret`. */
export function secretOf(account: string): string {
  return account === DEFAULT_ACCOUNT ? DEFAULT_CLIENT_SECRET : `${account}-secret`;
}

/**
 * A simulator serving `default` and the named accounts (each its own data), a
 * database with those accounts registered; the environment holds default's
 * credentials unless `withoutDefault`.
 */
export interface AccountsHarness {
  sim: ApiSimulator;
  database: TestDatabase;
  env: Record<string, string>;
  config: Config;
  store: AccountStore;
  log: ReturnType<typeof captureLogger>;
  app: (options?: AppOptions) => App;
  sync: (
    targets: readonly ScheduleTarget[],
    requested?: RequestedMode,
    options?: AppOptions,
  ) => ReturnType<typeof runOnce>;
  /** Ids (as text) of an account's live rows, and what the simulator serves it. */
  liveIds: (account: string, resource: ResourceName) => Promise<string[]>;
  expectedIds: (account: string, resource: ResourceName) => string[];
  close: () => Promise<void>;
}

export async function startAccountsHarness(options: {
  accounts: string[];
  records?: number;
  simulator?: SimulatorOptions;
  env?: Record<string, string>;
  /** Leave out the environment's own credentials: no account `default`. Default false. */
  withoutDefault?: boolean;
  /** Accounts the simulator serves (after `accounts`) that are not registered. Default none. */
  unregistered?: string[];
}): Promise<AccountsHarness> {
  const counts = (n: number) => ({ jobs: n, job_posts: n, tracking_links: n });
  const sim = await ApiSimulator.start({
    clientSecrets: [DEFAULT_CLIENT_SECRET],
    dataset: { counts: counts(options.records ?? 40) },
    accounts: [...options.accounts, ...(options.unregistered ?? [])].map((name, i) => ({
      name,
      clientId: `${name}-client`,
      clientSecrets: [secretOf(name)],
      dataset: {
        seed: 11 + i,
        idOffset: (i + 1) * 1_000_000,
        counts: counts((options.records ?? 40) + 7 * (i + 1)),
      },
    })),
    ...options.simulator,
  });
  const database = await createTestDatabase(inject('databaseUrl'));
  const { HIRESYNC_CLIENT_ID, HIRESYNC_CLIENT_SECRET, ...urls } = simulatorEnv(sim);
  const env: Record<string, string> = {
    ...servicesEnv(database.url),
    ...urls,
    ...(options.withoutDefault ? {} : { HIRESYNC_CLIENT_ID, HIRESYNC_CLIENT_SECRET }),
    HIRESYNC_RUN_BACKOFF: '200ms',
    HIRESYNC_RUN_ATTEMPTS: '3',
    HIRESYNC_HTTP_PORT: '0',
    HIRESYNC_PER_PAGE: '10',
    ...options.env,
  };
  const config = loadConfig(env, RESOURCE_NAMES);
  const store = new AccountStore(database.db, config.secretKeys);
  await migrateAll(database.db);
  for (const name of options.accounts) {
    await store.add({
      name,
      baseUrl: sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: sim.authUrl,
        clientId: `${name}-client`,
        clientSecret: new Secret(secretOf(name)),
      },
    });
  }
  await migrateAll(database.db);
  const log = captureLogger('info');
  const app = (appOptions: AppOptions = {}) =>
    createApp(config, log.logger, {
      defaultMetrics: false,
      registry: registryOf(config),
      ...appOptions,
    });
  return {
    sim,
    database,
    env,
    config,
    store,
    log,
    app,
    sync: async (targets, requested = 'auto', appOptions = {}) => {
      const a = app(appOptions);
      try {
        return await runOnce(a, targets, requested);
      } finally {
        await a.close();
      }
    },
    liveIds: async (account, resource) => {
      const { rows } = await sql<{ id: string }>`
        select id from ${sql.table(`hiresync.data_${resource}`)}
        where account = ${account} and deleted_at is null order by id desc`.execute(database.db);
      return rows.map((r) => r.id);
    },
    expectedIds: (account, resource) => {
      const ds = sim.datasetOf(account);
      return [...ds.presentIndexes(resource)]
        .filter((i) => validateRecord(resource, ds.record(resource, i)) === undefined)
        .map((i) => String(ds.idOf(resource, i)));
    },
    close: async () => {
      await sim.close();
      await database.drop();
      await clearRedisPrefix(env);
    },
  };
}

/** Every (account, resource) of `accounts` × `resources`. */
export function targetsOf(
  accounts: readonly string[],
  resources: readonly ResourceName[] = ['jobs', 'job_posts', 'tracking_links'],
): ScheduleTarget[] {
  return accounts.flatMap((account) => resources.map((resource) => ({ account, resource })));
}
