import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { SecretKeys } from '../../src/config/secret-keys.js';
import { main } from '../../src/main.js';
import { Secret } from '../../src/secret.js';
import { ANALYTICS_SET } from '../../src/sync/analytics-set.js';
import { ANALYTICS_VIEWS } from '../../src/warehouse/analytics/analytics-views.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { ALL_ACCOUNTS_VIEWS } from '../../src/warehouse/layout/all-accounts-views.js';
import { dropSchema } from '../../src/warehouse/layout/drop-account-schema.js';
import { refreshAllAccountsViews } from '../../src/warehouse/setup/all-accounts-refresh.js';
import {
  migrateAll,
  migrateControl,
  migrateSchema,
  migrateSchemas,
} from '../../src/warehouse/setup/migrate-all.js';
import type { Database } from '../../src/warehouse/tables.js';
import { captureIo } from '../support/capture-io.js';
import {
  adminQuery,
  createTestDatabase,
  databaseUrl,
  TEST_DATABASE_PREFIX,
} from '../support/databases.js';

const _WAREHOUSE_MIGRATIONS = [
  '0001_initial',
  '0002_reliability',
  '0003_drop_lookup_indexes',
  '0004_drop_reference_constraints',
  '0005_history',
  '0006_typed_views',
  '0007_typed_view_signals',
  '0008_api_clock',
  '0009_typed_view_repairs',
  '0010_reference_resources',
];

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An empty database of its own (no template): migrations start from nothing. */
async function freshDatabase(): Promise<{ url: string; db: Kysely<Database> }> {
  const admin = inject('databaseUrl');
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString('hex')}`;
  await adminQuery(admin, [`create database ${name}`]);
  const url = databaseUrl(admin, name);
  const db = createDatabase(url);
  cleanups.push(async () => {
    await db.destroy();
    await adminQuery(admin, [`drop database if exists ${name} with (force)`]);
  });
  return { url, db };
}

/** A database cloned from the migrated template (public only). */
async function templateDatabase(): Promise<Kysely<Database>> {
  const t = await createTestDatabase(inject('databaseUrl'));
  cleanups.push(() => t.drop());
  return t.db;
}

const keys = new SecretKeys([randomBytes(32)]);

/** Registers `name` in hiresync.accounts (the control schema must exist). */
async function register(db: Kysely<Database>, name: string): Promise<void> {
  await new AccountStore(db, keys).add({
    name,
    baseUrl: 'https://api.example.com',
    auth: { mode: 'api_key', apiKey: new Secret(`key-of-${name}`) },
  });
}

async function appliedIn(db: Kysely<Database>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select name from ${sql.id(schema, 'kysely_migration')} order by name`.execute(db);
  return rows.map((r) => r.name);
}

async function insertJob(db: Kysely<Database>, schema: string, id: number): Promise<void> {
  await sql`insert into ${sql.id(schema, 'jobs')} (id, data) values (${id}, ${JSON.stringify({ id })}::jsonb)`.execute(
    db,
  );
}

async function accountsInView(db: Kysely<Database>, view: string): Promise<string[]> {
  const { rows } = await sql<{ account: string }>`
    select distinct account from ${sql.id('all_accounts', view)} order by account`.execute(db);
  return rows.map((r) => r.account);
}

/** The relation kinds of `schema`'s relations but Kysely's own tables, sorted. */
async function kindsIn(db: Kysely<Database>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ kind: string }>`
    select distinct c.relkind::text as kind from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relname not like 'kysely\\_%' order by 1`.execute(db);
  return rows.map((r) => r.kind);
}

/** Locks the read of `query` holds, inside a transaction, beside what an empty one holds. */
async function locksOf(db: Kysely<Database>, query: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await sql.raw(query).execute(trx);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_locks where pid = pg_backend_pid()`.execute(trx);
    return rows[0]?.n ?? 0;
  });
}

describe('migrations of every schema', () => {
  it('migrate brings hiresync, public and every account schema up to date, per schema, and is idempotent', async () => {
    const { url, db } = await freshDatabase();
    const env = { DATABASE_URL: url };
    const first = captureIo();
    expect(await main(['migrate'], env, first)).toBe(0);
    expect(first.out()).toBe(
      [
        'schema hiresync: applied 16 migration(s): 0001_accounts, 0002_partner_tokens, 0003_safe_casts, 0004_typed_column_names, 0005_typed_view_repairs, 0006_account_settings, 0007_connect_links, 0008_credentials_refused, 0009_shared_storage, 0010_erasures, 0011_webhook_secrets, 0012_policy_reapply, 0013_account_boundary, 0014_connect_binding, 0015_connect_link_reuse_data, 0016_demographic_labels',
        'schema public: its views of shared storage made',
        'analytics views made in: analytics',
        '',
      ].join('\n'),
    );
    // Accounts registered while their schemas are not made yet (a row added by hand).
    await register(db, 'acme');
    await register(db, 'beta');
    const second = captureIo();
    expect(await main(['migrate'], env, second)).toBe(0);
    expect(second.out()).toBe(
      [
        'schema acme: its views of shared storage made',
        'schema beta: its views of shared storage made',
        '2 other schema(s) already up to date',
        'analytics views made in: acme_analytics, beta_analytics',
        '',
      ].join('\n'),
    );
    expect(second.err()).toBe('');
    // Views only, in every account's schema: the rows are in hiresync's shared tables.
    for (const schema of ['public', 'acme', 'beta']) {
      expect(await kindsIn(db, schema), schema).toEqual(['v']);
    }
    expect(await appliedIn(db, 'hiresync')).toEqual([
      '0001_accounts',
      '0002_partner_tokens',
      '0003_safe_casts',
      '0004_typed_column_names',
      '0005_typed_view_repairs',
      '0006_account_settings',
      '0007_connect_links',
      '0008_credentials_refused',
      '0009_shared_storage',
      '0010_erasures',
      '0011_webhook_secrets',
      '0012_policy_reapply',
      '0013_account_boundary',
      '0014_connect_binding',
      '0015_connect_link_reuse_data',
      '0016_demographic_labels',
    ]);
    const third = captureIo();
    expect(await main(['migrate'], env, third)).toBe(0);
    expect(third.out()).toBe('database is up to date (4 schemas)\n');
    // The views cover every account.
    await insertJob(db, 'public', 1);
    await insertJob(db, 'acme', 2);
    await insertJob(db, 'beta', 3);
    expect(await accountsInView(db, 'jobs')).toEqual(['acme', 'beta', 'default']);
    const { rows } = await sql<{ account: string; id: string }>`
      select account, id::text from hiresync.data_jobs order by id`.execute(db);
    expect(rows).toEqual([
      { account: 'default', id: '1' },
      { account: 'acme', id: '2' },
      { account: 'beta', id: '3' },
    ]);
  });

  it('runs two migrateAll at once on a fresh database: both succeed, each schema made once', async () => {
    const { url, db } = await freshDatabase();
    await migrateControl(db);
    await register(db, 'acme');
    await register(db, 'beta');
    const other = createDatabase(url);
    cleanups.push(() => other.destroy());
    const outcomes = await Promise.all([migrateAll(db), migrateAll(other)]);
    const applied = outcomes.flatMap((o) =>
      o.schemas.flatMap((s) => s.applied.map((m) => `${s.schema}.${m}`)),
    );
    expect(applied.sort()).toEqual(
      ['acme', 'beta', 'public'].map((s) => `${s}.shared storage views`),
    );
    expect(outcomes.flatMap((o) => o.warnings)).toEqual([]);
  });

  it("keeps each schema's views to itself: making public's does not touch an account's", async () => {
    const db = await templateDatabase();
    expect((await migrateSchema(db, 'acme')).applied).toEqual(['shared storage views']);
    expect((await migrateSchema(db, 'public')).applied).toEqual([]);
    expect((await migrateSchema(db, 'acme')).applied).toEqual([]);
    await insertJob(db, 'acme', 5);
    // Another account's view shows none of acme's rows, and cannot be written with them.
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from public.jobs`.execute(
      db,
    );
    expect(rows[0]?.n).toBe(0);
    await expect(
      sql`insert into public.jobs (account, id, data) values ('acme', 6, '{}')`.execute(db),
    ).rejects.toThrow(/check option/);
    // No Kysely bookkeeping in an account's schema: its state is hiresync.schema_layouts'.
    const { rows: tables } = await sql<{ table_schema: string }>`
      select table_schema from information_schema.tables
      where table_name = 'kysely_migration' order by 1`.execute(db);
    expect(tables.map((r) => r.table_schema)).toEqual(['hiresync']);
  });

  it("makes again, at a release that adds a column to a shared table, that table's view in every schema, keeping what analysts built on it", async () => {
    const db = await templateDatabase();
    await migrateControl(db);
    await register(db, 'acme');
    await migrateAll(db);
    await insertJob(db, 'acme', 7);
    await sql`create view acme.my_jobs as select id, data from acme.jobs`.execute(db);
    const before = await sql<{
      oid: number;
    }>`select 'acme.sources'::regclass::oid::int as oid`.execute(db);
    // What a release's migration of the shared tables does.
    await sql`alter table hiresync.data_jobs add column extra text`.execute(db);
    const outcome = await migrateAll(db);
    expect(outcome.schemas.map((s) => [s.schema, s.applied])).toEqual([
      ['hiresync', []],
      ['public', ['shared storage views']],
      ['acme', ['shared storage views']],
    ]);
    const { rows } = await sql<{ column_name: string }>`
      select column_name from information_schema.columns
      where table_schema = 'acme' and table_name = 'jobs' order by ordinal_position`.execute(db);
    expect(rows.map((r) => r.column_name)).toEqual([
      'id',
      'data',
      'deleted_at',
      'first_synced_at',
      'synced_at',
      'last_seen_run_id',
      'changed_at',
      'account',
      'extra',
    ]);
    const { rows: mine } = await sql<{ id: string }>`select id::text from acme.my_jobs`.execute(db);
    expect(mine).toEqual([{ id: '7' }]);
    // The views of the other tables were left as they were.
    const after = await sql<{
      oid: number;
    }>`select 'acme.sources'::regclass::oid::int as oid`.execute(db);
    expect(after.rows).toEqual(before.rows);
  });
});

describe('the all_accounts views', () => {
  it('show default and every registered account, with the account first, and follow accounts added and removed', async () => {
    const db = await templateDatabase();
    await migrateControl(db);
    await insertJob(db, 'public', 1);
    expect(await refreshAllAccountsViews(db)).toEqual({ warnings: [] });
    expect(await accountsInView(db, 'jobs')).toEqual(['default']);
    for (const name of ['acme', 'beta']) {
      await register(db, name);
      await migrateSchema(db, name);
      await insertJob(db, name, name === 'acme' ? 2 : 3);
    }
    // No rebuild: the views read the shared tables.
    const { rows } = await sql<{ account: string; id: string }>`
      select account, id from all_accounts.jobs order by id`.execute(db);
    expect(rows).toEqual([
      { account: 'default', id: '1' },
      { account: 'acme', id: '2' },
      { account: 'beta', id: '3' },
    ]);
    for (const view of ALL_ACCOUNTS_VIEWS) {
      const { rows: columns } = await sql<{ column_name: string }>`
        select column_name from information_schema.columns
        where table_schema = 'all_accounts' and table_name = ${view}
        order by ordinal_position`.execute(db);
      const { rows: own } = await sql<{ column_name: string }>`
        select column_name from information_schema.columns
        where table_schema = 'public' and table_name = ${view} and column_name <> 'account'
        order by ordinal_position`.execute(db);
      expect(
        columns.map((c) => c.column_name),
        view,
      ).toEqual(['account', ...own.map((c) => c.column_name)]);
    }
    // beta unregistered (its data kept, out of the views), then acme's schema dropped.
    await sql`delete from hiresync.accounts where name = 'beta'`.execute(db);
    expect(await accountsInView(db, 'jobs')).toEqual(['acme', 'default']);
    await sql`delete from hiresync.accounts where name = 'acme'`.execute(db);
    await dropSchema(db, 'acme');
    const { rows: left } = await sql<{ account: string }>`
      select distinct account from hiresync.data_jobs order by 1`.execute(db);
    expect(left.map((r) => r.account)).toEqual(['beta', 'default']);
    const { rows: schemas } = await sql<{ nspname: string }>`
      select nspname from pg_namespace where nspname in ('acme', 'beta') order by 1`.execute(db);
    expect(schemas.map((s) => s.nspname)).toEqual(['beta']);
    // Added again under the name, acme gets its views anew.
    await register(db, 'acme');
    expect((await migrateSchemas(db, ['acme']))[0]?.applied).toEqual(['shared storage views']);
    expect(await kindsIn(db, 'acme')).toEqual(['v']);
  });

  it('hold the same number of locks for a read across 3 accounts or 40', async () => {
    const db = await templateDatabase();
    await migrateControl(db);
    const read = 'select count(*) from all_accounts.tracking_links_flat';
    const counts: number[] = [];
    for (const n of [3, 40]) {
      for (let i = counts.length === 0 ? 0 : 3; i < n; i += 1) {
        await register(db, `a${i}`);
        await migrateSchema(db, `a${i}`);
        await sql`insert into ${sql.id(`a${i}`, 'tracking_links')} (id, raw) values (1, '{}')`.execute(
          db,
        );
      }
      await refreshAllAccountsViews(db);
      counts.push(await locksOf(db, read));
    }
    expect(counts[1]).toBe(counts[0]);
    // One account's view locks its own partition of each table (and their indexes) only.
    const own = await locksOf(db, 'select count(*) from a1.tracking_links_flat');
    expect(own).toBeLessThan(30);
  });

  it('keep their identity: a view built on them shows an account added later', async () => {
    const db = await templateDatabase();
    await migrateControl(db);
    await refreshAllAccountsViews(db);
    await sql`create view public.job_counts as select account, count(*) from all_accounts.jobs group by account`.execute(
      db,
    );
    await register(db, 'acme');
    await migrateSchema(db, 'acme');
    await insertJob(db, 'acme', 7);
    await refreshAllAccountsViews(db);
    const { rows } = await sql<{ account: string }>`select account from public.job_counts`.execute(
      db,
    );
    expect(rows).toEqual([{ account: 'acme' }]);
  });

  it('are commented, each view and each of its columns', async () => {
    const db = await templateDatabase();
    await migrateSchema(db, 'acme');
    await refreshAllAccountsViews(db);
    const { rows } = await sql<{ what: string }>`
      select c.relname || '.' || coalesce(a.attname, '') as what
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'all_accounts'
      left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where c.relkind = 'v'
        and (obj_description(c.oid, 'pg_class') is null
          or a.attname is not null and col_description(c.oid, a.attnum) is null)`.execute(db);
    expect(rows).toEqual([]);
    const { rows: views } = await sql<{ n: number }>`
      select count(*)::int as n from pg_views where schemaname = 'all_accounts'`.execute(db);
    // And the typed views' unions (jobs_flat and job_posts_flat), each
    // analytics resource's view and history (rejection_reasons giving its name
    // to the analytics view), and the analytics views.
    expect(views[0]?.n).toBe(
      ALL_ACCOUNTS_VIEWS.length + 2 + ANALYTICS_SET.length * 2 - 1 + ANALYTICS_VIEWS.length,
    );
  });

  it("refuse to drop a schema that is not an account's, or one still registered", async () => {
    const db = await templateDatabase();
    await expect(dropSchema(db, 'public')).rejects.toThrow(/refusing to drop schema "public"/);
    await migrateControl(db);
    await register(db, 'acme');
    await expect(dropSchema(db, 'acme')).rejects.toThrow(/account acme is still registered/);
  });
});
