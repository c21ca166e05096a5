import { type Kysely, sql } from 'kysely';
import { accountNameProblem, schemaOf } from '../../account-name.js';
import type { Database } from '../tables.js';
import { SHARED_PREFIX } from './account-views.js';

/** Rows of one table stored for an account: `table` as its account schema names it (`jobs`). */
export interface StoredRows {
  table: string;
  rows: number;
}

/**
 * Shared tables written by registering an account, not only by its runs: one
 * row per typed view of its schema (which view, from which table) and per
 * column of it (the columns its resources declare are there from the
 * registration on), no record of the customer's. An account never synced
 * has rows there, so they do not tell data of an earlier registration (its
 * records, versions and runs do).
 */
const REGISTRATION_TABLES = new Set(['typed_views', 'typed_view_columns']);

/**
 * What is stored under the name `account` for an account of that name that
 * is not registered (one removed without --drop-data): per table, the rows
 * with that account in the shared tables (`hiresync.data_<table>`), and in
 * tables of its own in schema `account` (an account schema of the earlier
 * layout, which `accounts add` would move to shared storage), tables with
 * none left out, most rows first. The typed views' registration rows
 * ({@link REGISTRATION_TABLES}) are not counted.
 *
 * Two statements whatever the number of accounts: one reads the names of the
 * tables from the catalog, one counts, each shared table through its
 * primary key's leading column (`account`, bound as a parameter: one
 * partition of a partitioned table, none of the other accounts' rows read).
 */
export async function storedRowsOf(db: Kysely<Database>, account: string): Promise<StoredRows[]> {
  const problem = accountNameProblem(account);
  if (problem)
    throw new Error(`refusing to count the rows of ${JSON.stringify(account)}: ${problem}`);
  const schema = schemaOf(account);
  const { rows: tables } = await sql<{ schema: string; relation: string; table: string }>`
    select n.nspname::text as schema, c.relname::text as relation,
      case when n.nspname = 'hiresync'
        then pg_catalog.substr(c.relname, ${SHARED_PREFIX.length + 1}) else c.relname::text end as table
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where not c.relispartition and (
      (n.nspname = 'hiresync' and c.relkind in ('r', 'p')
        and c.relname like ${`${SHARED_PREFIX.replace('_', '\\_')}%`})
      or (n.nspname = ${schema} and c.relkind = 'r' and c.relname not like 'kysely\\_%'))
    order by 1, 2`.execute(db);
  const counted = tables.filter(
    (t) => t.schema !== 'hiresync' || !REGISTRATION_TABLES.has(t.table),
  );
  if (counted.length === 0) return [];
  const counts = counted.map(
    (t, i) =>
      sql`select ${sql.lit(i)} as i, pg_catalog.count(*) as rows from ${sql.id(t.schema, t.relation)}${
        t.schema === 'hiresync' ? sql` where account = ${account}` : sql``
      }`,
  );
  const { rows } = await sql<{
    i: number;
    rows: string;
  }>`${sql.join(counts, sql` union all `)}`.execute(db);
  const byTable = new Map<string, number>();
  for (const row of rows) {
    const table = counted[row.i]?.table;
    const n = Number(row.rows);
    if (table !== undefined && n > 0) byTable.set(table, (byTable.get(table) ?? 0) + n);
  }
  return [...byTable]
    .map(([table, n]) => ({ table, rows: n }))
    .sort((a, b) => b.rows - a.rows || a.table.localeCompare(b.table));
}

/** `1,204 tracking_links, 88 jobs, 3 sync_runs`. */
export function describeStoredRows(stored: readonly StoredRows[]): string {
  return stored.map((s) => `${s.rows.toLocaleString('en-US')} ${s.table}`).join(', ');
}
