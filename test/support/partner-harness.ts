import { inject } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { createHttp } from '../../src/api/http.js';
import { TokenProvider, type TokenProviderOptions } from '../../src/api/token-provider.js';
import type { TokenStore } from '../../src/api/token-store.js';
import { type App, type AppOptions, createApp } from '../../src/app.js';
import { registryOf } from '../../src/commands/account-options.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/types.js';
import { runOnce } from '../../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { Secret } from '../../src/secret.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { captureLogger } from './capture-logger.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { grantRefreshToken } from './partner-grant.js';
import {
  clearRedisPrefix,
  DEFAULT_CLIENT_SECRET,
  PARTNER_APP_ENV,
  servicesEnv,
  simulatorEnv,
} from './test-env.js';

/** A token store that shares nothing: the first getToken of every new provider is a refresh grant. */
export const noSharing: TokenStore = {
  read: async () => undefined,
  write: async () => {},
  tryLock: async () => ({ release: async () => {}, lost: new AbortController().signal }),
};

/**
 * A token provider for a resolved partner account, as a run builds one (no
 * retries), over `tokens` (default {@link noSharing}).
 */
export function tokenProviderOf(
  account: Pick<TokenProviderOptions, 'auth' | 'refreshTokens'>,
  tokens: TokenStore = noSharing,
): TokenProvider {
  return new TokenProvider({
    auth: account.auth,
    http: createHttp({ timeoutMs: 5000 }),
    store: tokens,
    logger: captureLogger('silent').logger,
    maxRetries: 0,
    defaultRetryAfterMs: 100,
    refreshTokens: account.refreshTokens,
  });
}

/** A simulator with a customer `acme`, and a database where `acme` is connected as a partner account. */
export interface PartnerHarness {
  sim: ApiSimulator;
  database: TestDatabase;
  /** The environment of a hiresync process of this deployment (the partner app's credentials included). */
  env: Record<string, string>;
  config: Config;
  store: AccountStore;
  /** An app as a worker of this deployment builds it (close it). */
  app: (options?: AppOptions) => App;
  /** One full run of acme's jobs in this process, as `hiresync sync --account acme --resource jobs`. */
  sync: () => ReturnType<typeof runOnce>;
  /** A token provider for acme as a run resolves it, over `tokens` (default {@link noSharing}). */
  provider: (tokens?: TokenStore) => Promise<TokenProvider>;
  close: () => Promise<void>;
}

/**
 * Starts a {@link PartnerHarness}: acme (30 records of each resource) is
 * granted at the simulator, its refresh token given to `accounts add --partner`'s
 * store call, and its schema migrated.
 */
export async function startPartnerHarness(
  simulator: SimulatorOptions = {},
): Promise<PartnerHarness> {
  const counts = { jobs: 30, job_posts: 30, tracking_links: 30 };
  const sim = await ApiSimulator.start({
    clientSecrets: [DEFAULT_CLIENT_SECRET],
    accounts: [{ name: 'acme', dataset: { seed: 5, idOffset: 1_000_000, counts } }],
    ...simulator,
  });
  const database = await createTestDatabase(inject('databaseUrl'));
  const env: Record<string, string> = {
    ...servicesEnv(database.url),
    ...simulatorEnv(sim),
    ...PARTNER_APP_ENV,
    HIRESYNC_RUN_BACKOFF: '100ms',
    HIRESYNC_RUN_ATTEMPTS: '2',
    HIRESYNC_PER_PAGE: '10',
    LOG_LEVEL: 'warn',
  };
  const close = async () => {
    await clearRedisPrefix(env);
    await database.drop();
    await sim.close();
  };
  try {
    const config = loadConfig(env, RESOURCE_NAMES);
    await migrateAll(database.db);
    const store = new AccountStore(database.db, config.secretKeys, { partner: config.partner });
    // The customer approves; the partner's own web app exchanges the code and
    // hands hiresync the refresh token (accounts add --partner).
    await store.addPartner('acme', sim.url, sim.authUrl, new Secret(await grantRefreshToken(sim)));
    await migrateAll(database.db);
    const app = (options: AppOptions = {}) =>
      createApp(config, captureLogger('warn').logger, {
        defaultMetrics: false,
        registry: registryOf(config),
        ...options,
      });
    return {
      sim,
      database,
      env,
      config,
      store,
      app,
      sync: async () => {
        const a = app();
        try {
          return await runOnce(a, [{ account: 'acme', resource: 'jobs' }], 'full');
        } finally {
          await a.close();
        }
      },
      provider: async (tokens) => tokenProviderOf(await store.resolve('acme'), tokens),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
