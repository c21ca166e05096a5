import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { createApp } from '../../src/app.js';
import { registryOf } from '../../src/commands/account-options.js';
import { loadConfig } from '../../src/config.js';
import { main } from '../../src/main.js';
import { keepAlive } from '../../src/queue/keepalive.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { runOnce } from '../../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { Secret } from '../../src/secret.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { migrateAll } from '../../src/warehouse/account-schemas.js';
import { captureLogger } from '../support/capture-logger.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { grantRefreshToken as grant } from '../support/partner-grant.js';
import { CLI } from '../support/run-cli.js';
import { captureIo } from '../unit/commands/capture-io.js';

const counts = { jobs: 30, job_posts: 30, tracking_links: 30 };
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A simulator with a customer `acme`, a database with `acme` connected as a partner account. */
async function setUp(simulator: Parameters<typeof ApiSimulator.start>[0] = {}) {
  const sim = await ApiSimulator.start({
    clientSecrets: ['sync-secret'],
    accounts: [{ name: 'acme', dataset: { seed: 5, idOffset: 1_000_000, counts } }],
    ...simulator,
  });
  cleanups.push(() => sim.close());
  const database: TestDatabase = await createTestDatabase(inject('databaseUrl'));
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
  // The customer approves; the partner's own web app exchanges the code and
  // hands hiresync the refresh token (accounts add --partner).
  const granted = { refresh_token: await grant(sim) };
  await store.addPartner('acme', sim.url, sim.authUrl, new Secret(granted.refresh_token));
  await migrateAll(database.db);
  const sync = async () => {
    const app = createApp(config, captureLogger('warn').logger, {
      defaultMetrics: false,
      registry: registryOf(config),
    });
    try {
      return await runOnce(app, [{ account: 'acme', resource: 'jobs' }], 'full');
    } finally {
      await app.close();
    }
  };
  return { sim, database, env, config, store, sync };
}

describe('a process killed when a rotated refresh token arrives', () => {
  it('leaves the account clearly marked needs_reauthorization, never silently stuck; authorizing again restores it with its data', async () => {
    const { sim, env, store, sync } = await setUp();
    expect(await sync()).toMatchObject([{ ok: true, summary: { records: 30 } }]);
    // The access token expires: the next run's first request needs a refresh.
    sim.expireTokens('acme');
    // A `sync` in its own process; the simulator kills it (kill -9) once it has
    // rotated the refresh token, before the answer leaves.
    const child = spawn(
      process.execPath,
      [CLI, 'sync', '--account', 'acme', '--resource', 'jobs'],
      { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    const off = sim.onRefresh(async (account) => {
      if (account !== 'acme') return;
      child.kill('SIGKILL');
      await exited;
    });
    expect(await exited).toBe('SIGKILL');
    off();
    expect(sim.partnerStats('acme').refreshes).toBe(2);

    // The next run finds the refresh marked as started: the stored token was
    // rotated away, the API refuses it, and the account says so.
    const [outcome] = await sync();
    expect(outcome).toMatchObject({ ok: false });
    const error = outcome && !outcome.ok ? outcome.error : '';
    expect(error).toMatch(/needs re-authorizing/);
    expect(error).toMatch(/hiresync accounts authorize acme/);
    const [info] = await store.list();
    expect(info).toMatchObject({ name: 'acme', state: 'needs_reauthorization' });
    expect(info?.partner?.reauthorizationReason).toMatch(/interrupted/);
    const list = captureIo();
    expect(await main(['accounts', 'list'], env, list)).toBe(0);
    expect(list.out()).toMatch(/acme.*needs_reauthorization/);
    expect(list.out()).toMatch(/hiresync accounts authorize acme/);
    const status = captureIo();
    expect(await main(['status', '--account', 'acme'], env, status)).toBe(0);
    expect(status.out()).toMatch(
      /^acme\s+jobs\s.*needs re-authorizing: run 'hiresync accounts authorize acme'$/m,
    );

    // Later runs are skipped, not retried against the API.
    const before = sim.partnerStats('acme').refreshes;
    const [skipped] = await sync();
    expect(skipped).toMatchObject({ ok: false, error: expect.stringMatching(/authorize/) });
    expect(sim.partnerStats('acme').refreshes).toBe(before);

    // The customer authorizes again: the account is back, its data kept.
    await store.authorize('acme', new Secret(await grant(sim)));
    const [restored] = await sync();
    expect(restored).toMatchObject({ ok: true, summary: { records: 30, deleted: 0 } });
    expect((await store.list())[0]).toMatchObject({ state: 'enabled' });
  });

  it('recovers by itself when the token endpoint never answered the interrupted refresh', async () => {
    const { sim, store, sync } = await setUp({ rotateRefreshTokens: false });
    sim.dropNextRefreshResponse('acme');
    // The first attempt's refresh gets no answer (the grant is never sent
    // twice): the attempt fails; the retry finds the refresh marked, tries
    // the stored token, which the API never rotated, and goes on.
    const [outcome] = await sync();
    expect(outcome).toMatchObject({ ok: true, summary: { records: 30 } });
    expect(sim.partnerStats('acme')).toMatchObject({ refreshes: 2, invalidGrants: 0 });
    const [info] = await store.list();
    expect(info).toMatchObject({ state: 'enabled' });
    expect(info?.partner?.refreshInterrupted).toBe(false);
  });
});

describe('the partner keep-alive', () => {
  it('refreshes an idle partner account (rotating its refresh token) and nothing else', async () => {
    const { sim, config, store } = await setUp();
    const app = createApp(config, captureLogger('warn').logger, {
      defaultMetrics: false,
      registry: registryOf(config),
    });
    cleanups.push(() => app.close());
    const renew = async (account: string) => (await app.contextOf(account)).renewToken?.();
    const log = captureLogger('info');
    // Just authorized: not due.
    expect(
      await keepAlive({
        due: () => store.partnerAccountsDue(3_600_000),
        renew,
        logger: log.logger,
      }),
    ).toEqual({ renewed: [], failed: [] });
    // Idle past the keep-alive (0 here): refreshed twice, each time with the token rotated the time before.
    for (let i = 1; i <= 2; i += 1) {
      expect(
        await keepAlive({ due: () => store.partnerAccountsDue(0), renew, logger: log.logger }),
      ).toEqual({ renewed: ['acme'], failed: [] });
      expect(sim.partnerStats('acme')).toMatchObject({ refreshes: i, invalidGrants: 0 });
    }
  });
});
