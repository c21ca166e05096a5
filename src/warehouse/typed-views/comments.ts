import { sql, type Transaction } from 'kysely';
import { RECORD_ID_COMMENT, RECORD_STATE_COLUMNS } from '../layout/account-views.js';
import type { ViewColumn } from '../layout/view-placement.js';
import type { Database } from '../tables.js';
import type { DeclaredColumns } from './column-plan.js';

/** Comments the view and each of its columns with the key it shows. */
export async function commentView(
  trx: Transaction<Database>,
  target: { schema: string; view: string; table: string; columns?: DeclaredColumns | undefined },
  layout: readonly ViewColumn[],
  keyOf: ReadonlyMap<string, string>,
): Promise<void> {
  await sql`comment on view ${sql.id(target.schema, target.view)} is ${sql.lit(
    `${target.table} with one typed column per top-level key of the records (data), in key order (keys added while other objects depended on the view come last), then deleted_at, changed_at and synced_at. Keys the resource declares always have a column, of the declared type. Types are inferred from every value seen and only widen; a value that does not parse as its column's type shows as null here (it stays in ${target.table}.data) until the next full run widens the column. Timestamps without a UTC offset, and dates in _at keys, read as UTC. Rebuilt by hiresync at the end of a full run when a key appears; a key that disappears keeps its column.`,
  )}`.execute(trx);
  for (const column of layout) {
    const key = keyOf.get(column.name);
    const row = column.name === 'id' ? RECORD_ID_COMMENT : rowColumnComment(column.name);
    const note =
      row !== undefined
        ? row
        : key === undefined
          ? 'No key shows here any more.'
          : `Key ${JSON.stringify(key)} of the record as sent (data -> ${JSON.stringify(key)}), as ${shownType(column.type)}.${key in (target.columns ?? {}) ? ` Declared by the resource: always this column, whatever the data; a value that does not read as ${column.type} shows as null (it is in ${target.table}.data).` : ''}`;
    await sql`comment on column ${sql.id(target.schema, target.view, column.name)} is ${sql.lit(note)}`.execute(
      trx,
    );
  }
}

/** A column type as its comment names it. */
function shownType(pgType: string): string {
  if (pgType === 'timestamp with time zone')
    return 'timestamptz (without a UTC offset: read as UTC)';
  return pgType;
}

/** The comment of a row-state column (`deleted_at`, `changed_at`, `synced_at`), or undefined for another name. */
export function rowColumnComment(name: string): string | undefined {
  return RECORD_STATE_COLUMNS.find((c) => c.name === name)?.comment;
}
