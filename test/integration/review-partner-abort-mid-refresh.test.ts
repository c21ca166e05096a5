// Found by review (partner integrations): a refresh grant already sent was
// aborted when its callers gave up (SIGTERM's shutdown signal, a lost run
// lock), so the rotated refresh token in its answer was lost and an ordinary
// deploy could break an account. A grant that has left now runs to its
// answer, and closing the app waits for it.
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { createHttp } from '../../src/api/http.js';
import { TokenProvider } from '../../src/api/token-provider.js';
import type { TokenStore } from '../../src/api/token-store.js';
import { createApp } from '../../src/app.js';
import { registryOf } from '../../src/commands/account-options.js';
import { loadConfig } from '../../src/config.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { runOnce } from '../../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { Secret } from '../../src/secret.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { migrateAll } from '../../src/warehouse/account-schemas.js';
import { captureLogger } from '../support/capture-logger.js';
import { createTestDatabase } from '../support/databases.js';
import { grantRefreshToken as grant } from '../support/partner-grant.js';

const counts = { jobs: 30, job_posts: 30, tracking_links: 30 };
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp() {
  const sim = await ApiSimulator.start({
    clientSecrets: ['sync-secret'],
    accounts: [{ name: 'acme', dataset: { seed: 5, idOffset: 1_000_000, counts } }],
  });
  cleanups.push(() => sim.close());
  const database = await createTestDatabase(inject('databaseUrl'));
  cleanups.push(() => database.drop());
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    REDIS_URL: inject('redisUrl'),
    HIRESYNC_REDIS_PREFIX: `test-${randomUUID()}`,
    HIRESYNC_SECRET_KEY: randomBytes(32).toString('base64'),
    HIRESYNC_BASE_URL: sim.url,
    HIRESYNC_AUTH_URL: sim.authUrl,
    HIRESYNC_CLIENT_ID: 'demo-client',
    HIRESYNC_CLIENT_SECRET: 'sync-secret',
    HIRESYNC_PARTNER_CLIENT_ID: 'partner-client',
    HIRESYNC_PARTNER_CLIENT_SECRET: 'partner-secret',
    HIRESYNC_RUN_BACKOFF: '100ms',
    HIRESYNC_RUN_ATTEMPTS: '2',
    HIRESYNC_PER_PAGE: '10',
    LOG_LEVEL: 'warn',
  };
  cleanups.push(async () => {
    const redis = new Redis(env.REDIS_URL as string);
    await deletePrefix(redis, env.HIRESYNC_REDIS_PREFIX as string);
    redis.disconnect();
  });
  const config = loadConfig(env, RESOURCE_NAMES);
  await migrateAll(database.db);
  const store = new AccountStore(database.db, config.secretBox, { partner: config.partner });
  await store.addPartner('acme', sim.url, sim.authUrl, new Secret(await grant(sim)));
  await migrateAll(database.db);
  return { sim, config, store };
}

/** Shares nothing: every provider's first getToken is a refresh grant. */
const noSharing: TokenStore = {
  read: async () => undefined,
  write: async () => {},
  tryLock: async () => ({ release: async () => {}, lost: new AbortController().signal }),
};

async function providerOf(store: AccountStore): Promise<TokenProvider> {
  const resolved = await store.resolve('acme');
  return new TokenProvider({
    auth: resolved.auth,
    http: createHttp({ timeoutMs: 5000 }),
    store: noSharing,
    logger: captureLogger('silent').logger,
    maxRetries: 0,
    defaultRetryAfterMs: 100,
    refreshTokens: resolved.refreshTokens,
  });
}

describe('review: a refresh grant in flight when its callers give up', () => {
  it('keeps the rotated refresh token when the only caller aborts after the grant was sent', async () => {
    const { sim, store } = await setUp();
    const caller = new AbortController();
    // The endpoint has rotated the token; the caller (a run stopping on
    // SIGTERM) gives up before the answer arrives.
    const off = sim.onRefresh(async () => {
      caller.abort(new Error('shutting down'));
      await sleep(200);
    });
    const provider = await providerOf(store);
    await expect(provider.getToken(caller.signal)).rejects.toThrow();
    off();
    await sleep(500);

    // The next refresh (the next worker) must work: the rotation was not lost.
    const next = await (await providerOf(store))
      .getToken()
      .then(() => 'ok')
      .catch((error: unknown) => (error as Error).message);
    expect(next).toBe('ok');
    expect(sim.partnerStats('acme').invalidGrants).toBe(0);
    expect((await store.get('acme'))?.state).toBe('enabled');
  });

  it('a worker shut down (SIGTERM) while a run refreshes the token leaves the account usable', async () => {
    const { sim, config, store } = await setUp();
    const app = createApp(config, captureLogger('silent').logger, {
      defaultMetrics: false,
      registry: registryOf(config),
    });
    // SIGTERM arrives just as the token endpoint rotates the refresh token.
    const off = sim.onRefresh(async () => {
      app.shutdown.abort(new Error('shutting down'));
      await sleep(200);
    });
    await runOnce(app, [{ account: 'acme', resource: 'jobs' }], 'full').catch(() => undefined);
    off();
    await app.close();
    expect(sim.partnerStats('acme').refreshes).toBe(1);

    // The next worker start.
    const next = createApp(config, captureLogger('silent').logger, {
      defaultMetrics: false,
      registry: registryOf(config),
    });
    try {
      const [outcome] = await runOnce(next, [{ account: 'acme', resource: 'jobs' }], 'full');
      expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true });
    } finally {
      await next.close();
    }
    expect((await store.get('acme'))?.state).toBe('enabled');
    expect(sim.partnerStats('acme').invalidGrants).toBe(0);
  });
});
