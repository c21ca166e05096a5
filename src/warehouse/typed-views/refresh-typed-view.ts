import { type Kysely, sql, type Transaction } from 'kysely';
import { schemaOf } from '../../account-name.js';
import { RECORD_STATE_COLUMNS } from '../layout/account-views.js';
import { ALL_ACCOUNTS_SCHEMA } from '../layout/migrate.js';
import { placeView, type ViewColumn, viewColumns } from '../layout/view-placement.js';
import { LOCK_SPACE, lockKey } from '../lock-keys.js';
import type { Database } from '../tables.js';
import { rebuildTypedUnion } from './all-accounts-typed-views.js';
import { columnNamesOf, renameColumns } from './column-names.js';
import { type DeclaredColumns, planColumns } from './column-plan.js';
import {
  type ColumnType,
  columnTypeOf,
  holdsType,
  PG_TYPES,
  profileKeys,
  widen,
} from './column-types.js';
import { commentView } from './comments.js';
import {
  blockMessage,
  isBlocked,
  keptColumns,
  noteTypedViewBlock,
  REFRESH_LOCK_TIMEOUT,
  refreshFailureMessage,
} from './null-blocks.js';
import {
  columnSelect,
  hasColumn,
  isRowColumn,
  keysByName,
  storeTypedColumns,
  type TypedColumn,
  typedColumnsOf,
} from './view-columns.js';

/**
 * Most key columns a typed view gets: Postgres allows 1,664 columns in a
 * select list, and records whose keys are data (a map keyed by ids) would
 * pass that. Keys beyond it stay in `data` only, with a warning.
 */
export const MAX_TYPED_COLUMNS = 1000;

/** What {@link refreshTypedView} did. */
export interface TypedViewChange {
  /** Keys that got a column. */
  added: string[];
  /** Keys whose column's type widened, as `key: old → new`. */
  retyped: string[];
  /** Keys whose column got its name under today's rule, as `key: old → new` (present when any). */
  renamed?: string[];
  /**
   * What could not be done and what resolves it, if anything: a column an
   * object of someone else's keeps from widening or keeps though it shows no
   * key (in the account's view or the all_accounts union), a union that could
   * not be rebuilt, or keys beyond {@link MAX_TYPED_COLUMNS}.
   */
  warning?: string;
}

/** The typed view of a table of records stored as sent (`data`). */
export interface TypedViewTarget {
  /** `jobs_flat`, … */
  view: string;
  /** Keys the resource's declaration fixes, with their types (see planColumns); default none. */
  columns?: DeclaredColumns | undefined;
  /** `jobs`, …: the account's relation; its rows are read from hiresync.data_<table>. */
  table: string;
  /** The account whose view it is (its schema: see schemaOf); every statement binds it. */
  account: string;
}

/** A target whose account is known. */
export type AccountView = TypedViewTarget & { account: string; schema: string };

/** Options of {@link refreshTypedView}. */
export interface RefreshOptions {
  /**
   * Look at every record, not only those changed since the last refresh:
   * reapply-policy rewrites records in place (a hashed value where a number
   * was) without moving changed_at, which a run's refresh goes by. Default false.
   */
  everyRecord?: boolean;
}

/**
 * Whether the definition of `view` was built before try_timestamptz_utc
 * (hiresync.try_timestamptz, which reads as UTC too since control migration
 * 0005): rebuilt once, so that its definition and comments say so.
 */
async function readsSessionZone(trx: Transaction<Database>, view: AccountView): Promise<boolean> {
  const { rows } = await sql<{ old: boolean }>`
    select coalesce(pg_get_viewdef(to_regclass(${`"${view.schema}"."${view.view}"`})) ~ 'try_timestamptz\\(', false) as old`.execute(
    trx,
  );
  return rows[0]?.old === true;
}

/**
 * Brings a typed view up to date with the records changed since it last
 * looked: a new key adds a column, a value that does not parse as its
 * column's type widens it (bigint → numeric → text; anything → jsonb with
 * objects), a key no longer seen keeps its column. Column names follow
 * {@link columnNamesOf} (a column named under an older rule is renamed, and
 * its old name remembered in typed_view_columns.previous_names). The view is
 * rebuilt only when something changed, in one transaction under the
 * all_accounts views' lock (taken before any table is read, in the order
 * migrations take them), so a reader sees the old view or the new one; then
 * the all_accounts union, under a savepoint: a union that cannot be rebuilt
 * (an analyst's long query on it) leaves the account's view rebuilt and is
 * signalled, and the next full run of any account rebuilds it.
 *
 * When objects of others depend on the view, they are kept (see placeView):
 * new columns are appended; a column that must widen beyond what its type
 * holds keeps its type, and a column of an earlier name keeps showing its key
 * (one that maps to no key reads null); `warning`,
 * hiresync.typed_view_blocks and the run's sync_runs.warnings say so and
 * what to do. When the refresh fails (a lock held past
 * {@link REFRESH_LOCK_TIMEOUT}, a deadlock), it is recorded the same way, in
 * a transaction of its own, and the error is thrown; the next refresh that
 * succeeds clears it. Every statement names hiresync.data_<table> (and
 * hiresync.data_typed_views, data_typed_view_columns, data_sync_runs) and
 * binds `target.account`; the views it builds are in the account's schema,
 * named with it.
 */
export async function refreshTypedView(
  db: Kysely<Database>,
  target: TypedViewTarget,
  runId?: string,
  options: RefreshOptions = {},
): Promise<TypedViewChange> {
  const { account } = target;
  const view: AccountView = { ...target, schema: schemaOf(account) };
  const { schema } = view;
  try {
    return await db.transaction().execute((trx) => rebuildTypedView(trx, view, runId, options));
  } catch (error) {
    const message = refreshFailureMessage(
      `${schema}.${target.view}`,
      error,
      refreshCommand(schema, target.view),
      target.table,
    );
    try {
      await db.transaction().execute(async (trx) => {
        await noteTypedViewBlock(trx, schema, target.view, { message, blocking: [] });
        if (runId !== undefined) await noteRunWarnings(trx, account, runId, [message]);
      });
    } catch {
      // Postgres unreachable: the refresh's own error says more.
    }
    throw error;
  }
}

/** The command whose run refreshes `schema.view`. */
function refreshCommand(schema: string, view: string): string {
  const account = schema === 'public' ? '' : ` --account ${schema}`;
  return `hiresync sync --full${account} --resource ${view.replace(/_flat$/, '')}`;
}

/** The body of {@link refreshTypedView}, in its transaction. */
async function rebuildTypedView(
  trx: Transaction<Database>,
  target: AccountView,
  runId: string | undefined,
  options: RefreshOptions,
): Promise<TypedViewChange> {
  const { account, schema } = target;
  const since = await startRefresh(trx, target, options);
  const { profiles, seenThrough } = await profileKeys(trx, account, target.table, since);
  const kept = await typedColumnsOf(trx, account, target.view);
  const columns = new Map(kept.map((c) => [c.key, { ...c }]));
  const { added, retyped, leftOut, unread } = planColumns(
    columns,
    profiles,
    target.columns ?? {},
    MAX_TYPED_COLUMNS,
  );
  const names = await columnNamesOf(trx, target.view, columns.keys());
  const renamed = renameColumns(columns.values(), names);
  // Stored before the views are built: the union reads them.
  if (added.length > 0 || retyped.length > 0 || renamed.length > 0) {
    await storeTypedColumns(trx, account, target.view, columns.values(), renamed.length > 0, runId);
  }
  const ordered = [...columns.values()].sort(byKey);
  const desired: ViewColumn[] = [
    { name: 'id', type: 'bigint' },
    ...ordered.map((c) => ({ name: c.column_name, type: PG_TYPES[c.type] })),
    ...RECORD_STATE_COLUMNS.map(({ name, type }) => ({ name, type })),
  ];
  const matches = await viewMatches(trx, target, desired);
  const warnings: string[] = [];
  if (matches) {
    // Nothing kept back: a signal of an earlier refresh is out of date.
    await noteTypedViewBlock(trx, schema, target.view);
  } else {
    const block = await placeTypedView(trx, target, [...columns.values()], desired);
    if (block) warnings.push(block);
  }
  const union = await refreshUnion(trx, target, ordered);
  if (union) warnings.push(union);
  await sql`update hiresync.data_typed_views
    set seen_through = ${seenThrough}::timestamptz${matches ? sql`` : sql`, rebuilt_at = now()`}
    where account = ${account} and view = ${target.view}`.execute(trx);
  if (unread.length > 0)
    warnings.push(
      `typed view ${schema}.${target.view}: some values of declared key(s) ${unread.join(', ')} do not read as the declared type and show as null there (they are in ${target.table}.data): records stored before the declaration, or values the field policy hashed`,
    );
  if (leftOut > 0)
    warnings.push(
      `typed view ${schema}.${target.view} has ${MAX_TYPED_COLUMNS} key columns, the most it gets: ${leftOut} more key(s) stay in ${target.table}.data only (records whose keys are data, such as a map keyed by ids, are better read from data)`,
    );
  if (warnings.length > 0 && runId !== undefined)
    await noteRunWarnings(trx, account, runId, warnings);
  return {
    added,
    retyped,
    ...(renamed.length > 0 ? { renamed } : {}),
    ...(warnings.length > 0 ? { warning: warnings.join('; ') } : {}),
  };
}

const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : 1);

/** Takes the view's lock and registers it; returns since when records are looked at (null: all). */
async function startRefresh(
  trx: Transaction<Database>,
  target: AccountView,
  options: RefreshOptions,
): Promise<string | null> {
  const { account, schema } = target;
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${lockKey(`typed view ${schema}.${target.view}`)}::int)`.execute(
    trx,
  );
  // An analyst's long query on the view would hold the rebuild (and the
  // run's end) back: give up after a while instead (signalled); the next
  // full run tries again.
  await sql`select set_config('lock_timeout', ${REFRESH_LOCK_TIMEOUT}, true)`.execute(trx);
  await sql`insert into hiresync.data_typed_views (account, view, source_table)
    values (${account}, ${target.view}, ${target.table})
    on conflict (account, view) do nothing`.execute(trx);
  const { rows: state } = await sql<{ seen_through: string | null }>`
    select seen_through::text as seen_through from hiresync.data_typed_views
    where account = ${account} and view = ${target.view}`.execute(trx);
  return options.everyRecord ? null : (state[0]?.seen_through ?? null);
}

/** Whether the view has the columns `desired` and reads timestamps as UTC. */
async function viewMatches(
  trx: Transaction<Database>,
  target: AccountView,
  desired: readonly ViewColumn[],
): Promise<boolean> {
  const existing = await viewColumns(trx, { schema: target.schema, name: target.view });
  return (
    existing !== undefined &&
    existing.length === desired.length &&
    desired.every((c) => existing.some((e) => e.name === c.name && e.type === c.type)) &&
    !(await readsSessionZone(trx, target))
  );
}

/**
 * Puts the view in place with the columns `desired` (see placeView) and
 * records what it keeps back, if anything; returns that message.
 */
async function placeTypedView(
  trx: Transaction<Database>,
  target: AccountView,
  columns: readonly TypedColumn[],
  desired: readonly ViewColumn[],
): Promise<string | undefined> {
  const { schema } = target;
  const keyOf = keysByName(columns);
  const typeOfKey = new Map(columns.map((c) => [c.key, PG_TYPES[c.type]]));
  const placed = await placeView(
    trx,
    { schema, name: target.view },
    desired,
    (layout) => {
      const list = layout.map((c) =>
        isRowColumn(c.name)
          ? sql.id(c.name)
          : sql`${columnSelect(keyOf.get(c.name), c.type)} as ${sql.id(c.name)}`,
      );
      // The view reads the account's view of its table, named with its schema.
      return sql`select ${sql.join(list)} from ${sql.id(schema, target.table)}`;
    },
    { holds: holdsType },
  );
  await commentView(trx, target, placed.layout, keyOf);
  const wanted = new Set(desired.map((c) => c.name));
  const keptBack = keptColumns(placed, wanted, (name) => {
    const key = keyOf.get(name);
    return key === undefined ? undefined : typeOfKey.get(key);
  });
  if (!keptBack) {
    await noteTypedViewBlock(trx, schema, target.view);
    return undefined;
  }
  const message = blockMessage(
    `${schema}.${target.view}`,
    keptBack,
    placed.dependents,
    refreshCommand(schema, target.view),
  );
  await noteTypedViewBlock(trx, schema, target.view, { message, blocking: placed.dependents });
  return message;
}

/**
 * Rebuilds the all_accounts union (one read of the shared table for every
 * account) only when it lacks a column of this account's or holds it at a
 * narrower type, or is signalled: the first syncs of many accounts with the
 * same keys rebuild it once, not once each under its lock. Under a savepoint:
 * the account's view stands even when the union cannot be rebuilt now.
 * Returns its warning, if any.
 */
async function refreshUnion(
  trx: Transaction<Database>,
  target: AccountView,
  ordered: readonly TypedColumn[],
): Promise<string | undefined> {
  const stale =
    (await unionLacks(trx, target.view, ordered)) ||
    (await isBlocked(trx, ALL_ACCOUNTS_SCHEMA, target.view));
  if (!stale) return undefined;
  await sql`savepoint typed_union`.execute(trx);
  try {
    const union = await rebuildTypedUnion(trx, target.view);
    await sql`release savepoint typed_union`.execute(trx);
    return union.warning;
  } catch (error) {
    await sql`rollback to savepoint typed_union`.execute(trx);
    const message = refreshFailureMessage(
      `${ALL_ACCOUNTS_SCHEMA}.${target.view}`,
      error,
      'hiresync migrate',
      `${target.table}`,
    );
    await noteTypedViewBlock(trx, ALL_ACCOUNTS_SCHEMA, target.view, { message, blocking: [] });
    return message;
  }
}

/** Adds `warnings` to the run's sync_runs.warnings (a schema migrated before 0007 has no such column: skipped). */
async function noteRunWarnings(
  trx: Transaction<Database>,
  account: string,
  runId: string,
  warnings: readonly string[],
): Promise<void> {
  if (!(await hasColumn(trx, 'hiresync.data_sync_runs', 'warnings'))) return;
  const text = warnings.join('; ').slice(0, 8000);
  await sql`update hiresync.data_sync_runs set warnings = concat_ws('; ', warnings, ${text}::text)
    where account = ${account} and id = ${runId}::bigint`.execute(trx);
}

/**
 * Whether `all_accounts.<view>` lacks one of `columns` (this account's), or
 * holds one at a type that cannot hold its values.
 */
async function unionLacks(
  trx: Transaction<Database>,
  view: string,
  columns: ReadonlyArray<{ column_name: string; type: ColumnType }>,
): Promise<boolean> {
  const union = await viewColumns(trx, { schema: ALL_ACCOUNTS_SCHEMA, name: view });
  if (union === undefined) return true;
  const types = new Map(union.map((c) => [c.name, columnTypeOf(c.type)]));
  return columns.some((c) => {
    const kind = types.get(c.column_name);
    return kind === undefined || widen(kind, c.type) !== kind;
  });
}
