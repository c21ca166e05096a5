import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { SecretKeys } from '../../src/config/secret-keys.js';
import { main } from '../../src/main.js';
import { Secret } from '../../src/secret.js';
import {
  ALL_ACCOUNTS_VIEWS,
  refreshAllAccountsViews,
} from '../../src/warehouse/all-accounts-views.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { dropSchema } from '../../src/warehouse/drop-account-schema.js';
import { MIGRATIONS_FOLDER, migrateToLatest } from '../../src/warehouse/migrate.js';
import { migrateAll, migrateControl, migrateSchema } from '../../src/warehouse/migrate-all.js';
import type { Database } from '../../src/warehouse/schema.js';
import { captureIo } from '../support/capture-io.js';
import {
  adminQuery,
  createTestDatabase,
  databaseUrl,
  TEST_DATABASE_PREFIX,
} from '../support/databases.js';

const WAREHOUSE_MIGRATIONS = [
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

describe('migrations of every schema', () => {
  it('migrate brings hiresync, public and every account schema up to date, per schema, and is idempotent', async () => {
    const { url, db } = await freshDatabase();
    const env = { DATABASE_URL: url };
    const first = captureIo();
    expect(await main(['migrate'], env, first)).toBe(0);
    expect(first.out()).toBe(
      [
        'schema hiresync: applied 8 migration(s): 0001_accounts, 0002_partner_tokens, 0003_safe_casts, 0004_typed_column_names, 0005_typed_view_repairs, 0006_account_settings, 0007_connect_links, 0008_credentials_refused',
        `schema public: applied ${WAREHOUSE_MIGRATIONS.length} migration(s): ${WAREHOUSE_MIGRATIONS.join(', ')}`,
        '',
      ].join('\n'),
    );
    // Accounts registered while their schemas lag behind (a new release, a row added by hand).
    await register(db, 'acme');
    await register(db, 'beta');
    const second = captureIo();
    expect(await main(['migrate'], env, second)).toBe(0);
    expect(second.out()).toBe(
      [
        `schema acme: applied ${WAREHOUSE_MIGRATIONS.length} migration(s): ${WAREHOUSE_MIGRATIONS.join(', ')}`,
        `schema beta: applied ${WAREHOUSE_MIGRATIONS.length} migration(s): ${WAREHOUSE_MIGRATIONS.join(', ')}`,
        '2 other schema(s) already up to date',
        '',
      ].join('\n'),
    );
    expect(second.err()).toBe('');
    for (const schema of ['public', 'acme', 'beta']) {
      expect(await appliedIn(db, schema), schema).toEqual(WAREHOUSE_MIGRATIONS);
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
    ]);
    const third = captureIo();
    expect(await main(['migrate'], env, third)).toBe(0);
    expect(third.out()).toBe('database is up to date (4 schemas)\n');
    // The views cover every account.
    await insertJob(db, 'public', 1);
    await insertJob(db, 'acme', 2);
    await insertJob(db, 'beta', 3);
    expect(await accountsInView(db, 'jobs')).toEqual(['acme', 'beta', 'default']);
  });

  it('runs two migrateAll at once on a fresh database: both succeed, each migration applied once', async () => {
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
      ['acme', 'beta', 'public']
        .flatMap((s) => WAREHOUSE_MIGRATIONS.map((m) => `${s}.${m}`))
        .sort(),
    );
    expect(outcomes.flatMap((o) => o.warnings)).toEqual([]);
    for (const schema of ['public', 'acme', 'beta']) {
      expect(await appliedIn(db, schema), schema).toEqual(WAREHOUSE_MIGRATIONS);
    }
  });

  it("keeps Kysely's bookkeeping in each schema: migrating public does not see an account's table", async () => {
    const db = await templateDatabase();
    // An account migrated first must not make public look migrated, nor the reverse.
    expect((await migrateSchema(db, 'acme')).applied).toEqual(WAREHOUSE_MIGRATIONS);
    expect((await migrateSchema(db, 'public')).applied).toEqual([]);
    expect((await migrateSchema(db, 'acme')).applied).toEqual([]);
    const { rows } = await sql<{ table_schema: string }>`
      select table_schema from information_schema.tables
      where table_name = 'kysely_migration' order by 1`.execute(db);
    // hiresync's own schema keeps its own (the template has it, as after `hiresync migrate`).
    expect(rows.map((r) => r.table_schema)).toEqual(['acme', 'hiresync', 'public']);
  });

  it('lets a migration drop and recreate a view the all_accounts views select from', async () => {
    const db = await templateDatabase();
    await migrateSchema(db, 'acme');
    await refreshAllAccountsViews(db, ['acme']);
    // A new release whose migration recreates tracking_links_flat with one more column.
    const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'hiresync-migrations-'));
    cleanups.push(() => fs.rm(folder, { recursive: true, force: true }));
    const root = fileURLToPath(new URL('../..', import.meta.url));
    await fs.symlink(path.join(root, 'node_modules'), path.join(folder, 'node_modules'));
    for (const file of await fs.readdir(MIGRATIONS_FOLDER)) {
      if (file.endsWith('.ts'))
        await fs.copyFile(path.join(MIGRATIONS_FOLDER, file), path.join(folder, file));
    }
    await fs.writeFile(
      path.join(folder, '0099_recreate_view.ts'),
      `import { type Kysely, sql } from 'kysely';
      export async function up(db: Kysely<any>): Promise<void> {
        await sql\`drop view tracking_links_flat\`.execute(db);
        await sql\`create view tracking_links_flat as select tl.*, 1 as extra from tracking_links tl\`.execute(db);
      }`,
    );
    for (const schema of ['public', 'acme']) {
      expect((await migrateToLatest(db, { schema, folder })).applied).toEqual([
        '0099_recreate_view',
      ]);
    }
    // The views were dropped by the migration and come back on the new columns.
    const { warnings } = await refreshAllAccountsViews(db, ['acme']);
    expect(warnings).toEqual([]);
    const { rows } = await sql<{ column_name: string }>`
      select column_name from information_schema.columns
      where table_schema = 'all_accounts' and table_name = 'tracking_links_flat'
      order by ordinal_position`.execute(db);
    expect(rows[0]?.column_name).toBe('account');
    expect(rows.at(-1)?.column_name).toBe('extra');
  });
});

describe('the all_accounts views', () => {
  it('union default and every account, with the account first, and follow accounts added and removed', async () => {
    const db = await templateDatabase();
    await migrateControl(db);
    await insertJob(db, 'public', 1);
    expect(await refreshAllAccountsViews(db, [])).toEqual({ warnings: [] });
    expect(await accountsInView(db, 'jobs')).toEqual(['default']);
    for (const name of ['acme', 'beta']) {
      await migrateSchema(db, name);
      await insertJob(db, name, name === 'acme' ? 2 : 3);
    }
    await refreshAllAccountsViews(db, ['beta', 'acme']);
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
        where table_schema = 'public' and table_name = ${view}
        order by ordinal_position`.execute(db);
      expect(
        columns.map((c) => c.column_name),
        view,
      ).toEqual(['account', ...own.map((c) => c.column_name)]);
    }
    // beta removed (its data kept), then acme's schema dropped.
    await refreshAllAccountsViews(db, ['acme']);
    expect(await accountsInView(db, 'jobs')).toEqual(['acme', 'default']);
    await dropSchema(db, 'acme', []);
    expect(await accountsInView(db, 'jobs')).toEqual(['default']);
    const { rows: schemas } = await sql<{ nspname: string }>`
      select nspname from pg_namespace where nspname in ('acme', 'beta') order by 1`.execute(db);
    expect(schemas.map((s) => s.nspname)).toEqual(['beta']);
  });

  it('leave out, with a warning, an account whose schema is at another migration level', async () => {
    const db = await templateDatabase();
    await migrateSchema(db, 'acme');
    await migrateSchema(db, 'beta');
    await sql`alter table beta.jobs drop column last_seen_run_id`.execute(db);
    await sql`drop table beta.rejected_records`.execute(db);
    const { warnings } = await refreshAllAccountsViews(db, ['acme', 'beta']);
    expect(warnings).toEqual([
      "all_accounts.jobs leaves out account beta: its jobs lacks column last_seen_run_id (or holds another type) (run 'hiresync migrate')",
      "all_accounts.rejected_records leaves out account beta: its rejected_records has no such relation (run 'hiresync migrate')",
    ]);
    await insertJob(db, 'acme', 2);
    await insertJob(db, 'beta', 3);
    expect(await accountsInView(db, 'jobs')).toEqual(['acme']);
    expect(await accountsInView(db, 'job_posts')).toEqual([]);
    await sql`insert into beta.job_posts (id, data) values (4, '{}')`.execute(db);
    expect(await accountsInView(db, 'job_posts')).toEqual(['beta']);
  });

  it('keep their identity while their columns stay: a view built on them survives an account added', async () => {
    const db = await templateDatabase();
    await refreshAllAccountsViews(db, []);
    await sql`create view public.job_counts as select account, count(*) from all_accounts.jobs group by account`.execute(
      db,
    );
    await migrateSchema(db, 'acme');
    await insertJob(db, 'acme', 7);
    await refreshAllAccountsViews(db, ['acme']);
    const { rows } = await sql<{ account: string }>`select account from public.job_counts`.execute(
      db,
    );
    expect(rows).toEqual([{ account: 'acme' }]);
  });

  it('are commented, each view and each of its columns', async () => {
    const db = await templateDatabase();
    await migrateSchema(db, 'acme');
    await refreshAllAccountsViews(db, ['acme']);
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
    // And the typed views' unions: jobs_flat and job_posts_flat.
    expect(views[0]?.n).toBe(ALL_ACCOUNTS_VIEWS.length + 2);
  });

  it("refuse to drop a schema that is not an account's, or one still in the views", async () => {
    const db = await templateDatabase();
    await expect(dropSchema(db, 'public', [])).rejects.toThrow(/refusing to drop schema "public"/);
    await expect(dropSchema(db, 'acme', ['acme'])).rejects.toThrow(/still registered/);
    await migrateControl(db);
    await register(db, 'acme');
    await expect(dropSchema(db, 'acme')).rejects.toThrow(/account acme is still registered/);
  });
});
