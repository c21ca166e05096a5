// Found by review (partner integrations): a 200 answer carrying a rotated
// refresh token but an access token hiresync cannot use threw before the
// rotated token was read, so the vault never committed it. The rotation is
// now read first and committed whatever else is wrong with the answer.
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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

describe('review: a refresh answer with a rotated refresh token but an unusable access token', () => {
  it('still commits the rotated refresh token', async () => {
    const { store } = await setUp();
    // A token endpoint that rotates, and answers an access token holding a CR LF.
    const endpoint = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            access_token: 'broken\r\naccess-token',
            expires_in: 3600,
            refresh_token: 'the-rotated-refresh-token',
          }),
        );
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise((resolve) => endpoint.close(resolve)));
    const { port } = endpoint.address() as AddressInfo;

    const resolved = await store.resolve('acme');
    if (resolved.auth.mode !== 'partner') throw new Error('not a partner account');
    const provider = new TokenProvider({
      auth: { ...resolved.auth, tokenUrl: `http://127.0.0.1:${port}/token` },
      http: createHttp({ timeoutMs: 5000 }),
      store: noSharing,
      logger: captureLogger('silent').logger,
      maxRetries: 0,
      defaultRetryAfterMs: 100,
      refreshTokens: resolved.refreshTokens,
    });
    await expect(provider.getToken()).rejects.toThrow(/cannot be sent in a header/);

    // What the vault would present at the next refresh.
    let stored: string | undefined;
    await resolved.refreshTokens?.exchange(async (refreshToken) => {
      stored = refreshToken;
      return { value: undefined, rotated: undefined };
    });
    expect(stored).toBe('the-rotated-refresh-token');
  });
});
