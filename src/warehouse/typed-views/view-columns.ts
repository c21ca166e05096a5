import { type RawBuilder, sql, type Transaction } from 'kysely';
import { RECORD_STATE_COLUMNS } from '../layout/account-views.js';
import type { Database } from '../tables.js';
import { type ColumnType, columnTypeOf } from './column-types.js';

/** Whether `name` is a typed view's column of the row (`id` and the row's state), not a key's. */
export function isRowColumn(name: string): boolean {
  return name === 'id' || RECORD_STATE_COLUMNS.some((c) => c.name === name);
}

/** A column of a typed view, as kept in typed_view_columns. */
export interface TypedColumn {
  key: string;
  column_name: string;
  type: ColumnType;
  /** The names its column had before (typed_view_columns.previous_names), oldest first. */
  previous_names: string[];
}

/**
 * The columns of `account`'s typed view `view` (hiresync.data_typed_view_columns),
 * by key; previous_names empty where the table has no such column.
 */
export async function typedColumnsOf(
  trx: Transaction<Database>,
  account: string,
  view: string,
): Promise<TypedColumn[]> {
  const previous = (await hasColumn(trx, 'hiresync.data_typed_view_columns', 'previous_names'))
    ? sql`previous_names`
    : sql`'{}'::text[]`;
  const { rows } = await sql<TypedColumn>`
    select key, column_name, type, ${previous} as previous_names
    from hiresync.data_typed_view_columns
    where account = ${account} and view = ${view} order by key`.execute(trx);
  return rows;
}

/** Whether `relation` (named with its schema: `hiresync.data_sync_runs`) has column `column`. */
export async function hasColumn(
  trx: Transaction<Database>,
  relation: string,
  column: string,
): Promise<boolean> {
  const { rows } = await sql<{ present: boolean }>`
    select exists (select 1 from pg_catalog.pg_attribute where attrelid = to_regclass(${relation})
      and attname = ${column} and not attisdropped) as present`.execute(trx);
  return rows[0]?.present === true;
}

/**
 * The key each name shows, of `columns`: today's names, and the names their
 * columns had before (a view kept in place for an analyst's object still has
 * such a column); today's name wins where the two meet.
 */
export function keysByName(columns: readonly TypedColumn[]): Map<string, string> {
  const keyOf = new Map<string, string>();
  for (const c of columns) for (const name of c.previous_names) keyOf.set(name, c.key);
  for (const c of columns) keyOf.set(c.column_name, c.key);
  return keyOf;
}

/**
 * How a column of type `type` reads `key` from `data`, never raising (see
 * migrations/hiresync/0003_safe_casts.ts, 0004_typed_column_names.ts and
 * 0005_typed_view_repairs.ts): timestamps without a UTC offset read as UTC,
 * and zone abbreviations as the Default set names them, whoever reads.
 */
export function columnExpression(key: string, type: ColumnType): RawBuilder<unknown> {
  const value = sql`data -> ${sql.lit(key)}`;
  switch (type) {
    case 'bigint':
    case 'numeric':
    case 'boolean':
    case 'date':
      return sql`${sql.id('hiresync', `try_${type}`)}(${value})`;
    case 'timestamptz':
      return sql`hiresync.try_timestamptz_utc(${value})`;
    case 'jsonb':
      return value;
    default:
      return sql`data ->> ${sql.lit(key)}`;
  }
}

/**
 * The select of a view column of Postgres type `pgType` showing `key`, or
 * null of that type when no key is given or the type is none of a typed
 * view's.
 */
export function columnSelect(key: string | undefined, pgType: string): RawBuilder<unknown> {
  const kind = columnTypeOf(pgType);
  return key === undefined || kind === undefined
    ? sql`null::${sql.raw(pgType)}`
    : columnExpression(key, kind);
}

/**
 * Stores `columns` of `account`'s typed view `view` in
 * hiresync.data_typed_view_columns (`renamed`: some changed name).
 */
export async function storeTypedColumns(
  trx: Transaction<Database>,
  account: string,
  view: string,
  columns: Iterable<TypedColumn>,
  renamed: boolean,
  runId: string | undefined,
): Promise<void> {
  if (renamed) {
    // One key's new name may be another's old one: out of the way first.
    await sql`update hiresync.data_typed_view_columns set column_name = '~' || column_name
        where account = ${account} and view = ${view}`.execute(trx);
  }
  const remembers = await hasColumn(trx, 'hiresync.data_typed_view_columns', 'previous_names');
  for (const c of columns) {
    await sql`insert into hiresync.data_typed_view_columns (account, view, key, column_name, type, added_run_id)
        values (${account}, ${view}, ${c.key}, ${c.column_name}, ${c.type}, ${runId ?? null}::bigint)
        on conflict (account, view, key) do update set column_name = excluded.column_name, type = excluded.type`.execute(
      trx,
    );
    if (remembers && c.previous_names.length > 0) {
      await sql`update hiresync.data_typed_view_columns set previous_names = ${c.previous_names}::text[]
          where account = ${account} and view = ${view} and key = ${c.key}`.execute(trx);
    }
  }
}
