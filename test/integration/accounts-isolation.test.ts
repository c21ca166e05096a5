// One account's trouble stays its own: a credential no key opens, a schema
// never made ready, a migration that fails on its schema, its API's rate
// limiting, or its removal never stop, slow or break another account.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { secretPurpose } from '../../src/accounts/account-credentials.js';
import { SecretBox } from '../../src/accounts/secret-box.js';
import { main } from '../../src/main.js';
import { enqueueRun, type SyncJob } from '../../src/queue/sync-job.js';
import { Secret } from '../../src/secret.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { defer, accounts } = cleanupAfterEach();

describe("one account's broken state and the commands over several accounts", () => {
  it("`sync --account alpha --account beta` still syncs beta when no configured key opens alpha's credential", async () => {
    const h = await accounts({ accounts: ['alpha', 'beta'] });
    // alpha's credential was sealed with a key this host no longer holds.
    const lost = new SecretBox([randomBytes(32)]);
    await sql`update hiresync.accounts set secret = ${lost.seal('alpha-secret', secretPurpose('alpha'))}
              where name = 'alpha'`.execute(h.database.db);
    const io = captureIo();
    const code = await main(
      ['sync', '--account', 'alpha', '--account', 'beta', '--resource', 'jobs'],
      h.env,
      io,
    );
    expect(code).toBe(1);
    expect(io.err()).toMatch(/HIRESYNC_SECRET_KEY/);
    // docs/accounts.md: "A credential no configured key opens fails only that account's runs".
    expect(await h.liveIds('beta', 'jobs'), "beta's jobs").toEqual(h.expectedIds('beta', 'jobs'));
  });

  it('`status` still reports every other account when one registered account has no schema (its add could not migrate it)', async () => {
    const h = await accounts({ accounts: ['alpha'] });
    // Registered, but its schema never made ready (the add's migration failed, or
    // another `status` ran between the add's insert and its migration).
    await h.store.add({
      name: 'gamma',
      baseUrl: h.sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: h.sim.authUrl,
        clientId: 'gamma-client',
        clientSecret: new Secret('gamma-secret'),
      },
    });
    const io = captureIo();
    const code = await main(['status'], h.env, io);
    expect({ code, stderr: io.err() }).toEqual({ code: 0, stderr: '' });
    expect(io.out()).toMatch(/^alpha\s+jobs/m);
    expect(io.out()).toMatch(/^default\s+jobs/m);
  });
});

describe('hiresync migrate failing on one account schema', () => {
  it('leaves the all_accounts views of every other account in place (that account left out, with a warning)', async () => {
    const h = await accounts({ accounts: ['alpha', 'beta'] });
    const db = h.database.db;
    expect(await h.sync([{ account: 'beta', resource: 'jobs' }])).toMatchObject([{ ok: true }]);
    // A release changes the shared tables (every schema's views to make again),
    // and alpha's schema holds a table of its own where a view must go.
    await sql`update hiresync.schema_layouts set layout = 'an earlier release'`.execute(db);
    await sql`drop view alpha.sources cascade`.execute(db);
    await sql`create table alpha.sources (note text)`.execute(db);
    const io = captureIo();
    const code = await main(['migrate'], { DATABASE_URL: h.database.url }, io);
    expect(code, io.err()).toBe(1);
    const { rows } = await sql<{ view: string | null }>`
      select to_regclass('all_accounts.jobs')::text as view`.execute(db);
    expect(rows, 'all_accounts.jobs after the failed migrate').toEqual([
      { view: 'all_accounts.jobs' },
    ]);
    const { rows: registered } = await sql<{ account: string }>`
      select distinct account from all_accounts.jobs order by account`.execute(db);
    expect(registered.map((r) => r.account)).toContain('beta');
  });
});

describe("one account's rate limiting", () => {
  it("never holds another account's run back (docs/accounts.md: one account's 429s never slow another)", async () => {
    const h = await accounts({
      accounts: ['slow', 'fast'],
      records: 10,
      env: { HIRESYNC_CONCURRENCY: '2' },
    });
    // slow's API answers its next requests with 429 and Retry-After: 10 minutes
    // (within HIRESYNC_MAX_RETRY_AFTER: hiresync waits them out, and longer than
    // the test, so slow's runs are still waiting when fast's is done).
    h.sim.inject({ kind: 'rate-limit', retryAfterS: 600 }, 2, 'slow');
    const app = h.app();
    defer(() => app.close());
    const queued: SyncJob[] = [];
    for (const [account, resource] of [
      ['slow', 'jobs'],
      ['slow', 'job_posts'],
      ['fast', 'jobs'],
    ] as const) {
      queued.push(
        await enqueueRun(
          app.queue,
          { account, resource, requested: 'full', origin: 'cli' },
          h.config,
        ),
      );
    }
    const [slowJobs, slowPosts, fast] = queued as [SyncJob, SyncJob, SyncJob];
    app.startWorker();
    // fast's run is one page of 17 records, which its API serves at once.
    const state = await waitFor(
      async () => {
        const s = await fast.getState();
        return s === 'completed' || s === 'failed' ? s : undefined;
      },
      80_000,
      50,
    );
    expect(state).toBe('completed');
    // slow's runs, queued first, took both worker slots; fast's run finished
    // while they waited out their Retry-After off the slots, before slow's API
    // had answered anything but 429.
    expect(await slowJobs.getState()).toBe('delayed');
    expect(await slowPosts.getState()).toBe('delayed');
    const slow = h.sim.statsOf('slow');
    expect(slow.listRequests).toBeGreaterThan(0);
    expect(slow.byStatus['429']).toBe(slow.listRequests);
    expect(h.log.text()).toContain('run waiting for its rate limit off the worker slot');
  }, 120_000);
});

describe('accounts remove of an account sharing its credential', () => {
  it("keeps the token and pacing keys default (the environment's account) still uses", async () => {
    const h = await accounts({ accounts: [] });
    // 'twin' was registered with the environment's own client (same auth URL, client id, secret).
    await h.store.add({
      name: 'twin',
      baseUrl: h.sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: h.sim.authUrl,
        clientId: h.env.HIRESYNC_CLIENT_ID as string,
        clientSecret: new Secret(h.env.HIRESYNC_CLIENT_SECRET as string),
      },
    });
    expect(await h.sync([{ account: 'default', resource: 'jobs' }])).toMatchObject([{ ok: true }]);
    const redis = new Redis(h.env.REDIS_URL as string);
    defer(() => redis.disconnect());
    const prefix = h.config.redisPrefix;
    const before = (await redis.keys(`${prefix}:token:*`)).concat(
      await redis.keys(`${prefix}:rate:*`),
    );
    expect(before.length).toBeGreaterThan(0);

    const io = captureIo();
    expect(await main(['accounts', 'remove', 'twin'], h.env, io)).toBe(0);
    const after = (await redis.keys(`${prefix}:token:*`)).concat(
      await redis.keys(`${prefix}:rate:*`),
    );
    // docs/accounts.md: "keys shared with another account's identical credentials stay".
    expect(after.sort(), "default's token and pacing keys").toEqual(before.sort());
  });
});
