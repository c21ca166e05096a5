import { sql, type Transaction } from 'kysely';
import type { Database } from '../tables.js';
import {
  accountViewsText,
  ident,
  SHARED_PREFIX,
  type SharedTable,
  sharedTable,
  sharedTables,
} from './account-views.js';
import {
  captureDependentViews,
  dropCapturedViews,
  restoreCapturedViews,
} from './dependent-views.js';
import { createSharedListTables } from './shared-list-tables.js';

type Trx = Transaction<Database>;

/** What {@link convertToSharedStorage} moved. */
export interface Conversion {
  /** Rows moved, per table. */
  readonly moved: Record<string, number>;
  /** Views of others (and hiresync's own) made again over the new views. */
  readonly views: string[];
  /** Indexes of others on the old tables, which go with them: where to make them now. */
  readonly warnings: string[];
}

/**
 * Moves the tables of a schema of the earlier layout (each account's rows in
 * tables of its own schema) into shared storage, in the caller's
 * transaction: every row of each table that has a shared counterpart
 * (`hiresync.data_<table>`; a list resource's are made first) is copied there
 * with `account`, ids and timestamps as they are (history versions
 * included), the table is dropped and the account's view of the same name
 * made in its place. Every view built on those tables, in the schema or
 * elsewhere (tracking_links_flat, the typed views, analysts' own), is read
 * first and made again, the same, over the new views (see
 * dependent-views.ts); a trigger, rule, function or foreign key of others on
 * them refuses the move, naming it. An index of others on a moved table is
 * named in the warnings (it goes with the table).
 */
export async function convertToSharedStorage(
  trx: Trx,
  schema: string,
  account: string,
): Promise<Conversion> {
  const { rows: legacy } = await sql<{ oid: number; name: string }>`
    select c.oid::int as oid, c.relname as name from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind = 'r' and c.relname not like 'kysely\\_%'
    order by c.relname`.execute(trx);
  // The list resources' tables first get shared tables of their own.
  for (const { name } of legacy) {
    const list = /^([a-z][a-z0-9_]*)_data$/.exec(name)?.[1];
    if (list !== undefined && (await isListResourceTable(trx, schema, name))) {
      await createSharedListTables(trx, list);
    }
  }
  const { rows: shared } = await sql<{ name: string }>`
    select substr(c.relname, ${SHARED_PREFIX.length + 1}) as name from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'hiresync' and c.relkind in ('r', 'p') and not c.relispartition
      and c.relname like 'data\\_%'`.execute(trx);
  const sharedNames = new Set(shared.map((r) => r.name));
  const moving = legacy.filter((t) => sharedNames.has(t.name));
  // No write to them may commit between their copy and their drop (an older
  // worker still running during a deploy): it would go with the table.
  if (moving.length > 0) {
    await sql`lock table ${sql.join(moving.map((t) => sql.id(schema, t.name)))} in access exclusive mode`.execute(
      trx,
    );
  }
  const grants = await tableGrants(trx, moving);
  const warnings = await foreignIndexes(trx, schema, moving);
  const captured = await captureDependentViews(
    trx,
    moving.map((t) => t.oid),
    `schema ${schema} cannot move to shared storage`,
  );
  await dropCapturedViews(trx, captured);
  const moved: Record<string, number> = {};
  // Runs before the rejected records that reference them.
  const ordered = [
    ...moving.filter((t) => t.name === 'sync_runs' || t.name === 'typed_views'),
    ...moving.filter((t) => t.name !== 'sync_runs' && t.name !== 'typed_views'),
  ];
  for (const { name } of ordered) {
    const { rows: columns } = await sql<{ name: string }>`
      select a.attname as name from pg_attribute a
      where a.attrelid = ${`${ident(schema)}.${ident(name)}`}::regclass and a.attnum > 0
        and not a.attisdropped
      order by a.attnum`.execute(trx);
    const list = sql.join(columns.map((c) => sql.id(c.name)));
    const result = await sql`
      insert into ${sql.id('hiresync', sharedTable(name))} (account, ${list}) overriding system value
      select ${account}, ${list} from ${sql.id(schema, name)}`.execute(trx);
    moved[name] = Number(result.numAffectedRows ?? 0);
  }
  for (const { name } of [...ordered].reverse()) {
    await sql`drop table ${sql.id(schema, name)}`.execute(trx);
  }
  // Identities continue above every id an account had, and never go back.
  for (const table of ['sync_runs', 'rejected_records']) {
    await sql`select setval(pg_get_serial_sequence(${`hiresync.${sharedTable(table)}`}, 'id'),
      greatest((select max(id) from ${sql.id('hiresync', sharedTable(table))}),
        pg_sequence_last_value(pg_get_serial_sequence(${`hiresync.${sharedTable(table)}`}, 'id')::regclass),
        1))`.execute(trx);
  }
  const tables = await tablesNamed(trx, new Set(moving.map((t) => t.name)));
  await sql.raw(accountViewsText(schema, account, tables)).execute(trx);
  // Whoever could read or write a table can do the same with its view.
  for (const { table, grantee, privilege, grantable } of grants) {
    await sql
      .raw(
        `grant ${privilege} on ${ident(schema)}.${ident(table)} to ${grantee}${grantable ? ' with grant option' : ''}`,
      )
      .execute(trx);
  }
  await restoreCapturedViews(trx, captured);
  return { moved, views: captured.map((v) => `${v.schema}.${v.name}`), warnings };
}

/**
 * The privileges others hold on `tables` (select, insert, update, delete: what
 * a view can be granted), to grant again on their views.
 */
async function tableGrants(trx: Trx, tables: ReadonlyArray<{ oid: number; name: string }>) {
  if (tables.length === 0) return [];
  const { rows } = await sql<{
    table: string;
    grantee: string;
    privilege: string;
    grantable: boolean;
  }>`
    select c.relname as table,
      case when x.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(x.grantee)) end as grantee,
      x.privilege_type as privilege, x.is_grantable as grantable
    from pg_class c, aclexplode(c.relacl) x
    where c.oid = any(${tables.map((t) => t.oid)}::oid[]) and x.grantee <> c.relowner
      and x.privilege_type in ('SELECT', 'INSERT', 'UPDATE', 'DELETE')
    order by 1, 2, 3`.execute(trx);
  return rows;
}

async function isListResourceTable(trx: Trx, schema: string, table: string): Promise<boolean> {
  const { rows } = await sql<{ marked: boolean }>`
    select coalesce(obj_description(${`${ident(schema)}.${ident(table)}`}::regclass, 'pg_class')
      like 'hiresync list resource %', false) as marked`.execute(trx);
  return rows[0]?.marked === true;
}

/** The shared tables of `names`, with their columns (see sharedTables). */
async function tablesNamed(trx: Trx, names: ReadonlySet<string>): Promise<SharedTable[]> {
  return (await sharedTables(trx)).filter((t) => names.has(t.table));
}

/** Indexes on `tables` that their migrations did not make: named, with where they belong now. */
async function foreignIndexes(
  trx: Trx,
  schema: string,
  tables: ReadonlyArray<{ oid: number; name: string }>,
): Promise<string[]> {
  if (tables.length === 0) return [];
  const { rows } = await sql<{ index: string; table: string; definition: string }>`
    select i.relname as index, t.relname as table, pg_get_indexdef(x.indexrelid) as definition
    from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
    where x.indrelid = any(${tables.map((t) => t.oid)}::oid[])
      and not exists (select 1 from pg_constraint k where k.conindid = x.indexrelid)
      and i.relname not in ('tracking_links_job_id_idx', 'tracking_links_job_post_id_idx',
                            'tracking_links_token_idx', 'sync_runs_resource_id_idx',
                            'sync_runs_resource_started_idx')
    order by 1`.execute(trx);
  return rows.map(
    (r) =>
      `index ${schema}.${r.index} (${r.definition}) went with table ${schema}.${r.table}, now a view of hiresync.${sharedTable(r.table)}: make it there, led by account (e.g. create index on hiresync.${sharedTable(r.table)} (account, …))`,
  );
}
