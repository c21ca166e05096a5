// `hiresync accounts test NAME` mints a token with an account's stored
// credentials and reads one page of each resource, printing per resource ok,
// not permitted (scope …) or the error; it stores nothing of a run. `accounts
// add` runs that test unless --no-test: a credential that cannot mint a token
// is refused and nothing is registered; once registered, add exits 0 and
// prints each resource's outcome. Real Postgres, Redis and the simulator.
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { runAccounts } from '../support/accounts-cli.js';
import type { AccountsHarness } from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { grantRefreshToken } from '../support/partner-grant.js';
import type { PartnerHarness } from '../support/partner-harness.js';
import { DEFAULT_CLIENT_SECRET } from '../support/test-env.js';

const { accounts: startAccounts, partner: startPartner } = cleanupAfterEach();

const EVERY_SCOPE = ['jobs', 'job_posts', 'tracking_links'].map((r) => `harvest:${r}:list`);
const WITHOUT_JOB_POSTS = EVERY_SCOPE.filter((s) => s !== 'harvest:job_posts:list');
const RESOURCES = 'jobs,job_posts,tracking_links';

/** `hiresync accounts ARGV` in process, in `env`, with `input` on standard input. */
function accounts(env: Record<string, string>, argv: string[], input = '') {
  return runAccounts(env, argv, input);
}

/**
 * Every Redis key under the deployment's prefix but the queue's metadata
 * (`sync:meta`), which BullMQ writes when any hiresync process opens the
 * shared queue and which names no account.
 */
async function redisKeys(env: Record<string, string>): Promise<string[]> {
  const redis = new Redis(inject('redisUrl'));
  try {
    const keys = await redis.keys(`${env.HIRESYNC_REDIS_PREFIX}:*`);
    return keys.filter((k) => k !== `${env.HIRESYNC_REDIS_PREFIX}:sync:meta`).sort();
  } finally {
    redis.disconnect();
  }
}

async function schemaExists(h: { database: AccountsHarness['database'] }, schema: string) {
  const { rows } = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(
    h.database.db,
  );
  return rows.length === 1;
}

/** A loopback URL where nothing listens. */
async function closedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

/** The sealed refresh token stored for partner account `name`. */
async function sealedRefreshToken(h: PartnerHarness, name: string): Promise<string | undefined> {
  const { rows } = await sql<{
    token: string;
  }>`select token from hiresync.refresh_tokens where account = ${name}`.execute(h.database.db);
  return rows[0]?.token;
}

describe('hiresync accounts test', () => {
  it('mints a token, reads one page of one record of each resource and prints ok for each; stores no run, no row, no checkpoint', async () => {
    const h = await startAccounts({ accounts: ['acme'], env: { HIRESYNC_RESOURCES: RESOURCES } });
    const result = await accounts(h.env, ['test', 'acme']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      [
        'account acme (client credentials): access token minted',
        '  jobs            ok',
        '  job_posts       ok',
        '  tracking_links  ok',
        '',
      ].join('\n'),
    );
    const stats = h.sim.statsOf('acme');
    expect(stats).toMatchObject({ listRequests: 3, tokensIssued: 1 });
    const targets = h.sim.stats.receivedTargets;
    expect(targets).toHaveLength(3);
    for (const target of targets) expect(target).toContain('per_page=1');
    for (const table of ['hiresync.data_sync_runs', 'hiresync.data_jobs']) {
      const { rows } = await sql`select id from ${sql.table(table)} where account = 'acme'`.execute(
        h.database.db,
      );
      expect(rows).toEqual([]);
    }
    // The token it minted is shared, and its requests paced, as a run's; no checkpoint, lock or job.
    const keys = await redisKeys(h.env);
    expect(keys.filter((k) => !/:(token|rate):[0-9a-f]{32}$/.test(k))).toEqual([]);
    expect(keys.filter((k) => k.includes(':token:'))).toHaveLength(1);
  });

  it('tests default, the environment credentials, too', async () => {
    const h = await startAccounts({ accounts: [], env: { HIRESYNC_RESOURCES: 'jobs' } });
    const result = await accounts(h.env, ['test', 'default']);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toBe(
      'account default (client credentials): access token minted\n  jobs  ok\n',
    );
  });

  it('prints the error of an unreachable base URL, what to do, and exits 1', async () => {
    const h = await startAccounts({
      accounts: ['acme'],
      env: { HIRESYNC_MAX_RETRIES: '0', HIRESYNC_RESOURCES: 'jobs' },
    });
    const url = await closedUrl();
    expect(await accounts(h.env, ['update', 'acme', '--base-url', url])).toMatchObject({
      code: 0,
    });
    const result = await accounts(h.env, ['test', 'acme']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('account acme (client credentials): access token minted\n');
    expect(result.stdout).toMatch(
      /^ {2}jobs +failed: GET \/v3\/jobs failed 1 times \(ECONNREFUSED\); /m,
    );
    expect(result.stdout).toContain(
      `(ECONNREFUSED); ${url} is unreachable: check account acme's base URL ('hiresync accounts update acme --base-url URL' changes it) and the network\n`,
    );
  });

  it('says no token could be minted with a refused secret, reads nothing and exits 1', async () => {
    const h = await startAccounts({ accounts: ['acme'] });
    expect(await accounts(h.env, ['update', 'acme'], 'not-the-secret\n')).toMatchObject({
      code: 0,
    });
    const result = await accounts(h.env, ['test', 'acme']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^account acme \(client credentials\): no access token could be minted with its credentials: account acme: the token service refused its client secret \(401/,
    );
    expect(result.stdout).not.toContain('not-the-secret');
    expect(h.sim.statsOf('acme').listRequests).toBe(0);
  });

  it('tests a disabled account, which stays disabled', async () => {
    const h = await startAccounts({ accounts: ['acme'], env: { HIRESYNC_RESOURCES: 'jobs' } });
    expect(await accounts(h.env, ['disable', 'acme'])).toMatchObject({ code: 0 });
    const result = await accounts(h.env, ['test', 'acme']);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toContain('  jobs  ok');
    expect(await h.store.get('acme')).toMatchObject({ state: 'disabled' });
  });

  it('refuses an account that is not registered: exit 1', async () => {
    const h = await startAccounts({ accounts: [] });
    expect(await accounts(h.env, ['test', 'ghost'])).toMatchObject({
      code: 1,
      stdout: '',
      stderr: expect.stringContaining('no account ghost is registered'),
    });
  });

  it("prints a partner account's resource without its scope as not permitted (scope …), exits 1, and stores each rotated refresh token", async () => {
    const h = await startPartner({ resourceScopes: true, partnerScopes: EVERY_SCOPE });
    const env = { ...h.env, HIRESYNC_RESOURCES: RESOURCES };
    h.sim.setPartnerScopes('acme', WITHOUT_JOB_POSTS);
    const before = await sealedRefreshToken(h, 'acme');
    const first = await accounts(env, ['test', 'acme']);
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(
      /^account acme \(partner authorization\): access token minted\n {2}jobs +ok\n {2}job_posts +not permitted \(scope harvest:job_posts:list\)\n +403 from \/v3\/job_posts: .*\n {2}tracking_links +ok\n$/,
    );
    const after = await sealedRefreshToken(h, 'acme');
    expect(after).not.toBe(before);
    // The rotated token was stored: the next test's refresh grant is accepted.
    const second = await accounts(env, ['test', 'acme']);
    expect(second.stdout).toContain('access token minted');
    expect(h.sim.partnerStats('acme')).toMatchObject({ refreshes: 2, invalidGrants: 0 });
    // And runs go on with it.
    expect((await h.sync()).every((o) => o.ok)).toBe(true);
  });
});

describe('hiresync accounts add tests the account unless --no-test', () => {
  it('refuses a secret the token service refuses: exit 1, and no row, no schema, no Redis key', async () => {
    const h = await startAccounts({ accounts: [] });
    const result = await accounts(
      h.env,
      ['add', 'beta', '--client-id', 'demo-client'],
      'not-the-secret\n',
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      'hiresync accounts add: account beta was not added, and nothing is registered: no access token could be minted with the credentials given (the token service refused the client secret given (401',
    );
    // Nothing is registered: the fix is another add, not an update of it.
    expect(result.stderr).not.toContain('accounts update');
    expect(result.stderr).not.toContain('not-the-secret');
    expect(await h.store.get('beta')).toBeUndefined();
    expect(await schemaExists(h, 'beta')).toBe(false);
    expect(await redisKeys(h.env)).toEqual([]);
  });

  it('registers an account whose token is minted, then prints ok for each resource', async () => {
    const h = await startAccounts({ accounts: [], env: { HIRESYNC_RESOURCES: RESOURCES } });
    const result = await accounts(
      h.env,
      ['add', 'beta', '--client-id', 'demo-client'],
      `${DEFAULT_CLIENT_SECRET}\n`,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      [
        "added account beta (client credentials, schema beta); it syncs with the next 'hiresync sync' or worker",
        'account beta (client credentials): access token minted',
        '  jobs            ok',
        '  job_posts       ok',
        '  tracking_links  ok',
        '',
      ].join('\n'),
    );
    expect(await h.store.get('beta')).toMatchObject({ state: 'enabled' });
    expect(await schemaExists(h, 'beta')).toBe(true);
    // The token minted before registering is the one the pages were read with.
    expect(h.sim.stats).toMatchObject({ tokensIssued: 1, listRequests: 3 });
  });

  it('--no-test registers without contacting the API, and without REDIS_URL', async () => {
    const h = await startAccounts({ accounts: [] });
    const result = await accounts(
      { ...h.env, REDIS_URL: '' },
      ['add', 'beta', '--client-id', 'demo-client', '--no-test'],
      'whatever-secret\n',
    );
    expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      "added account beta (client credentials, schema beta); it syncs with the next 'hiresync sync' or worker\n",
    );
    expect(h.sim.stats).toMatchObject({ listRequests: 0, tokensIssued: 0 });
    expect(await h.store.get('beta')).toMatchObject({ state: 'enabled' });
  });

  it('adds a partner account whose grant lacks a scope: exit 0, the resource printed as not permitted, the rotated refresh token stored', async () => {
    const h = await startPartner({
      resourceScopes: true,
      partnerScopes: EVERY_SCOPE,
      accounts: ['acme', 'beta'].map((name, i) => ({
        name,
        dataset: { seed: 5 + i, idOffset: (i + 1) * 1_000_000, counts: { jobs: 5 } },
      })),
    });
    const env = { ...h.env, HIRESYNC_RESOURCES: RESOURCES };
    const token = await grantRefreshToken(h.sim, 'beta');
    h.sim.setPartnerScopes('beta', WITHOUT_JOB_POSTS);
    const result = await accounts(env, ['add', 'beta', '--partner'], `${token}\n`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^added account beta \(partner authorization, schema beta\).*\naccount beta \(partner authorization\): access token minted\n {2}jobs +ok\n {2}job_posts +not permitted \(scope harvest:job_posts:list\)\n.*\n {2}tracking_links +ok\n$/,
    );
    expect(result.stdout + result.stderr).not.toContain(token);
    expect(await h.store.get('beta')).toMatchObject({ state: 'enabled' });
    // The refresh token given was rotated by the test; the new one is what is stored.
    expect(await accounts(env, ['test', 'beta'])).toMatchObject({
      stdout: expect.stringContaining('access token minted'),
    });
    expect(h.sim.partnerStats('beta')).toMatchObject({ refreshes: 2, invalidGrants: 0 });
  });

  it('keeps a partner account whose test rotated its refresh token, disabled, when its schema cannot be made ready: the rotated token is not lost', async () => {
    const h = await startPartner({
      accounts: ['acme', 'beta'].map((name, i) => ({
        name,
        dataset: { seed: 5 + i, idOffset: (i + 1) * 1_000_000, counts: { jobs: 5 } },
      })),
    });
    const env = { ...h.env, HIRESYNC_RESOURCES: RESOURCES };
    const token = await grantRefreshToken(h.sim, 'beta');
    // Once the test's grant has rotated the token, another makes a schema beta
    // (not hiresync's): the account's schema cannot be made ready.
    await sql`create function take_schema_beta() returns trigger language plpgsql as $$
      begin create schema if not exists beta; return new; end $$`.execute(h.database.db);
    await sql`create trigger take_schema_beta after update of token on hiresync.refresh_tokens
      for each row execute function take_schema_beta()`.execute(h.database.db);
    const result = await accounts(env, ['add', 'beta', '--partner'], `${token}\n`);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("run 'hiresync accounts enable beta'");
    expect(result.stdout + result.stderr).not.toContain(token);
    expect(h.sim.partnerStats('beta')).toMatchObject({ refreshes: 1 });
    // The refresh token given is spent; the rotated one is stored, and works.
    expect(await h.store.get('beta')).toMatchObject({ state: 'disabled' });
    await sql`drop trigger take_schema_beta on hiresync.refresh_tokens`.execute(h.database.db);
    await sql`drop schema beta`.execute(h.database.db);
    expect((await accounts(env, ['test', 'beta'])).stdout).toContain('access token minted');
    expect(h.sim.partnerStats('beta')).toMatchObject({ refreshes: 2, invalidGrants: 0 });
  });

  it('refuses a partner account whose refresh token is refused: exit 1, and no row, no token, no schema, no Redis key', async () => {
    const h = await startPartner({
      accounts: ['acme', 'beta'].map((name, i) => ({
        name,
        dataset: { seed: 5 + i, idOffset: (i + 1) * 1_000_000, counts: { jobs: 5 } },
      })),
    });
    const keysBefore = await redisKeys(h.env);
    const result = await accounts(h.env, ['add', 'beta', '--partner'], 'not-a-refresh-token\n');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      'account beta was not added, and nothing is registered: no access token could be minted with the credentials given (its refresh token was refused (',
    );
    expect(result.stderr).not.toContain('accounts authorize');
    expect(result.stderr).not.toContain('not-a-refresh-token');
    expect(await h.store.get('beta')).toBeUndefined();
    expect(await sealedRefreshToken(h, 'beta')).toBeUndefined();
    expect(await schemaExists(h, 'beta')).toBe(false);
    expect(await redisKeys(h.env)).toEqual(keysBefore);
    expect(await new AccountStore(h.database.db).names()).toEqual(['acme']);
  });
});
