import { type Kysely, sql, type Transaction } from 'kysely';
import { quoteIdentifier } from '../quote-identifier.js';
import type { Database } from '../tables.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Shared storage (migration hiresync/0009): every account's rows live in
 * tables `hiresync.data_<table>`, keyed by account; an account's schema
 * (public for `default`) holds a view of each, named `<table>` as the table it
 * used to hold, showing that account's rows only (see {@link accountViewsText}).
 */
export const SHARED_PREFIX = 'data_';

/**
 * Why every view that reads a shared table is a security barrier (the rule;
 * docs/shared-storage.md, "An account's schema is a boundary"): a role given
 * only `usage` on an account's schema and `select` on its relations reads
 * that account's rows and nothing else. A plain view's filter `account = …`
 * is merged into the reader's query, and the planner may run a cheap
 * function of the reader's WHERE (any role can make one in pg_temp) on every
 * row of the shared partition before it; a `security_barrier` view's filter
 * runs first, and only leakproof operators of the reader's query (`=`, `<`
 * on ids and timestamps: what indexes need) are evaluated with it. Views
 * built on these views (tracking_links_flat, the typed views) inherit the
 * boundary: a qualifier pushed into them stops at the barrier.
 */
export const ACCOUNT_BOUNDARY = 'security_barrier';

/** The schema of the shared tables: hiresync's own. */
const CONTROL_SCHEMA = 'hiresync';

/** The shared table behind an account's relation `table`. */
export function sharedTable(table: string): string {
  return `${SHARED_PREFIX}${table}`;
}

/** A shared table: the relation name an account's view takes, and its columns after `account`. */
export interface SharedTable {
  /** The name of the account's view (the shared table's name without {@link SHARED_PREFIX}). */
  readonly table: string;
  /** The shared table's comment, whose first paragraph the view takes. */
  readonly comment: string | null;
  readonly columns: ReadonlyArray<{ name: string; comment: string | null }>;
}

/** The shared tables with their columns (`account` left out), by name. */
export async function sharedTables(db: Db): Promise<SharedTable[]> {
  const { rows } = await sql<{
    table: string;
    comment: string | null;
    name: string;
    column_comment: string | null;
  }>`
    select substr(c.relname, ${SHARED_PREFIX.length + 1}) as table,
      obj_description(c.oid, 'pg_class') as comment,
      a.attname as name, col_description(c.oid, a.attnum) as column_comment
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = ${CONTROL_SCHEMA} and c.relname like ${`${SHARED_PREFIX.replace('_', '\\_')}%`}
      and c.relkind in ('r', 'p') and not c.relispartition and a.attname <> 'account'
    order by c.relname, a.attnum`.execute(db);
  const tables = new Map<
    string,
    SharedTable & { columns: Array<{ name: string; comment: string | null }> }
  >();
  for (const row of rows) {
    const table = tables.get(row.table) ?? { table: row.table, comment: row.comment, columns: [] };
    tables.set(row.table, table);
    table.columns.push({ name: row.name, comment: row.column_comment });
  }
  return [...tables.values()];
}

/**
 * The layout of the account views {@link accountViewsText} makes from
 * `tables`: a fingerprint of their names and columns. A schema whose recorded
 * layout (hiresync.schema_layouts) differs gets its views made again.
 */
export function layoutOf(tables: readonly SharedTable[]): string {
  return tables.map(layoutEntry).sort().join(';');
}

/** One table's part of {@link layoutOf}: its name and columns. */
export function layoutEntry(table: SharedTable): string {
  return `${table.table}(${table.columns.map((c) => c.name).join(',')})`;
}

/** `"name"`, quoted for SQL. */
export const ident = quoteIdentifier;

/** `'text'`, quoted for SQL (standard_conforming_strings is on from Postgres 9.1). */
export function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The statements (one text, no parameters) that make `schema` hold, for each
 * of `tables`, the view `<table>`: the shared table's rows of `account`, its
 * columns in their order, then `account` (default `account`, so a row
 * written through the view is the account's; `with local check option`, so
 * no row of another account is ever written through it; `security_barrier`,
 * so the account filter runs before any function of the reader's query: see
 * {@link ACCOUNT_BOUNDARY} and docs/shared-storage.md). Writes go through
 * these views as they went to tables: hiresync's statements name relations
 * without a schema, and Postgres rewrites an insert, update, delete or
 * `on conflict (account, id)` on the view into one on the shared table,
 * pruned to the account's partition. `create or replace`: a view that exists
 * keeps its identity (objects built on it survive) and gains new columns.
 */
export function accountViewsText(
  schema: string,
  account: string,
  tables: readonly SharedTable[],
  existing: ReadonlyMap<string, readonly string[]> = new Map(),
): string {
  const statements: string[] = [];
  for (const { table, comment, columns } of tables) {
    const view = `${ident(schema)}.${ident(table)}`;
    // A view made again keeps its columns where they are (`create or replace`
    // only appends): the shared table's new columns come after them.
    const names = [...columns.map((c) => c.name), 'account'];
    const kept = (existing.get(table) ?? []).filter((name) => names.includes(name));
    const list = [...kept, ...names.filter((name) => !kept.includes(name))].map(ident).join(', ');
    statements.push(
      `create or replace view ${view} with (${ACCOUNT_BOUNDARY}) as select ${list} from ${ident(CONTROL_SCHEMA)}.${ident(sharedTable(table))} where account = ${literal(account)} with local check option`,
      `alter view ${view} alter column account set default ${literal(account)}`,
      `comment on view ${view} is ${literal(`${(comment ?? table).split('\n\n')[0]} (Account ${account}'s rows of ${CONTROL_SCHEMA}.${sharedTable(table)}.)`)}`,
      `comment on column ${view}.account is ${literal(`Always ${account}: this schema's account (the key of ${CONTROL_SCHEMA}.${sharedTable(table)}).`)}`,
    );
    for (const column of columns) {
      if (column.comment === null) continue;
      statements.push(
        `comment on column ${view}.${ident(column.name)} is ${literal(column.comment)}`,
      );
    }
  }
  return `${statements.join(';\n')};`;
}

/**
 * Registers `account`'s first typed views (those {@link derivedViewsText}
 * makes) in the shared table of typed views, the account bound.
 */
export async function registerFirstTypedViews(db: Db, account: string): Promise<void> {
  await sql`insert into hiresync.data_typed_views (account, view, source_table)
    select ${account}, v.view, v.source_table
    from unnest(${FIRST_TYPED_VIEWS.map(([view]) => view)}::text[],
      ${FIRST_TYPED_VIEWS.map(([, table]) => table)}::text[]) as v(view, source_table)
    on conflict (account, view) do nothing`.execute(db);
}

/**
 * The columns every typed view (`jobs_flat`, `NAME_flat`, their all_accounts
 * unions) ends with, after `id` and the keys' columns: the row's state as
 * hiresync keeps it, read from the table beside `data`. `changed_at` is what
 * an incremental model downstream picks changed rows by. A key of one of
 * these names gets a changed name (see column-names.ts).
 */
export const RECORD_STATE_COLUMNS: ReadonlyArray<{ name: string; type: string; comment: string }> =
  [
    {
      name: 'deleted_at',
      type: 'timestamp with time zone',
      comment: 'Set when a completed full sync no longer saw the record (soft delete).',
    },
    {
      name: 'changed_at',
      type: 'timestamp with time zone',
      comment:
        'When the record as stored last changed (valid_from of its current version in the history): rows changed since a time T are changed_at > T.',
    },
    {
      name: 'synced_at',
      type: 'timestamp with time zone',
      comment: 'When hiresync last wrote this row.',
    },
  ];

/** The comment of a typed view's `id`. */
export const RECORD_ID_COMMENT = 'Record id (API).';

/**
 * The statements that make `schema.view` a typed view before any refresh
 * filled it: `id` and {@link RECORD_STATE_COLUMNS} of `schema.table`, each
 * commented (a refresh adds the keys' columns, declared ones first).
 */
export function typedViewPlaceholderText(schema: string, view: string, table: string): string {
  const name = `${ident(schema)}.${ident(view)}`;
  const columns = ['id', ...RECORD_STATE_COLUMNS.map((c) => c.name)].map(ident).join(', ');
  return [
    `create view ${name} as select ${columns} from ${ident(schema)}.${ident(table)}`,
    `comment on view ${name} is ${literal(`${table} with one typed column per top-level key of the records, filled at the end of the first full run (a resource's declared columns by hiresync migrate).`)}`,
    `comment on column ${name}.id is ${literal(RECORD_ID_COMMENT)}`,
    ...RECORD_STATE_COLUMNS.map(
      (c) => `comment on column ${name}.${ident(c.name)} is ${literal(c.comment)}`,
    ),
  ].join(';\n');
}

/** The typed views a new account starts with, and the relation each reads (see refresh-typed-view.ts). */
export const FIRST_TYPED_VIEWS: ReadonlyArray<[view: string, table: string]> = [
  ['jobs_flat', 'jobs'],
  ['job_posts_flat', 'job_posts'],
];

/**
 * Records that `schema` holds the views of `account` at `layout` (see
 * {@link layoutOf}).
 */
export async function recordLayout(
  db: Db,
  schema: string,
  account: string,
  layout: string,
): Promise<void> {
  await sql`insert into hiresync.schema_layouts (schema, account, layout) values (${schema}, ${account}, ${layout})
    on conflict (schema) do update set account = excluded.account, layout = excluded.layout, updated_at = now()`.execute(
    db,
  );
}
