import { type Kysely, sql } from 'kysely';
import type { Database } from '../../src/warehouse/tables.js';

/**
 * Rows written by hand into the shared tables the analytics views read, as a
 * run would have stored them: a record per row, `deleted` for one the API no
 * longer lists.
 */
export interface StoredRecord {
  id: number;
  deleted?: boolean;
  [key: string]: unknown;
}

/** Stores `records` of list resource `name` (hiresync.data_NAME_data) for `account`. */
export async function storeList(
  db: Kysely<Database>,
  account: string,
  name: string,
  records: readonly StoredRecord[],
): Promise<void> {
  for (const { deleted, ...data } of records) {
    await sql`insert into ${sql.id('hiresync', `data_${name}_data`)} (account, id, data, deleted_at)
      values (${account}, ${data.id}, ${JSON.stringify(data)}::jsonb, ${deleted ? sql`now()` : null})`.execute(
      db,
    );
  }
}

/** Stores `records` of a built-in JSON resource (jobs, job_posts) for `account`. */
export async function storeBuiltIn(
  db: Kysely<Database>,
  account: string,
  table: 'jobs' | 'job_posts',
  records: readonly StoredRecord[],
): Promise<void> {
  for (const { deleted, ...data } of records) {
    await sql`insert into ${sql.id('hiresync', `data_${table}`)} (account, id, data, deleted_at)
      values (${account}, ${data.id}, ${JSON.stringify(data)}::jsonb, ${deleted ? sql`now()` : null})`.execute(
      db,
    );
  }
}

/** A version of a stored record in its history (hiresync.data_NAME_history). */
export async function storeVersion(
  db: Kysely<Database>,
  account: string,
  name: string,
  version: { id: number; from: string; to: string | null; deleted?: boolean; data: object },
): Promise<void> {
  await sql`insert into ${sql.id('hiresync', `data_${name}_history`)} (account, id, valid_from, valid_to, deleted, data)
    values (${account}, ${version.id}, ${version.from}::timestamptz, ${version.to}::timestamptz,
      ${version.deleted ?? false}, ${JSON.stringify(version.data)}::jsonb)`.execute(db);
}

/** The rows of `relation` (or of a query's `from`), as JSON values: numbers rounded to 1e-6, timestamps ISO UTC, sorted. */
export async function rowsOf(
  db: Kysely<Database>,
  from: string,
): Promise<Array<Record<string, unknown>>> {
  const { rows } = await sql<{ row: Record<string, unknown> }>`
    select to_jsonb(v) as row from ${sql.raw(from)} v`.execute(db);
  return sortRows(rows.map((r) => r.row));
}

/** `rows` as {@link rowsOf} gives them: numbers rounded to 1e-6, timestamps ISO UTC, sorted by their JSON. */
export function sortRows(
  rows: ReadonlyArray<Record<string, unknown>>,
): Array<Record<string, unknown>> {
  const normal = rows.map((row) =>
    Object.fromEntries(
      Object.entries(row)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, value]) => [
          key,
          typeof value === 'number'
            ? Math.round(value * 1e6) / 1e6
            : typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)
              ? new Date(value).toISOString()
              : value,
        ]),
    ),
  );
  return normal.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}
