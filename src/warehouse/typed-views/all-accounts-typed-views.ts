import { sql, type Transaction } from 'kysely';
import { DEFAULT_ACCOUNT } from '../../account-name.js';
import { RECORD_ID_COMMENT, RECORD_STATE_COLUMNS, sharedTable } from '../layout/account-views.js';
import {
  ACCOUNT_COLUMN,
  registeredAccounts,
  SHOWN_ACCOUNTS,
} from '../layout/all-accounts-members.js';
import { ALL_ACCOUNTS_LOCK, ALL_ACCOUNTS_SCHEMA } from '../layout/migrate.js';
import { dependentsOf, emptyView, placeView, type ViewColumn } from '../layout/view-placement.js';
import { LOCK_SPACE } from '../lock-keys.js';
import type { Database } from '../tables.js';
import { columnNamesOf } from './column-names.js';
import { type ColumnType, holdsType, PG_TYPES, widen } from './column-types.js';
import { rowColumnComment } from './comments.js';
import { blockMessage, keptColumns, noteTypedViewBlock } from './null-blocks.js';
import { columnSelect, isRowColumn, keysByName, type TypedColumn } from './view-columns.js';

/**
 * Builds `all_accounts.<view>` over the typed view `view` (jobs_flat, …) of
 * `default` and every registered account whose schema has it. Typed views
 * follow each account's data, so their columns differ: the union has
 * `account`, `id`, a column for every key any account's view has (named as
 * in every account, see columnNamesOf; sorted; null where an account lacks
 * the key), then `deleted_at`, `changed_at` and `synced_at`. A column takes the widest type of the
 * accounts' (see widen: bigint and numeric give numeric, text only when
 * kinds conflict), and every account's rows are read at that type from the
 * shared table (`hiresync.data_<table>`) in one scan, so the union depends on
 * no account's view and holds the same locks whatever their number. Objects of others
 * built on the union are kept (see placeView): new columns are appended; a
 * column of a name an account's column had before keeps showing that key; a
 * column whose type cannot hold its key's values, or that shows no key, is
 * kept, and `warning` (and hiresync.typed_view_blocks) say so and what
 * resolves it. A view no account registers has none. Runs in the caller's
 * transaction; takes the views' lock.
 */
export async function rebuildTypedUnion(
  trx: Transaction<Database>,
  view: string,
): Promise<{ warning?: string }> {
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${ALL_ACCOUNTS_LOCK}::int)`.execute(
    trx,
  );
  // Every shown account's columns of the view (those of SHOWN_ACCOUNTS, named
  // as a parameter), and the shared table it reads.
  const shown = [DEFAULT_ACCOUNT, ...(await registeredAccounts(trx))];
  const { rows: registered } = await sql<{ table: string }>`
    select distinct source_table as table from hiresync.data_typed_views
    where account = any(${shown}::text[]) and view = ${view}`.execute(trx);
  const table = registered[0]?.table;
  const { rows: stored } = await sql<TypedColumn & { account: string }>`
    select account, key, column_name, type, previous_names from hiresync.data_typed_view_columns
    where account = any(${shown}::text[]) and view = ${view} order by account, key`.execute(trx);
  const byAccount = new Map<string, TypedColumn[]>();
  for (const { account, ...column } of stored) {
    byAccount.set(account, [...(byAccount.get(account) ?? []), column]);
  }
  const present =
    table === undefined ? [] : [...byAccount.values()].map((columns) => ({ columns }));
  const target = { schema: ALL_ACCOUNTS_SCHEMA, name: view };
  await sql`create schema if not exists ${sql.id(ALL_ACCOUNTS_SCHEMA)}`.execute(trx);
  // No account registers it (any more): nothing to read.
  if (table === undefined) {
    if ((await dependentsOf(trx, target)).length > 0) await emptyView(trx, target);
    else await sql`drop view if exists ${sql.id(ALL_ACCOUNTS_SCHEMA, view)}`.execute(trx);
    return {};
  }
  const names = await columnNamesOf(
    trx,
    view,
    present.flatMap((m) => m.columns.map((c) => c.key)),
  );
  const union = new Map<string, { key: string; type: ColumnType }>();
  for (const { columns } of present) {
    for (const column of columns) {
      const name = names.get(column.key) ?? column.column_name;
      const seen = union.get(name);
      union.set(name, {
        key: column.key,
        type: seen ? widen(seen.type, column.type) : column.type,
      });
    }
  }
  const ordered = [...union.keys()].sort();
  const desired: ViewColumn[] = [
    { name: ACCOUNT_COLUMN.name, type: 'text' },
    { name: 'id', type: 'bigint' },
    ...ordered.map((name) => ({ name, type: PG_TYPES[union.get(name)?.type ?? 'text'] })),
    ...RECORD_STATE_COLUMNS.map(({ name, type }) => ({ name, type })),
  ];
  // A union column of another name (kept in place for an analyst's object:
  // a name an account's column had under an earlier rule) shows, for each
  // account, the key that account's column of that name shows.
  const earlier = present.map(({ columns }) => ({
    keyOf: keysByName(columns),
    typeOf: new Map(columns.map((c) => [c.key, PG_TYPES[c.type]])),
  }));
  const keyIn = (name: string, i: number): string | undefined => {
    const key = union.get(name)?.key;
    if (key !== undefined) return present[i]?.columns.some((c) => c.key === key) ? key : undefined;
    return earlier[i]?.keyOf.get(name);
  };
  // One read of the shared table for every account: a column shows the key
  // its name shows in the first account that has it.
  const keyOfColumn = (name: string): string | undefined =>
    present.map((_, i) => keyIn(name, i)).find((k) => k !== undefined);
  const select = (layout: readonly ViewColumn[]) => {
    const list = layout.map((c) => {
      if (c.name === ACCOUNT_COLUMN.name || isRowColumn(c.name)) {
        return sql.id(c.name);
      }
      return sql`${columnSelect(keyOfColumn(c.name), c.type)} as ${sql.id(c.name)}`;
    });
    return sql`select ${sql.join(list)} from ${sql.id('hiresync', sharedTable(table ?? ''))}
      where ${sql.raw(SHOWN_ACCOUNTS)}`;
  };
  const placed = await placeView(trx, target, desired, select, { holds: holdsType });
  await sql`comment on view ${sql.id(ALL_ACCOUNTS_SCHEMA, view)} is ${sql.lit(
    `${view} of every account, one after another, with the account first: a column for every key any account's view has, named the same in every account (null where an account's data never had the key), at the widest type of the accounts' (text only where kinds conflict), read from each account's records. Columns added while objects of others depended on it come last. Rebuilt when one of them changes, and by hiresync migrate and accounts add/remove.`,
  )}`.execute(trx);
  // The type each column of another name would need: the widest of the
  // accounts' columns of its key; undefined when no account's key shows there.
  const neededType = (name: string): string | undefined => {
    let type: ColumnType | undefined;
    present.forEach(({ columns }, i) => {
      const key = earlier[i]?.keyOf.get(name);
      const column = columns.find((c) => c.key === key);
      if (column) type = type === undefined ? column.type : widen(type, column.type);
    });
    return type === undefined ? undefined : PG_TYPES[type];
  };
  for (const column of placed.layout) {
    const key =
      union.get(column.name)?.key ??
      present.map((_, i) => keyIn(column.name, i)).find((k) => k !== undefined);
    const row = column.name === 'id' ? RECORD_ID_COMMENT : rowColumnComment(column.name);
    const note =
      column.name === ACCOUNT_COLUMN.name
        ? (ACCOUNT_COLUMN.comment ?? '')
        : row !== undefined
          ? row
          : key === undefined
            ? 'No account has this key any more.'
            : `Key ${JSON.stringify(key)} of the record as sent (data -> ${JSON.stringify(key)}), as ${column.type}${column.type === 'timestamp with time zone' ? ' (without a UTC offset: read as UTC)' : ''}.`;
    await sql`comment on column ${sql.id(ALL_ACCOUNTS_SCHEMA, view, column.name)} is ${sql.lit(note)}`.execute(
      trx,
    );
  }
  const kept = keptColumns(placed, new Set(desired.map((c) => c.name)), neededType);
  if (!kept) {
    await noteTypedViewBlock(trx, ALL_ACCOUNTS_SCHEMA, view);
    return {};
  }
  const message = blockMessage(
    `${ALL_ACCOUNTS_SCHEMA}.${view}`,
    kept,
    placed.dependents,
    'hiresync migrate',
  );
  await noteTypedViewBlock(trx, ALL_ACCOUNTS_SCHEMA, view, {
    message,
    blocking: placed.dependents,
  });
  return { warning: message };
}
