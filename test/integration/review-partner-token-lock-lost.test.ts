// Found by review (partner integrations): losing the Redis token lock during
// a refresh grant made the provider mint again, presenting a refresh token
// the first grant may have rotated away. A grant that has left is never sent
// again; the Postgres advisory lock alone keeps refreshes single-flight.
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
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

/** A token store whose locks can be lost on demand (Redis lost the key, a failover). */
function losableLocks(): { store: TokenStore; loseAll: () => void } {
  const held = new Set<AbortController>();
  return {
    store: {
      read: async () => undefined,
      write: async () => {},
      tryLock: async () => {
        const lost = new AbortController();
        held.add(lost);
        return {
          release: async () => {
            held.delete(lost);
          },
          lost: lost.signal,
        };
      },
    },
    loseAll: () => {
      for (const lock of held) lock.abort(new Error('token lock lost'));
    },
  };
}

async function providerOf(store: AccountStore, tokens: TokenStore): Promise<TokenProvider> {
  const resolved = await store.resolve('acme');
  return new TokenProvider({
    auth: resolved.auth,
    http: createHttp({ timeoutMs: 5000 }),
    store: tokens,
    logger: captureLogger('silent').logger,
    maxRetries: 0,
    defaultRetryAfterMs: 100,
    refreshTokens: resolved.refreshTokens,
  });
}

describe('review: the Redis token lock lost during a partner refresh grant', () => {
  it('never presents a refresh token a second time: the account stays enabled', async () => {
    const { sim, store } = await setUp();
    const locks = losableLocks();
    let lost = false;
    // The endpoint has rotated the token; the Redis lock is lost before the answer is read.
    const off = sim.onRefresh(async () => {
      if (lost) return;
      lost = true;
      locks.loseAll();
      await sleep(200);
    });
    const provider = await providerOf(store, locks.store);
    const outcome = await provider
      .getToken()
      .then(() => 'ok')
      .catch((error: unknown) => (error as Error).message);
    off();
    await sleep(300);
    // Whatever this call returns, no refresh token may be presented twice and
    // the account must not be broken by a lock hiccup.
    expect(sim.partnerStats('acme').invalidGrants, outcome).toBe(0);
    expect((await store.get('acme'))?.state, outcome).toBe('enabled');
  });
});
