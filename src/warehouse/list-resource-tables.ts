import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';

/**
 * The comment that marks `NAME_data` as the table of a list resource named
 * in HIRESYNC_RESOURCES (not a migration's): how hiresync finds them again
 * (`migrate`, `accounts add`, the all_accounts views) without configuration.
 */
export const LIST_RESOURCE_MARKER = 'hiresync list resource';

/** The table holding a list resource's records, as sent. */
export function listResourceTable(name: string): string {
  return `${name}_data`;
}

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The list resources whose tables `schema` holds, sorted: the `…_data` tables
 * marked with {@link LIST_RESOURCE_MARKER}.
 */
export async function listResourcesIn(db: Db, schema: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select substring(obj_description(c.oid, 'pg_class') from ${`^${LIST_RESOURCE_MARKER} ([a-z][a-z0-9_]*):`}) as name
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind = 'r' and c.relname like '%\\_data'
      and obj_description(c.oid, 'pg_class') like ${`${LIST_RESOURCE_MARKER} %`}
    order by 1`.execute(db);
  return rows.map((r) => r.name).filter((name) => name !== null);
}

/**
 * Creates what a list resource `name` is stored in, in `schema`, where it is
 * missing; changes nothing that exists (safe to run any number of times).
 * The caller serialises it (see ensureListResources) and runs it in a
 * transaction, so a schema never holds half of it:
 *
 * - `NAME_data`: one row per record id, the record as sent in `data`, with
 *   `deleted_at`, `changed_at` and bookkeeping: the shape of `jobs`;
 * - `NAME_history`: one row per version of a record, as `jobs_history`;
 * - the view `NAME`: what analysts read;
 * - the typed view `NAME_flat` (id and deleted_at until a full run fills it).
 *
 * Every table, view and column is commented. A relation of one of these names
 * that hiresync did not make (an analyst's own table `applications`) makes it
 * fail with Postgres's message, taking nothing over.
 */
export async function createListResourceTables(
  trx: Transaction<Database>,
  schema: string,
  name: string,
): Promise<void> {
  const data = sql.id(schema, listResourceTable(name));
  const history = sql.id(schema, `${name}_history`);
  const view = sql.id(schema, name);
  await sql`create table if not exists ${data} (
      id bigint primary key,
      data jsonb not null,
      deleted_at timestamptz,
      first_synced_at timestamptz not null default now(),
      synced_at timestamptz not null default now(),
      last_seen_run_id bigint,
      changed_at timestamptz not null default now()
    ) with (fillfactor = 80)`.execute(trx);
  await sql`create table if not exists ${history} (
      id bigint not null,
      valid_from timestamptz not null,
      valid_to timestamptz,
      run_id bigint,
      deleted boolean not null default false,
      data jsonb not null,
      primary key (id, valid_from)
    )`.execute(trx);
  await sql`create or replace view ${view} as
    select id, data, deleted_at, changed_at, first_synced_at, synced_at, last_seen_run_id
    from ${data}`.execute(trx);
  // Its typed view, filled at the end of its first full run (see refresh-typed-view.ts).
  // A schema whose migrations lag behind (no typed_views yet) gets it from
  // the first refresh after `hiresync migrate`.
  const flat = `${name}_flat`;
  const { rows } = await sql<{ registry: boolean; present: boolean }>`
    select to_regclass(${`${schema}.typed_views`}) is not null as registry,
      to_regclass(${`${schema}.${flat}`}) is not null as present`.execute(trx);
  if (rows[0]?.registry) {
    await sql`insert into ${sql.id(schema, 'typed_views')} (view, source_table)
      values (${flat}, ${listResourceTable(name)}) on conflict (view) do nothing`.execute(trx);
  }
  if (rows[0]?.registry && !rows[0].present) {
    await sql`create view ${sql.id(schema, flat)} as select id, deleted_at from ${data}`.execute(
      trx,
    );
    await sql`comment on view ${sql.id(schema, flat)} is ${sql.lit(
      `${name} with one typed column per top-level key of the records, filled at the end of the first full run.`,
    )}`.execute(trx);
  }

  const comments: Array<[kind: 'table' | 'view', relation: string, text: string]> = [
    [
      'table',
      listResourceTable(name),
      `${LIST_RESOURCE_MARKER} ${name}: one row per ${name} record id, the record as the API sent it (list ${name}, named in HIRESYNC_RESOURCES). Read it through the view ${name}.`,
    ],
    [
      'table',
      `${name}_history`,
      `Every version of each ${name} record hiresync has stored, one row per version; the open version (valid_to null) is the record as it is now. A page that changes nothing adds no version.`,
    ],
    [
      'view',
      name,
      `${name} as the API lists them, one row per record, the record as sent in data; deleted_at is set for records a full sync no longer saw. See ${name}_flat for one typed column per key.`,
    ],
  ];
  for (const [kind, relation, text] of comments) {
    await sql`comment on ${sql.raw(kind)} ${sql.id(schema, relation)} is ${sql.lit(text)}`.execute(
      trx,
    );
  }
  const columns: Record<string, Record<string, string>> = {
    [listResourceTable(name)]: {
      id: `Record id (API).`,
      data: 'The record exactly as the API last sent it.',
      deleted_at:
        'Set when a completed full sync no longer saw the record (soft delete); cleared when seen again.',
      changed_at: `When the current version began (valid_from of its open version in ${name}_history).`,
      first_synced_at: 'When hiresync first stored this record.',
      synced_at: 'When hiresync last wrote this row.',
      last_seen_run_id: 'The sync run (sync_runs.id) that last saw this record.',
    },
    [`${name}_history`]: {
      id: `Record id (API), as in ${name}.id.`,
      valid_from:
        'When this version began (the transaction time of the page or sweep that stored it).',
      valid_to: 'When the next version replaced this one; null for the current version.',
      run_id: 'The sync run (sync_runs.id) that stored this version.',
      deleted:
        'True for the version that records a deletion (a full sync no longer saw the record); it holds the last record seen.',
      data: 'The record exactly as the API sent it in this version.',
    },
  };
  columns[name] = columns[listResourceTable(name)] ?? {};
  for (const [relation, notes] of Object.entries(columns)) {
    for (const [column, note] of Object.entries(notes)) {
      await sql`comment on column ${sql.id(schema, relation, column)} is ${sql.lit(note)}`.execute(
        trx,
      );
    }
  }
}
