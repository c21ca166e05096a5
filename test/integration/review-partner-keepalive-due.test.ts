// Found by review (partner keep-alive): an account was due only once a whole
// keep-alive old, so with a tick of keepalive/6 it could go up to keepalive +
// one tick unrefreshed. It is now due one tick early: refreshed at least
// every HIRESYNC_REFRESH_KEEPALIVE, as the contract says.
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { loadConfig } from '../../src/config.js';
import { keepaliveTickMs } from '../../src/queue/keepalive.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { Secret } from '../../src/secret.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { migrateAll } from '../../src/warehouse/account-schemas.js';
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
  return { sim, config, store, database };
}

describe('review: the keep-alive due computation', () => {
  it('takes an account that would pass HIRESYNC_REFRESH_KEEPALIVE before the next tick', async () => {
    const { store, database } = await setUp();
    const keepaliveMs = 6 * 3_600_000; // the default 6h
    const tickMs = keepaliveTickMs(keepaliveMs); // 1h
    // Last refreshed half a tick short of the keep-alive: not refreshed at this
    // tick, it would wait for the next one, up to keepalive + tick/2 in all.
    const ageMs = keepaliveMs - tickMs / 2;
    await sql`update hiresync.refresh_tokens
      set authorized_at = now() - interval '2 days',
          refreshed_at = now() - ${ageMs} * interval '1 millisecond'`.execute(database.db);
    const dueNow = await store.partnerAccountsDue(keepaliveMs);
    // Not refreshed now means refreshed at the next tick at the earliest:
    const nextRefreshAgeMs = dueNow.includes('acme') ? ageMs : ageMs + tickMs;
    expect(nextRefreshAgeMs).toBeLessThanOrEqual(keepaliveMs);
  });
});
