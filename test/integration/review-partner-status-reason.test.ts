// Found by review (partner integrations): `status` said an account needs
// re-authorizing but not why; `accounts list` did. Both now give the reason.
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { createHttp } from '../../src/api/http.js';
import { TokenProvider } from '../../src/api/token-provider.js';
import type { TokenStore } from '../../src/api/token-store.js';
import { loadConfig } from '../../src/config.js';
import { main } from '../../src/main.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { Secret } from '../../src/secret.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { migrateAll } from '../../src/warehouse/account-schemas.js';
import { captureLogger } from '../support/capture-logger.js';
import { createTestDatabase } from '../support/databases.js';
import { grantRefreshToken as grant } from '../support/partner-grant.js';
import { captureIo } from '../unit/commands/capture-io.js';

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
  return { sim, config, store, env };
}

/** Shares nothing: every provider's first getToken is a refresh grant. */
const noSharing: TokenStore = {
  read: async () => undefined,
  write: async () => {},
  tryLock: async () => ({ release: async () => {}, lost: new AbortController().signal }),
};

describe('review: status of an account that needs re-authorizing', () => {
  it('shows the reason, as accounts list does', async () => {
    const { sim, store, env } = await setUp();
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
    sim.revokeAuthorization('acme');
    await provider.getToken().catch(() => undefined);
    const reason = (await store.get('acme'))?.partner?.reauthorizationReason as string;
    expect(reason).toContain('authorization revoked');

    const list = captureIo();
    expect(await main(['accounts', 'list'], env, list)).toBe(0);
    expect(list.out()).toContain('authorization revoked');
    const status = captureIo();
    expect(await main(['status', '--account', 'acme'], env, status)).toBe(0);
    expect(status.out()).toContain('hiresync accounts authorize acme');
    expect(status.out()).toContain('authorization revoked');
  });
});
