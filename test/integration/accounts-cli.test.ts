import { randomBytes, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { AccountUnavailableError } from '../../src/accounts/account.js';
import { AccountStore } from '../../src/accounts/account-store.js';
import { SecretKeyError } from '../../src/accounts/secret-box.js';
import { AccountDisabledError, UnknownAccountError } from '../../src/accounts/stored-account.js';
import { main } from '../../src/main.js';
import { deletePrefix } from '../../src/queue/redis.js';
import type { Database } from '../../src/warehouse/tables.js';
import { keysOf, runAccounts } from '../support/accounts-cli.js';
import { captureIo } from '../support/capture-io.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

const CLIENT_SECRET = `client-secret-${randomUUID()}`;
const API_KEY = `api-key-${randomUUID()}`;
// Registration and its edges are what these tests are about, with URLs nothing
// answers at: every `accounts add` passes --no-test (the test of an account's
// credentials is covered by accounts-test.test.ts).
const BASE_URL = 'https://api.example.com/harvest';
const AUTH_URL = 'https://auth.example.com/oauth';

const OLD_KEY = randomBytes(32).toString('base64');
const NEW_KEY = randomBytes(32).toString('hex');

let t: TestDatabase;
let redis: Redis;
let prefix: string;
let env: Record<string, string>;

beforeEach(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
  redis = new Redis(inject('redisUrl'));
  prefix = `test-${randomUUID()}`;
  env = {
    DATABASE_URL: t.url,
    REDIS_URL: inject('redisUrl'),
    HIRESYNC_REDIS_PREFIX: prefix,
    HIRESYNC_SECRET_KEY: OLD_KEY,
    HIRESYNC_BASE_URL: BASE_URL,
    HIRESYNC_AUTH_URL: AUTH_URL,
  };
});
afterEach(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await t.drop();
});

/** `hiresync accounts ARGV` in process, with `input` on standard input. */
function accounts(argv: string[], input = '', overrides: Record<string, string> = {}) {
  return runAccounts({ ...env, ...overrides }, argv, input);
}

/** Every form of a secret that must never be seen: as is, base64, base64url, hex. */
function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret);
  return [secret, bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')];
}

async function addAcme() {
  const result = await accounts(
    ['add', '--no-test', 'acme', '--client-id', 'acme-client', '--sub', '42'],
    `${CLIENT_SECRET}\n`,
  );
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return result;
}

async function schemaExists(db: Kysely<Database>, schema: string): Promise<boolean> {
  const { rows } = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(db);
  return rows.length === 1;
}

async function accountsInView(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ account: string }>`
    select distinct account from all_accounts.jobs order by account`.execute(db);
  return rows.map((r) => r.account);
}

describe('hiresync accounts add', () => {
  it('registers a client-credentials account, migrates its schema, refreshes the views, and never shows or stores the secret in clear', async () => {
    const { stdout } = await addAcme();
    expect(stdout).toBe(
      "added account acme (client credentials, schema acme); it syncs with the next 'hiresync sync' or worker\n",
    );
    const { rows } = await sql<{ row: string }>`
      select row_to_json(a)::text as row from hiresync.accounts a`.execute(t.db);
    expect(rows).toHaveLength(1);
    for (const form of formsOf(CLIENT_SECRET)) expect(rows[0]?.row).not.toContain(form);
    const stored = await t.db.selectFrom('hiresync.accounts').selectAll().executeTakeFirstOrThrow();
    expect(stored).toMatchObject({
      name: 'acme',
      auth_mode: 'client_credentials',
      base_url: BASE_URL,
      auth_url: AUTH_URL,
      client_id: 'acme-client',
      sub: '42',
      state: 'enabled',
      version: '1',
    });
    expect(stored.secret).toMatch(/^hs1\./);
    expect(stored.credential_namespace).toMatch(/^[0-9a-f]{32}$/);
    // Its schema holds its views of shared storage, and the all_accounts views include it.
    const { rows: layout } = await sql`
      select account from hiresync.schema_layouts where schema = 'acme'`.execute(t.db);
    expect(layout).toEqual([{ account: 'acme' }]);
    await sql`insert into acme.jobs (id, data) values (1, '{}')`.execute(t.db);
    await sql`insert into public.jobs (id, data) values (2, '{}')`.execute(t.db);
    expect(await accountsInView(t.db)).toEqual(['acme', 'default']);
    // It resolves to exactly the AuthConfig loadConfig builds from the environment.
    const account = await new AccountStore(t.db, keysOf(OLD_KEY)).resolve('acme');
    expect(account).toMatchObject({
      name: 'acme',
      schema: 'acme',
      baseUrl: BASE_URL,
      // Its registration (created_at) and the row's version.
      version: expect.stringMatching(/#1$/),
    });
    expect(account.auth).toMatchObject({
      mode: 'client_credentials',
      tokenUrl: `${AUTH_URL}/token`,
      clientId: 'acme-client',
      sub: '42',
    });
    expect(account.auth.mode === 'client_credentials' && account.auth.clientSecret.reveal()).toBe(
      CLIENT_SECRET,
    );
  });

  it('registers a transition key from standard input, with --base-url over HIRESYNC_BASE_URL', async () => {
    const result = await accounts(
      ['add', '--no-test', 'beta', '--api-key', '--base-url', 'https://eu.example.com/'],
      `${API_KEY}\r\nignored second line\n`,
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    for (const form of formsOf(API_KEY)) expect(result.stdout).not.toContain(form);
    const account = await new AccountStore(t.db, keysOf(OLD_KEY)).resolve('beta');
    expect(account.baseUrl).toBe('https://eu.example.com');
    expect(account.auth).toMatchObject({
      mode: 'api_key',
      tokenUrl: 'https://eu.example.com/auth/token',
    });
    expect(account.auth.mode === 'api_key' && account.auth.apiKey.reveal()).toBe(API_KEY);
    const { rows } = await sql<{ row: string }>`
      select row_to_json(a)::text as row from hiresync.accounts a`.execute(t.db);
    for (const form of formsOf(API_KEY)) expect(rows[0]?.row).not.toContain(form);
  });

  it('adds accounts concurrently: each is migrated, and the views end up covering both', async () => {
    const results = await Promise.all(
      ['acme', 'beta', 'gamma'].map((name) =>
        accounts(['add', '--no-test', name, '--api-key'], `${API_KEY}-${name}\n`),
      ),
    );
    for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
    for (const name of ['acme', 'beta', 'gamma']) {
      await sql`insert into ${sql.id(name, 'jobs')} (id, data) values (1, '{}')`.execute(t.db);
    }
    expect(await accountsInView(t.db)).toEqual(['acme', 'beta', 'gamma']);
  });

  it('refuses a name already registered with exit 1, leaving the account as it was', async () => {
    await addAcme();
    const again = await accounts(['add', '--no-test', 'acme', '--api-key'], `${API_KEY}\n`);
    expect(again).toEqual({
      code: 1,
      stdout: '',
      stderr:
        "hiresync accounts add: account acme already exists; remove it first ('hiresync accounts remove acme') or choose another name\n",
    });
    const row = await t.db.selectFrom('hiresync.accounts').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ auth_mode: 'client_credentials', version: '1' });
  });

  it('refuses a schema of that name holding tables hiresync did not create', async () => {
    await sql`create schema crm`.execute(t.db);
    await sql`create table crm.contacts (id int)`.execute(t.db);
    const result = await accounts(['add', '--no-test', 'crm', '--api-key'], `${API_KEY}\n`);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('schema crm already exists and hiresync did not create it');
    expect(await new AccountStore(t.db).list()).toEqual([]);
  });
});

describe('hiresync accounts list', () => {
  it('shows default first, then every account with auth mode, schema, state and last success, and no secret', async () => {
    await addAcme();
    await accounts(['add', '--no-test', 'beta', '--api-key'], `${API_KEY}\n`);
    await accounts(['disable', 'beta']);
    await sql`insert into acme.sync_runs (resource, mode, started_at, finished_at, outcome)
      values ('jobs', 'full', '2026-01-02T03:00:00Z', '2026-01-02T03:04:05.123456Z', 'succeeded'),
             ('jobs', 'full', '2026-01-03T03:00:00Z', '2026-01-03T03:01:00Z', 'failed')`.execute(
      t.db,
    );
    const result = await accounts(['list'], '', { HIRESYNC_CLIENT_ID: 'env-client' });
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]?.split(/\s{2,}/)).toEqual([
      'account',
      'auth mode',
      'schema',
      'state',
      'last success',
      'resources',
      'incremental every',
      'full cron',
    ]);
    expect(lines.slice(2).map((l) => l.split(/\s{2,}/))).toEqual([
      ['default', 'client_credentials', 'public', 'enabled', '-', '-', '-', '-'],
      [
        'acme',
        'client_credentials',
        'acme',
        'enabled',
        '2026-01-02 03:04:05.123456+00',
        '-',
        '-',
        '-',
      ],
      ['beta', 'api_key', 'beta', 'disabled', '-', '-', '-', '-'],
    ]);
    for (const form of [...formsOf(CLIENT_SECRET), ...formsOf(API_KEY)]) {
      expect(result.stdout).not.toContain(form);
    }
  });

  it('shows no account default when the environment sets no credentials and default never ran, even before migrate made the control schema', async () => {
    const result = await accounts(['list']);
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n').slice(2)).toEqual([]);
    // With the environment's credentials default is shown, before any account exists.
    const configured = await accounts(['list'], '', { HIRESYNC_API_KEY: API_KEY });
    expect(configured.stdout.trimEnd().split('\n').slice(2)).toEqual([
      expect.stringMatching(/^default\s+api_key\s+public\s+enabled\s+-\s+-\s+-\s+-$/),
    ]);
  });

  it('shows default as not configured here when it has runs but this environment sets no credentials', async () => {
    await addAcme();
    await sql`insert into public.sync_runs (resource, mode, started_at, finished_at, outcome)
      values ('jobs', 'full', '2026-01-02T03:00:00Z', '2026-01-02T03:04:05Z', 'succeeded')`.execute(
      t.db,
    );
    const result = await accounts(['list']);
    expect(result.stdout.trimEnd().split('\n').slice(2)).toEqual([
      expect.stringMatching(
        /^default\s+-\s+public\s+not configured here\s+2026-01-02 03:04:05\+00/,
      ),
      expect.stringMatching(/^acme\s+client_credentials/),
    ]);
  });
});

describe('hiresync accounts disable, enable and remove', () => {
  it("disable removes the account's schedulers at once, its runs resolve as disabled, and enable brings it back", async () => {
    await addAcme();
    await accounts(['add', '--no-test', 'acme2', '--api-key'], `${API_KEY}\n`);
    const queue = new Queue('sync', { connection: redis, prefix });
    try {
      for (const key of [
        'incremental:acme:jobs',
        'full:acme:jobs',
        'full:acme:candidates',
        'incremental:acme2:jobs',
        'incremental:jobs',
      ]) {
        await queue.upsertJobScheduler(key, { every: 3_600_000 }, { name: key, data: {} });
      }
      const result = await accounts(['disable', 'acme']);
      expect(result).toEqual({
        code: 0,
        stdout:
          'disabled account acme; removed 3 job scheduler(s); its data stays in schema acme\n',
        stderr: '',
      });
      const left = (await queue.getJobSchedulers()).map((s) => s.key).sort();
      expect(left).toEqual(['incremental:acme2:jobs', 'incremental:jobs']);
    } finally {
      await queue.close();
    }
    const store = new AccountStore(t.db, keysOf(OLD_KEY));
    const error = await store.resolve('acme').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AccountDisabledError);
    expect(error).toBeInstanceOf(AccountUnavailableError);
    expect((error as Error).message).toBe(
      "account acme is disabled: run 'hiresync accounts enable acme' to sync it again",
    );
    expect(await store.enabledNames()).toEqual(['acme2']);
    expect((await accounts(['disable', 'acme'])).stdout).toContain(
      'account acme was already disabled',
    );
    // Disabled accounts stay readable in the views.
    expect(await accountsInView(t.db)).toEqual([]);
    await sql`insert into acme.jobs (id, data) values (1, '{}')`.execute(t.db);
    expect(await accountsInView(t.db)).toEqual(['acme']);

    expect(await accounts(['enable', 'acme'])).toEqual({
      code: 0,
      stdout: 'enabled account acme\n',
      stderr: '',
    });
    const account = await store.resolve('acme');
    expect(account.version).toMatch(/#3$/);
    expect(await store.enabledNames()).toEqual(['acme', 'acme2']);
  });

  it('disable, enable and remove of an account never registered exit 1 naming it', async () => {
    for (const sub of ['disable', 'enable', 'remove']) {
      const result = await accounts([sub, 'ghost']);
      expect(result, sub).toEqual({
        code: 1,
        stdout: '',
        stderr: `hiresync accounts ${sub}: no account ghost is registered; see 'hiresync accounts list'\n`,
      });
    }
    await expect(new AccountStore(t.db, keysOf(OLD_KEY)).resolve('ghost')).rejects.toBeInstanceOf(
      UnknownAccountError,
    );
  });

  it('remove deletes the row, its schedulers, checkpoints, token, token lock and pacing keys, keeps the data, and leaves the views', async () => {
    await addAcme();
    await accounts(['add', '--no-test', 'acme2', '--api-key'], `${API_KEY}\n`);
    const store = new AccountStore(t.db);
    const ns = (await store.get('acme'))?.credentialNamespace;
    const otherNs = (await store.get('acme2'))?.credentialNamespace;
    expect(ns).toBeTruthy();
    const gone = [
      `${prefix}:checkpoint:acme:jobs`,
      `${prefix}:checkpoint:acme:tracking_links`,
      `${prefix}:token:${ns}`,
      `${prefix}:token-lock:${ns}`,
      `${prefix}:rate:${ns}`,
      `${prefix}:rate:${ns}:probe`,
    ];
    const kept = [
      `${prefix}:checkpoint:jobs`,
      `${prefix}:checkpoint:acme2:jobs`,
      `${prefix}:token:${otherNs}`,
      `${prefix}:rate:${otherNs}`,
    ];
    for (const key of [...gone, ...kept]) await redis.set(key, 'x');
    const queue = new Queue('sync', { connection: redis, prefix });
    try {
      await queue.upsertJobScheduler(
        'full:acme:jobs',
        { every: 3_600_000 },
        { name: 'x', data: {} },
      );
      await sql`insert into acme.jobs (id, data) values (1, '{}')`.execute(t.db);
      const result = await accounts(['remove', 'acme']);
      expect(result).toEqual({
        code: 0,
        stdout:
          "removed account acme (1 job scheduler(s), 6 Redis key(s)); its data stays in schema acme (drop it with --drop-data; only 'hiresync accounts add acme --reuse-data' shows it again)\n",
        stderr: '',
      });
      expect(await queue.getJobSchedulers()).toEqual([]);
    } finally {
      await queue.close();
    }
    for (const key of gone) expect(await redis.exists(key), key).toBe(0);
    for (const key of kept) expect(await redis.exists(key), key).toBe(1);
    expect(await store.names()).toEqual(['acme2']);
    expect(await schemaExists(t.db, 'acme')).toBe(true);
    const { rows } = await sql`select id from acme.jobs`.execute(t.db);
    expect(rows).toHaveLength(1);
    expect(await accountsInView(t.db)).toEqual([]);

    // Added again, the account takes its schema back, data included, only
    // when told the same customer is back.
    const refused = await accounts(
      ['add', '--no-test', 'acme', '--client-id', 'acme-client', '--sub', '42'],
      `${CLIENT_SECRET}\n`,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('acme: 1 jobs stored from an earlier registration');
    expect(await accountsInView(t.db)).toEqual([]);
    const reused = await accounts(
      ['add', '--no-test', 'acme', '--client-id', 'acme-client', '--sub', '42', '--reuse-data'],
      `${CLIENT_SECRET}\n`,
    );
    expect(reused).toMatchObject({ code: 0, stderr: '' });
    expect(await accountsInView(t.db)).toEqual(['acme']);
  });

  it('remove --drop-data --yes drops the schema and everything in it', async () => {
    await addAcme();
    await sql`insert into acme.jobs (id, data) values (1, '{}')`.execute(t.db);
    const result = await accounts(['remove', 'acme', '--drop-data', '--yes']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('dropped schema acme');
    expect(await schemaExists(t.db, 'acme')).toBe(false);
    expect(await accountsInView(t.db)).toEqual([]);
    expect(await new AccountStore(t.db).list()).toEqual([]);
  });
});

/** `accounts ARGV` with a standard input that is a terminal, on which `answer` is typed. */
async function accountsOnTerminal(argv: string[], answer: string) {
  const io = captureIo(answer);
  Object.assign(io.stdin as object, { isTTY: true });
  const code = await main(['accounts', ...argv], env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/**
 * Registers acme with a row in acme.jobs, Redis keys and a job scheduler, and
 * returns a function that reads all of it back: what `remove` must leave
 * exactly as it was when it fails.
 */
async function acmeWithState() {
  await addAcme();
  await sql`insert into acme.jobs (id, data) values (1, '{}')`.execute(t.db);
  const ns = (await new AccountStore(t.db).get('acme'))?.credentialNamespace;
  const keys = [`${prefix}:checkpoint:acme:jobs`, `${prefix}:token:${ns}`, `${prefix}:rate:${ns}`];
  for (const key of keys) await redis.set(key, 'x');
  const queue = new Queue('sync', { connection: redis, prefix });
  await queue.upsertJobScheduler('full:acme:jobs', { every: 3_600_000 }, { name: 'x', data: {} });
  await queue.close();
  return async () => {
    const q = new Queue('sync', { connection: redis, prefix });
    const schedulers = (await q.getJobSchedulers()).map((j) => j.key).sort();
    await q.close();
    return {
      registered: await new AccountStore(t.db).names(),
      schema: await schemaExists(t.db, 'acme'),
      jobs: await sql`select id from acme.jobs`.execute(t.db).then(
        (r) => r.rows.length,
        () => 'none',
      ),
      views: await accountsInView(t.db),
      keys: await Promise.all(keys.map((key) => redis.exists(key))),
      schedulers,
    };
  };
}

describe('hiresync accounts remove --drop-data: all or nothing, asked, and never dropping what others built', () => {
  it('changes nothing when the schema drop fails: account, schema, views, Redis keys and schedulers stay as they were', async () => {
    const state = await acmeWithState();
    const before = await state();
    expect(before).toMatchObject({ registered: ['acme'], schema: true, jobs: 1, views: ['acme'] });
    // An object of the database that refuses the drop of a schema.
    await sql`create function refuse_schema_drop() returns event_trigger language plpgsql as $$
      begin
        if exists (select 1 from pg_event_trigger_dropped_objects() where object_type = 'schema') then
          raise exception 'schema drops are refused here';
        end if;
      end $$`.execute(t.db);
    await sql`create event trigger refuse_schema_drop on sql_drop execute function refuse_schema_drop()`.execute(
      t.db,
    );
    const result = await accounts(['remove', 'acme', '--drop-data', '--yes']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('schema drops are refused here');
    expect(result.stderr).toContain('nothing was removed');
    expect(await state()).toEqual(before);
  });

  it('changes nothing when Redis is down', async () => {
    const state = await acmeWithState();
    const before = await state();
    const result = await accounts(['remove', 'acme', '--drop-data', '--yes'], '', {
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot reach Redis');
    expect(await state()).toEqual(before);
  });

  it('when Redis fails after the account is gone from Postgres, running remove again finishes the job', async () => {
    const state = await acmeWithState();
    // A Redis user that may not delete: the cleanup after the commit fails.
    const user = `hiresync-test-${randomUUID()}`;
    await redis.call(
      'ACL',
      'SETUSER',
      user,
      'on',
      '>pw',
      '~*',
      '&*',
      '+@all',
      '-del',
      '-unlink',
      '-scan',
    );
    try {
      const failed = await accounts(['remove', 'acme', '--drop-data', '--yes'], '', {
        REDIS_URL: inject('redisUrl').replace('redis://', `redis://${user}:pw@`),
      });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain("run 'hiresync accounts remove acme' again to finish");
    } finally {
      await redis.call('ACL', 'DELUSER', user);
    }
    expect(await state()).toMatchObject({ registered: [], schema: false, views: [] });
    const again = await accounts(['remove', 'acme']);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toContain('finished removing account acme');
    expect(await state()).toEqual({
      registered: [],
      schema: false,
      jobs: 'none',
      views: [],
      keys: [0, 0, 0],
      schedulers: [],
    });
    // Once finished, the name is unknown again.
    expect((await accounts(['remove', 'acme'])).code).toBe(1);
  });

  it('finishes an interrupted --drop-data removal when it is run again the same way without a terminal, with no --yes, saying the schema is already dropped', async () => {
    const state = await acmeWithState();
    const user = `hiresync-test-${randomUUID()}`;
    await redis.call(
      'ACL',
      'SETUSER',
      user,
      'on',
      '>pw',
      '~*',
      '&*',
      '+@all',
      '-del',
      '-unlink',
      '-scan',
    );
    try {
      const failed = await accounts(['remove', 'acme', '--drop-data', '--yes'], '', {
        REDIS_URL: inject('redisUrl').replace('redis://', `redis://${user}:pw@`),
      });
      expect(failed.code).toBe(1);
    } finally {
      await redis.call('ACL', 'DELUSER', user);
    }
    // A script repeating the command, or an operator without a terminal.
    const again = await accounts(['remove', 'acme', '--drop-data']);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toContain('finished removing account acme');
    expect(again.stdout).toContain('schema acme already dropped');
    expect(await state()).toMatchObject({ registered: [], schema: false, keys: [0, 0, 0] });
  });

  it('without a terminal and without --yes exits 2 naming --yes, and changes nothing', async () => {
    const state = await acmeWithState();
    const before = await state();
    const result = await accounts(['remove', 'acme', '--drop-data']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--yes');
    expect(await state()).toEqual(before);
  });

  it('on a terminal asks, naming the schema, its tables and rows, and drops only on y or yes', async () => {
    const state = await acmeWithState();
    const before = await state();
    for (const answer of ['\n', 'n\n', 'no\n', 'yess\n', '']) {
      const declined = await accountsOnTerminal(['remove', 'acme', '--drop-data'], answer);
      expect(declined.code, JSON.stringify(answer)).toBe(1);
      expect(declined.stderr).toMatch(
        /^drop schema acme with \d+ tables and \d+ rows, and remove account acme\? \[y\/N\] /,
      );
      expect(declined.stderr).toContain('nothing was removed');
      expect(await state()).toEqual(before);
    }
    // Its tables: its views of the shared tables (hiresync.data_*).
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'acme' and c.relkind = 'v'
        and to_regclass('hiresync.data_' || c.relname) is not null`.execute(t.db);
    const confirmed = await accountsOnTerminal(['remove', 'acme', '--drop-data'], 'YES\n');
    expect(confirmed.stderr).toMatch(
      new RegExp(`^drop schema acme with ${rows[0]?.n} tables and [1-9]\\d* rows`),
    );
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain('dropped schema acme');
    expect(await state()).toMatchObject({ registered: [], schema: false, keys: [0, 0, 0] });
  });

  it('refuses, naming each of them, when objects outside the schema depend on it; --cascade drops them and says which', async () => {
    const state = await acmeWithState();
    await sql`create schema reporting`.execute(t.db);
    await sql`create view reporting.acme_jobs as select id from acme.jobs`.execute(t.db);
    await sql`create view reporting.acme_job_count as select count(*) from reporting.acme_jobs`.execute(
      t.db,
    );
    // (A foreign key cannot reference an account's relations: they are views of shared storage.)
    await sql`create table reporting.notes (job_id bigint, note text)`.execute(t.db);
    await sql`create function reporting.acme_total() returns bigint language sql
      begin atomic select count(*) from acme.jobs; end`.execute(t.db);
    // hiresync's own views, and an analyst's view over them, are not in the way.
    await sql`create view reporting.everyone as select account, id from all_accounts.jobs`.execute(
      t.db,
    );
    const before = await state();
    const refused = await accounts(['remove', 'acme', '--drop-data', '--yes']);
    expect(refused.code).toBe(1);
    for (const name of [
      'view reporting.acme_jobs',
      'view reporting.acme_job_count',
      'function reporting.acme_total()',
      '--cascade',
    ]) {
      expect(refused.stderr).toContain(name);
    }
    expect(refused.stderr).not.toContain('reporting.everyone');
    expect(await state()).toEqual(before);

    const cascaded = await accounts(['remove', 'acme', '--drop-data', '--yes', '--cascade']);
    expect(cascaded).toMatchObject({ code: 0, stderr: '' });
    expect(cascaded.stdout).toContain(
      'also dropped: function reporting.acme_total(), view reporting.acme_job_count, view reporting.acme_jobs',
    );
    expect(await state()).toMatchObject({ registered: [], schema: false });
    const { rows } = await sql<{ r: string | null }>`
      select to_regclass(x)::text as r from unnest(array['reporting.notes', 'reporting.everyone', 'reporting.acme_jobs']) x`.execute(
      t.db,
    );
    expect(rows.map((r) => r.r)).toEqual(['reporting.notes', 'reporting.everyone', null]);
  });
});

describe('hiresync accounts add never takes a schema hiresync did not create', () => {
  it("refuses an empty schema carrying another application's comment, or grants, or nothing at all, naming it and what to do", async () => {
    await sql`create role accts_reader nologin`.execute(t.db).catch(() => undefined);
    await sql`create schema crm`.execute(t.db);
    await sql`comment on schema crm is 'CRM sync: staging area (do not touch)'`.execute(t.db);
    await sql`create schema ledger`.execute(t.db);
    await sql`grant usage on schema ledger to accts_reader`.execute(t.db);
    await sql`create schema spare`.execute(t.db);
    for (const name of ['crm', 'ledger', 'spare']) {
      const result = await accounts(['add', '--no-test', name, '--api-key'], `${API_KEY}\n`);
      expect(result.code, name).toBe(1);
      expect(result.stderr, name).toContain(
        `schema ${name} already exists and hiresync did not create it`,
      );
      expect(result.stderr, name).toContain('choose another name');
      const { rows } = await sql<{ comment: string | null; tables: number }>`
        select obj_description(n.oid, 'pg_namespace') as comment,
               (select count(*)::int from pg_class c where c.relnamespace = n.oid) as tables
        from pg_namespace n where nspname = ${name}`.execute(t.db);
      expect(rows[0]?.tables, name).toBe(0);
      if (name === 'crm') expect(rows[0]?.comment).toBe('CRM sync: staging area (do not touch)');
    }
    expect(await new AccountStore(t.db).list()).toEqual([]);
  });

  it('takes back the schema of a name removed without --drop-data', async () => {
    await addAcme();
    expect((await accounts(['remove', 'acme'])).code).toBe(0);
    await addAcme();
    expect(await new AccountStore(t.db).names()).toEqual(['acme']);
  });
});

describe('hiresync accounts update', () => {
  it('changes the credentials in place: the new key sealed, the base URL, the data and schema kept, the key never printed', async () => {
    await accounts(['add', '--no-test', 'beta', '--api-key'], `${API_KEY}\n`);
    await sql`insert into beta.jobs (id, data) values (1, '{}')`.execute(t.db);
    const before = await t.db
      .selectFrom('hiresync.accounts')
      .selectAll()
      .where('name', '=', 'beta')
      .executeTakeFirstOrThrow();
    const newKey = `api-key-${randomUUID()}`;
    const oldToken = `${prefix}:token:${before.credential_namespace}`;
    await redis.set(oldToken, 'cached');
    const result = await accounts(
      ['update', 'beta', '--base-url', 'https://eu.example.com/', '--secret'],
      `${newKey}\n`,
    );
    expect(result).toEqual({
      code: 0,
      stdout:
        'updated account beta: API key, base URL; its data, schema and schedules are kept, and its next run mints a new access token\n',
      stderr: '',
    });
    const after = await t.db
      .selectFrom('hiresync.accounts')
      .selectAll()
      .where('name', '=', 'beta')
      .executeTakeFirstOrThrow();
    expect(after).toMatchObject({
      created_at: before.created_at,
      state: 'enabled',
      base_url: 'https://eu.example.com',
    });
    expect(Number(after.version)).toBe(Number(before.version) + 1);
    expect(after.credential_namespace).not.toBe(before.credential_namespace);
    for (const form of formsOf(newKey)) expect(JSON.stringify(after)).not.toContain(form);
    const account = await new AccountStore(t.db, keysOf(OLD_KEY)).resolve('beta');
    expect(account.auth.mode === 'api_key' && account.auth.apiKey.reveal()).toBe(newKey);
    expect(account.auth).toMatchObject({ tokenUrl: 'https://eu.example.com/auth/token' });
    expect(await redis.exists(oldToken)).toBe(0);
    const { rows } = await sql`select id from beta.jobs`.execute(t.db);
    expect(rows).toHaveLength(1);
  });

  it('changes --sub alone, keeping the secret; refuses what the auth mode does not have, changing nothing', async () => {
    await addAcme();
    expect(await accounts(['update', 'acme', '--sub', '7'])).toMatchObject({ code: 0 });
    const acme = await new AccountStore(t.db, keysOf(OLD_KEY)).resolve('acme');
    expect(acme.auth).toMatchObject({ sub: '7' });
    expect(acme.auth.mode === 'client_credentials' && acme.auth.clientSecret.reveal()).toBe(
      CLIENT_SECRET,
    );
    await accounts(['add', '--no-test', 'beta', '--api-key'], `${API_KEY}\n`);
    const before = await new AccountStore(t.db).get('beta');
    for (const [flag, value, why] of [
      ['--sub', '7', '--sub applies only to client credentials'],
      ['--auth-url', 'https://a.example.com', '--auth-url does not apply'],
    ] as const) {
      const result = await accounts(['update', 'beta', flag, value]);
      expect(result.code, flag).toBe(1);
      expect(result.stderr, flag).toContain(why);
    }
    expect(await new AccountStore(t.db).get('beta')).toEqual(before);
    expect(await accounts(['update', 'ghost', '--sub', '1'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no account ghost is registered'),
    });
  });

  it('clears needs_reauthorization of a partner account only with a new refresh token', async () => {
    const partner = {
      HIRESYNC_PARTNER_CLIENT_ID: 'partner-app',
      HIRESYNC_PARTNER_CLIENT_SECRET: 'partner-app-secret',
    };
    expect(
      await accounts(['add', '--no-test', 'gamma', '--partner'], 'refresh-token-1\n', partner),
    ).toMatchObject({ code: 0 });
    await sql`update hiresync.accounts set state = 'needs_reauthorization' where name = 'gamma'`.execute(
      t.db,
    );
    await sql`update hiresync.refresh_tokens set reauthorization_reason = 'invalid_grant' where account = 'gamma'`.execute(
      t.db,
    );
    const moved = await accounts(
      ['update', 'gamma', '--auth-url', 'https://auth2.example.com'],
      '',
      partner,
    );
    expect(moved).toMatchObject({ code: 0 });
    expect(await new AccountStore(t.db).get('gamma')).toMatchObject({
      state: 'needs_reauthorization',
      authUrl: 'https://auth2.example.com',
    });
    const renewed = await accounts(['update', 'gamma'], 'refresh-token-2\n', partner);
    expect(renewed).toMatchObject({ code: 0, stderr: '' });
    expect(renewed.stdout).toContain('refresh token');
    expect(renewed.stdout).toContain('it no longer needs reauthorization and is enabled');
    expect(renewed.stdout).not.toContain('refresh-token-2');
    expect(await new AccountStore(t.db).get('gamma')).toMatchObject({
      state: 'enabled',
      partner: { reauthorizationReason: null },
    });
  });
});

describe('hiresync accounts rekey', () => {
  it('with keys "new,old" re-seals every credential so that "new" alone then opens them', async () => {
    await addAcme();
    await accounts(['add', '--no-test', 'beta', '--api-key'], `${API_KEY}\n`);
    const before = await t.db
      .selectFrom('hiresync.accounts')
      .select(['name', 'secret'])
      .orderBy('name')
      .execute();
    const rotated = `${NEW_KEY},${OLD_KEY}`;
    const result = await accounts(['rekey'], '', { HIRESYNC_SECRET_KEY: rotated });
    expect(result).toEqual({
      code: 0,
      stdout:
        're-sealed 2 credential(s) with the first key of HIRESYNC_SECRET_KEY; 0 already sealed with it\n',
      stderr: '',
    });
    const after = await t.db
      .selectFrom('hiresync.accounts')
      .select(['name', 'secret'])
      .orderBy('name')
      .execute();
    expect(after.map((r) => r.secret)).not.toEqual(before.map((r) => r.secret));
    const store = new AccountStore(t.db, keysOf(NEW_KEY));
    const acme = await store.resolve('acme');
    expect(acme.auth.mode === 'client_credentials' && acme.auth.clientSecret.reveal()).toBe(
      CLIENT_SECRET,
    );
    const beta = await store.resolve('beta');
    expect(beta.auth.mode === 'api_key' && beta.auth.apiKey.reveal()).toBe(API_KEY);
    // The old key alone no longer opens them; a second rekey has nothing to do.
    await expect(new AccountStore(t.db, keysOf(OLD_KEY)).resolve('acme')).rejects.toThrow(
      /HIRESYNC_SECRET_KEY no longer holds/,
    );
    expect((await accounts(['rekey'], '', { HIRESYNC_SECRET_KEY: rotated })).stdout).toContain(
      're-sealed 0 credential(s)',
    );
  });

  it('changes nothing and exits 1 when a credential opens with none of the keys', async () => {
    await addAcme();
    const result = await accounts(['rekey'], '', { HIRESYNC_SECRET_KEY: NEW_KEY });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('HIRESYNC_SECRET_KEY no longer holds');
    expect(result.stderr).not.toContain(NEW_KEY);
    await expect(new AccountStore(t.db, keysOf(OLD_KEY)).resolve('acme')).resolves.toMatchObject({
      name: 'acme',
    });
  });
});

describe('AccountStore.resolve', () => {
  it('says the credentials are sealed when HIRESYNC_SECRET_KEY is not set', async () => {
    await addAcme();
    const error = await new AccountStore(t.db).resolve('acme').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretKeyError);
    expect((error as Error).message).toBe(
      "account acme's credentials are sealed: set HIRESYNC_SECRET_KEY",
    );
  });
});
