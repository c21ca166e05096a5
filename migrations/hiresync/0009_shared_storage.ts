import { type Kysely, sql } from 'kysely';
import * as m0001 from '../0001_initial.js';
import * as m0002 from '../0002_reliability.js';
import * as m0003 from '../0003_drop_lookup_indexes.js';
import * as m0004 from '../0004_drop_reference_constraints.js';
import * as m0005 from '../0005_history.js';
import * as m0006 from '../0006_typed_views.js';
import * as m0007 from '../0007_typed_view_signals.js';
import * as m0008 from '../0008_api_clock.js';
import * as m0009 from '../0009_typed_view_repairs.js';
import * as m0010 from '../0010_reference_resources.js';

// Shared storage: every account's rows in one set of tables of schema
// hiresync, keyed by account. Frozen in time: takes Kysely<any>, never
// imports app types (only the frozen warehouse migrations it builds its
// template from), names its tables with their schema.
//
// Each table an account schema held (tracking_links, jobs, their histories,
// sync_runs, …) becomes hiresync.data_<table>: the same columns, with a
// first column account, and the account leading every primary and unique
// key. The big ones are hash-partitioned on account into 8 partitions, so a
// query across accounts touches a fixed number of relations whatever the
// number of accounts, and one account's rows are one partition's. Account
// schemas then hold views of the same names (see src/warehouse/account-views.ts).
//
// The columns are those the warehouse migrations 0001-0010 give an account
// schema: they run once more here, in a scratch schema, and each table is
// made LIKE its template (defaults, identity, checks and comments included).

const LEGACY = [m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010];

/** The scratch schema of the template: no account can be named so (a name starts with a letter). */
const SCRATCH = '_hiresync_template';

/** Partitions of each partitioned table. */
const PARTITIONS = 8;

/** Small tables, read whole by status: not partitioned. */
const UNPARTITIONED = new Set(['sync_runs', 'typed_views', 'typed_view_columns']);

/** Indexes beyond the keys, each led by account. */
const INDEXES: Record<string, string[][]> = {
  tracking_links: [['job_id'], ['job_post_id'], ['token']],
  sync_runs: [['resource', 'id desc']],
};

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop schema if exists ${sql.id(SCRATCH)} cascade`.execute(db);
  await sql`create schema ${sql.id(SCRATCH)}`.execute(db);
  await sql`set local search_path to ${sql.id(SCRATCH)}, hiresync`.execute(db);
  for (const migration of LEGACY) await migration.up(db);
  await sql`set local search_path to hiresync`.execute(db);

  const { rows: tables } = await sql<{ name: string; fillfactor: string | null }>`
    select c.relname as name,
      (select substring(o from 'fillfactor=(\\d+)') from unnest(c.reloptions) o
       where o like 'fillfactor=%') as fillfactor
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${SCRATCH} and c.relkind = 'r' and c.relname not like 'kysely\\_%'
    order by c.relname`.execute(db);
  // Unpartitioned first: the partitioned rejected_records references sync_runs.
  const ordered = [
    ...tables.filter((t) => UNPARTITIONED.has(t.name)),
    ...tables.filter((t) => !UNPARTITIONED.has(t.name)),
  ];
  for (const { name, fillfactor } of ordered) {
    await createShared(db, name, fillfactor);
  }
  await sql`drop schema ${sql.id(SCRATCH)} cascade`.execute(db);
  await sql`alter table hiresync.data_typed_view_columns
    add foreign key (account, view) references hiresync.data_typed_views (account, view) on delete cascade`.execute(
    db,
  );
  await sql`alter table hiresync.data_rejected_records
    add foreign key (account, run_id) references hiresync.data_sync_runs (account, id)`.execute(db);

  // The cross-account views' schema, made here once (under the migrations'
  // lock) rather than by concurrent rebuilds, whose `create schema if not
  // exists` can race.
  await sql`create schema if not exists all_accounts`.execute(db);

  await sql`create table hiresync.schema_layouts (
    schema text primary key,
    account text not null unique,
    layout text not null,
    updated_at timestamptz not null default now()
  )`.execute(db);
  await sql`comment on table hiresync.schema_layouts is ${sql.lit(
    "One row per schema that holds an account's views (public for default): which account's rows they show, and the layout of views it holds (a fingerprint of the shared tables' columns). migrate rebuilds the views of a schema whose layout differs; an up-to-date deployment costs one query.",
  )}`.execute(db);
}

/** The keys of table `name` of the scratch schema: primary key first, then unique ones. */
// biome-ignore lint/suspicious/noExplicitAny: as for up
async function keysOf(db: Kysely<any>, name: string) {
  const { rows } = await sql<{ kind: string; columns: string[]; name: string }>`
    select con.contype as kind, con.conname as name,
      array(select a.attname from unnest(con.conkey) with ordinality k(attnum, n)
            join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum
            order by k.n)::text[] as columns
    from pg_constraint con
    where con.conrelid = ${`${SCRATCH}.${name}`}::regclass and con.contype in ('p', 'u')
    order by con.contype, con.conname`.execute(db);
  return rows;
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
async function createShared(db: Kysely<any>, name: string, fillfactor: string | null) {
  const shared = `data_${name}`;
  const partitioned = !UNPARTITIONED.has(name);
  const keys = await keysOf(db, name);
  const keyList = (columns: string[]) =>
    sql.join([sql.id('account'), ...columns.map((c) => sql.id(c))]);
  const constraints = keys.map((k) =>
    k.kind === 'p'
      ? sql`primary key (${keyList(k.columns)})`
      : sql`constraint ${sql.id(`${shared}_${k.columns.join('_')}_key`)} unique (${keyList(k.columns)})`,
  );
  await sql`create table ${sql.id('hiresync', shared)} (
    account text not null,
    like ${sql.id(SCRATCH, name)} including defaults including identity including constraints including comments,
    ${sql.join(constraints)}
  ) ${partitioned ? sql`partition by hash (account)` : fillfactor ? sql`with (fillfactor = ${sql.raw(fillfactor)})` : sql``}`.execute(
    db,
  );
  if (partitioned) {
    for (let i = 0; i < PARTITIONS; i += 1) {
      const partition = `${shared}_p${String(i).padStart(2, '0')}`;
      await sql`create table ${sql.id('hiresync', partition)} partition of ${sql.id('hiresync', shared)}
        for values with (modulus ${sql.lit(PARTITIONS)}, remainder ${sql.lit(i)})
        ${fillfactor ? sql`with (fillfactor = ${sql.raw(fillfactor)})` : sql``}`.execute(db);
    }
  }
  for (const columns of INDEXES[name] ?? []) {
    await sql`create index ${sql.id(`${shared}_${columns.map((c) => c.split(' ')[0]).join('_')}_idx`)}
      on ${sql.id('hiresync', shared)} (account, ${sql.raw(columns.map((c) => c.replace(/^(\w+)/, '"$1"')).join(', '))})`.execute(
      db,
    );
  }
  const { rows } = await sql<{ comment: string | null }>`
    select obj_description(${`${SCRATCH}.${name}`}::regclass, 'pg_class') as comment`.execute(db);
  const what = rows[0]?.comment ?? name;
  // The account's view takes the first paragraph (the table's own words).
  await sql`comment on table ${sql.id('hiresync', shared)} is ${sql.lit(
    `${what}\n\nShared storage: every account's ${name} (${partitioned ? `hash-partitioned on account into ${PARTITIONS} partitions` : 'not partitioned: small'}); each account reads its own through the view ${name} of its schema (public for default), all accounts through all_accounts.${name}.`,
  )}`.execute(db);
  await sql`comment on column ${sql.id('hiresync', shared, 'account')} is ${sql.lit(
    'The account the row belongs to (default: the environment credentials, schema public; else the registered account of that name and schema).',
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists hiresync.schema_layouts`.execute(db);
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'hiresync' and c.relname like 'data\\_%' and c.relkind in ('r', 'p')
      and not c.relispartition`.execute(db);
  for (const { name } of rows) {
    await sql`drop table if exists ${sql.id('hiresync', name)} cascade`.execute(db);
  }
}
