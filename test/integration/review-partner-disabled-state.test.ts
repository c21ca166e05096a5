// Found by review (partner integrations): a refused refresh turned a
// DISABLED account into needs_reauthorization, and `accounts authorize` then
// enabled it. Only an enabled account changes state on a refusal; enabling
// stays the operator's decision.
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { createHttp } from '../../src/api/http.js';
import { TokenProvider } from '../../src/api/token-provider.js';
import type { TokenStore } from '../../src/api/token-store.js';
import { loadConfig } from '../../src/config.js';
import { deletePrefix } from '../../src/queue/redis.js';
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

describe('review: a disabled partner account whose refresh is refused', () => {
  it('stays disabled, and stays disabled after accounts authorize', async () => {
    const { sim, store } = await setUp();
    // A run resolved the account (and its vault) while it was enabled.
    const resolved = await store.resolve('acme');
    const provider = new TokenProvider({
      auth: resolved.auth,
      http: createHttp({ timeoutMs: 5000 }),
      store: noSharing,
      logger: captureLogger('silent').logger,
      maxRetries: 0,
      defaultRetryAfterMs: 100,
      refreshTokens: resolved.refreshTokens,
    });
    // The operator disables it; meanwhile the customer revoked the app.
    await store.setState('acme', 'disabled');
    sim.revokeAuthorization('acme');
    await provider.getToken().catch(() => undefined);
    expect.soft((await store.get('acme'))?.state).toBe('disabled');

    // Authorizing again must not enable it: that is the operator's decision.
    const outcome = await store.authorize('acme', new Secret(await grant(sim)));
    expect(outcome.account.state).toBe('disabled');
  });
});
