import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../src/warehouse/database.js';
import { claimAccountSchema } from '../../src/warehouse/layout/account-schema-owner.js';
import {
  CONTROL_MIGRATIONS_FOLDER,
  CONTROL_SCHEMA,
  migrateToLatest,
} from '../../src/warehouse/layout/migrate.js';
import { migrateAll, SchemaMigrationError } from '../../src/warehouse/setup/migrate-all.js';
import type { Database } from '../../src/warehouse/tables.js';
import { adminQuery, databaseUrl, TEST_DATABASE_PREFIX } from '../support/databases.js';
import { leakyReader } from '../support/leaky-reader.js';

/**
 * A deployment of the earlier layout (each account's rows in tables of its
 * own schema, all_accounts a union of them), made with the migrations that
 * made it: the control schema up to 0008, the warehouse migrations in public
 * and in each account's schema.
 */
async function earlierLayout(): Promise<{
  db: Kysely<Database>;
  url: string;
  drop: () => Promise<void>;
}> {
  const admin = inject('databaseUrl');
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString('hex')}`;
  await adminQuery(admin, [`create database ${name}`]);
  const db = createDatabase(databaseUrl(admin, name));
  await migrateToLatest(db, {
    schema: CONTROL_SCHEMA,
    folder: CONTROL_MIGRATIONS_FOLDER,
    upTo: '0008_credentials_refused',
  });
  await migrateToLatest(db);
  for (const account of ['acme', 'beta']) {
    await sql`insert into hiresync.accounts (name, auth_mode, base_url, auth_url, client_id, secret)
      values (${account}, 'client_credentials', 'https://api.example', 'https://api.example/auth',
              'client', 'hs1.sealed')`.execute(db);
    await claimAccountSchema(db, account);
  }
  await migrateToLatest(db, { schema: 'acme' });
  // An account whose schema an older release left behind: its migrations stop at 0005.
  await migrateToLatest(db, { schema: 'beta', upTo: '0005_history' });
  return {
    db,
    url: databaseUrl(admin, name),
    drop: async () => {
      await db.destroy();
      await adminQuery(admin, [`drop database if exists ${name} with (force)`]);
    },
  };
}

/** Rows and history versions in each account's schema, as a deployment of the earlier layout holds them. */
async function seed(db: Kysely<Database>): Promise<void> {
  for (const [schema, offset] of [
    ['public', 0],
    ['acme', 100],
    ['beta', 200],
  ] as const) {
    const s = sql.id(schema);
    // Run ids start at 1 in every schema: they overlap across accounts.
    await sql`insert into ${s}.sync_runs (resource, mode, outcome, pages, records, finished_at)
      values ('jobs', 'full', 'succeeded', 1, 2, now()), ('jobs', 'incremental', 'failed', 0, 0, now())`.execute(
      db,
    );
    await sql`insert into ${s}.jobs (id, data, last_seen_run_id)
      values (${offset + 1}, ${JSON.stringify({ id: offset + 1, name: `Job ${offset + 1}` })}::jsonb, 1),
             (${offset + 2}, ${JSON.stringify({ id: offset + 2, name: 'second' })}::jsonb, 1)`.execute(
      db,
    );
    await sql`insert into ${s}.jobs_history (id, valid_from, valid_to, run_id, deleted, data) values
      (${offset + 1}, '2024-01-01 00:00:00.123456+00', '2024-02-01 00:00:00.654321+00', 1, false, '{"name":"old"}'),
      (${offset + 1}, '2024-02-01 00:00:00.654321+00', null, 1, false, ${JSON.stringify({ id: offset + 1, name: `Job ${offset + 1}` })}::jsonb)`.execute(
      db,
    );
    await sql`insert into ${s}.rejected_records (resource, run_id, page, raw, record_key, reason)
      values ('jobs', 1, 1, '{"id":"x"}', '1:0:abc', 'id is not an integer')`.execute(db);
  }
  for (const schema of ['public', 'acme']) {
    const s = sql.id(schema);
    await sql`insert into ${s}.job_boards (id, company_name, url_token, raw) values (7, 'Acme Inc', 'acme', '{"id":7}')`.execute(
      db,
    );
    await sql`insert into ${s}.tracking_links (id, token, job_board_id, raw) values (11, 'tok', 7, '{"id":11}')`.execute(
      db,
    );
  }
  // hiresync's own typed view as a full run had left it, and the union of the earlier layout.
  await sql`drop view acme.jobs_flat`.execute(db);
  await sql`create view acme.jobs_flat as
    select id, data ->> 'name' as name, deleted_at from acme.jobs`.execute(db);
  await sql`insert into acme.typed_view_columns (view, key, column_name, type)
    values ('jobs_flat', 'name', 'name', 'text')`.execute(db);
  await sql`create schema all_accounts`.execute(db);
  await sql`create view all_accounts.jobs as
    select 'default'::text as account, id, data, deleted_at from public.jobs
    union all select 'acme', id, data, deleted_at from acme.jobs
    union all select 'beta', id, data, deleted_at from beta.jobs`.execute(db);
  // Analysts' own objects: on an account's table, on its typed view, on the union.
  await sql`create schema reporting`.execute(db);
  await sql`create view acme.my_links as select id, token from acme.tracking_links`.execute(db);
  await sql`create view reporting.acme_names as select id, name from acme.jobs_flat`.execute(db);
  await sql`comment on view reporting.acme_names is 'names of acme jobs'`.execute(db);
  await sql`do $$ begin create role hiresync_test_reader; exception when duplicate_object then null; end $$`.execute(
    db,
  );
  await sql`grant select on reporting.acme_names to hiresync_test_reader`.execute(db);
  await sql`grant usage on schema acme to hiresync_test_reader`.execute(db);
  await sql`grant select on acme.jobs to hiresync_test_reader`.execute(db);
  await sql`create view reporting.job_counts as
    select account, count(*) as n from all_accounts.jobs group by account`.execute(db);
  await sql`create index acme_jobs_name on acme.jobs ((data ->> 'name'))`.execute(db);
}

type Row = Record<string, unknown>;

async function snapshot(db: Kysely<Database>, query: string): Promise<Row[]> {
  const { rows } = await sql.raw<Row>(query).execute(db);
  return rows.map(({ account: _account, ...rest }) => rest);
}

const QUERIES = [
  ...['public', 'acme', 'beta'].flatMap((s) => [
    `select * from ${s}.jobs order by id`,
    `select id, valid_from::text, valid_to::text, run_id, deleted, data from ${s}.jobs_history order by id, valid_from`,
    `select id, resource, mode, outcome, pages, records from ${s}.sync_runs order by id`,
    `select resource, run_id, raw, record_key, reason from ${s}.rejected_records order by id`,
  ]),
  'select * from public.tracking_links_flat order by id',
  'select * from acme.tracking_links_flat order by id',
  'select * from acme.my_links order by id',
  'select * from reporting.acme_names order by id',
  'select * from reporting.job_counts order by account',
];

describe('an upgrade from per-account tables to shared storage', () => {
  const drops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const drop of drops.splice(0)) await drop();
  });

  it('moves every row and history version, keeps ids, and keeps views built on the old tables', async () => {
    const { db, url, drop } = await earlierLayout();
    drops.push(drop);
    await seed(db);
    const before = await Promise.all(QUERIES.map((q) => snapshot(db, q)));

    const outcome = await migrateAll(db);

    expect(outcome.schemas.map((s) => [s.schema, s.applied])).toEqual([
      [
        CONTROL_SCHEMA,
        [
          '0009_shared_storage',
          '0010_erasures',
          '0011_webhook_secrets',
          '0012_policy_reapply',
          '0013_account_boundary',
          '0014_connect_binding',
          '0015_connect_link_reuse_data',
          '0016_demographic_labels',
        ],
      ],
      ['public', ['moved to shared storage']],
      ['acme', ['moved to shared storage']],
      [
        'beta',
        [
          '0006_typed_views',
          '0007_typed_view_signals',
          '0008_api_clock',
          '0009_typed_view_repairs',
          '0010_reference_resources',
          'moved to shared storage',
        ],
      ],
    ]);
    const after = await Promise.all(QUERIES.map((q) => snapshot(db, q)));
    expect(after).toEqual(before);
    // Every relation an analyst named is a view now, over shared storage.
    const { rows: kinds } = await sql<{ relkind: string; n: string }>`
      select c.relkind, count(*) as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname in ('public', 'acme', 'beta') and c.relname not like 'kysely\\_%'
        and c.relkind in ('r', 'p') group by 1`.execute(db);
    expect(kinds).toEqual([]);
    const { rows: shared } = await sql<{ account: string; n: string }>`
      select account, count(*)::text as n from hiresync.data_jobs_history group by 1 order by 1`.execute(
      db,
    );
    expect(shared).toEqual([
      { account: 'acme', n: '2' },
      { account: 'beta', n: '2' },
      { account: 'default', n: '2' },
    ]);
    // The analyst's view keeps its comment and its grant; the union reads shared storage.
    const { rows: kept } = await sql<{ comment: string; granted: boolean; definition: string }>`
      select obj_description('reporting.acme_names'::regclass, 'pg_class') as comment,
        has_table_privilege('hiresync_test_reader', 'reporting.acme_names', 'select') as granted,
        pg_get_viewdef('all_accounts.jobs'::regclass) as definition`.execute(db);
    expect(kept[0]?.comment).toBe('names of acme jobs');
    expect(kept[0]?.granted).toBe(true);
    // A grant on a moved table holds on its view.
    const { rows: reads } = await sql<{ granted: boolean }>`
      select has_table_privilege('hiresync_test_reader', 'acme.jobs', 'select') as granted`.execute(
      db,
    );
    expect(reads[0]?.granted).toBe(true);
    // ... and no further: rows of another account in acme's partition (hooli's:
    // the same of the 8) never reach a leaky function of the role's.
    await sql`insert into hiresync.data_jobs (account, id, data)
      select 'hooli', g, jsonb_build_object('id', g) from generate_series(1, 20) g`.execute(db);
    const { rows: partitions } = await sql<{ same: boolean }>`
      select satisfies_hash_partition('hiresync.data_jobs'::regclass, 8, r, 'hooli'::text) as same
      from generate_series(0, 7) r
      where satisfies_hash_partition('hiresync.data_jobs'::regclass, 8, r, 'acme'::text)`.execute(
      db,
    );
    expect(partitions).toEqual([{ same: true }]);
    const reader = await leakyReader(url, 'hiresync_test_reader');
    try {
      const attempt = await reader.attempt('acme', 'jobs', ['id', 'data']);
      expect(attempt.readable.size).toBe(2);
      expect([...attempt.seen].filter((row) => !attempt.readable.has(row))).toEqual([]);
    } finally {
      await reader.close();
    }
    expect(kept[0]?.definition).toContain('data_jobs');
    // The analyst's index went with the table: the warning says where it belongs now.
    expect(outcome.warnings.join('\n')).toMatch(
      /index acme\.acme_jobs_name .*hiresync\.data_jobs \(account, …\)/,
    );
    // New runs take ids above every id an account had; a second migrate changes nothing.
    const { rows: run } = await sql<{ id: string }>`
      insert into acme.sync_runs (resource, mode) values ('jobs', 'full') returning id`.execute(db);
    expect(Number(run[0]?.id)).toBeGreaterThan(2);
    const again = await migrateAll(db);
    expect(again.schemas.every((s) => s.applied.length === 0)).toBe(true);
  });

  it("refuses, changing nothing, when an analyst's trigger is on a table that would move", async () => {
    const { db, drop } = await earlierLayout();
    drops.push(drop);
    await seed(db);
    await sql`create function reporting.touch() returns trigger language plpgsql as $$ begin return new; end $$`.execute(
      db,
    );
    await sql`create trigger touch before update on acme.jobs for each row execute function reporting.touch()`.execute(
      db,
    );
    const before = await snapshot(db, 'select * from acme.jobs order by id');

    const failure = await migrateAll(db).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SchemaMigrationError);
    expect((failure as SchemaMigrationError).message).toMatch(
      /trigger touch on (table )?acme\.jobs/,
    );
    // all_accounts reads shared storage: the accounts not moved yet are named as left out.
    expect((failure as SchemaMigrationError).warnings.join('\n')).toMatch(
      /leave out the rows of acme, beta, still in tables of their own/,
    );

    const { rows } = await sql<{ kind: string }>`
      select relkind::text as kind from pg_class where oid = 'acme.jobs'::regclass`.execute(db);
    expect(rows[0]?.kind).toBe('r');
    expect(await snapshot(db, 'select * from acme.jobs order by id')).toEqual(before);
    // Without the trigger the move goes through.
    await sql`drop trigger touch on acme.jobs`.execute(db);
    await migrateAll(db);
    expect(await snapshot(db, 'select * from acme.jobs order by id')).toEqual(before);
  });
  it("makes another role's materialized views again as that role: its query never runs with hiresync's privileges", async () => {
    const { db, drop } = await earlierLayout();
    drops.push(drop);
    await seed(db);
    const role = `planter_${randomBytes(4).toString('hex')}`;
    drops.push(() => adminQuery(inject('databaseUrl'), [`drop role if exists ${role}`]));
    await sql
      .raw(`create role ${role} nologin; grant usage, create on schema public to ${role};
      grant select on public.jobs to ${role}`)
      .execute(db);
    await db.connection().execute(async (conn) => {
      await sql.raw(`set role ${role}`).execute(conn);
      // One the role filled itself, and one it left empty (so it never ran its query).
      await sql
        .raw(`create materialized view public.filled as
        select current_user::text as who, (select count(*) from public.jobs) as jobs with data;
        create materialized view public.empty as
        select current_user::text as who, (select count(*) from public.jobs) as jobs with no data`)
        .execute(conn);
      await sql.raw('reset role').execute(conn);
    });

    await migrateAll(db);

    const { rows } = await sql<{ name: string; owner: string; populated: boolean }>`
      select c.relname as name, pg_catalog.pg_get_userbyid(c.relowner)::text as owner,
        c.relispopulated as populated
      from pg_catalog.pg_class c where c.oid in ('public.filled'::regclass, 'public.empty'::regclass)
      order by 1`.execute(db);
    expect(rows).toEqual([
      { name: 'empty', owner: role, populated: false },
      { name: 'filled', owner: role, populated: true },
    ]);
    const filled = await sql<{ who: string }>`select who from public.filled`.execute(db);
    expect(filled.rows).toEqual([{ who: role }]);
  });
});
