// Found by review (partner integrations): a 401 invalid_client (the partner
// APP's own credentials wrong) put every customer account that refreshed in
// needs_reauthorization. RFC 6749 5.2 tells invalid_client from invalid_grant:
// the former is the partner app's error, and fixing the secret is enough.
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

describe("review: the partner app's own credentials refused (401 invalid_client)", () => {
  it('does not put the customer accounts in needs_reauthorization: fixing the secret restores them', async () => {
    const { sim, config, store } = await setUp();
    // The operator deploys with a mistyped partner client secret.
    const partner = config.partner as NonNullable<typeof config.partner>;
    const mistyped = { ...partner, clientSecret: new Secret('partner-secret-typo') };
    const resolved = await store.resolve('acme');
    const wrongAuth = { ...resolved.auth, clientSecret: mistyped.clientSecret };
    const provider = new TokenProvider({
      auth: wrongAuth,
      http: createHttp({ timeoutMs: 5000 }),
      store: noSharing,
      logger: captureLogger('silent').logger,
      maxRetries: 0,
      defaultRetryAfterMs: 100,
      refreshTokens: resolved.refreshTokens,
    });
    const refused = await provider.getToken().catch((error: unknown) => error as Error);
    expect(refused).toBeInstanceOf(Error);
    // Nothing about the customer's grant is wrong.
    expect(sim.partnerStats('acme').invalidGrants).toBe(0);
    expect.soft((await store.get('acme'))?.state).toBe('enabled');

    // The secret is fixed: the account works again with its (valid) refresh token.
    const fixed = await store
      .resolve('acme')
      .then(() => 'resolved')
      .catch((error: unknown) => (error as Error).message);
    expect(fixed).toBe('resolved');
  });
});
