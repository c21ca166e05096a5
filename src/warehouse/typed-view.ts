import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import { coerceError, HiresyncError } from '../errors.js';
import { rebuildTypedUnion } from './account-schemas.js';
import { ALL_ACCOUNTS_LOCK, ALL_ACCOUNTS_SCHEMA } from './migrate.js';
import { LOCK_SPACE, lockKey } from './resource-lock.js';
import type { Database } from './schema.js';
import {
  dependentsOf,
  emptyView,
  type PlacedView,
  placeView,
  type ViewColumn,
  viewColumns,
} from './view-placement.js';

/**
 * The type of a typed view's column. `unknown`: the key has held only nulls
 * so far; it shows as text until a value says more.
 */
export type ColumnType =
  | 'unknown'
  | 'bigint'
  | 'numeric'
  | 'boolean'
  | 'timestamptz'
  | 'date'
  | 'text'
  | 'jsonb';

/** What the values of one top-level key were, counted by one scan. */
export interface KeyProfile {
  key: string;
  /** Values that are not null. */
  values: number;
  numbers: number;
  /** Numbers that are whole and fit a bigint. */
  integers: number;
  booleans: number;
  strings: number;
  /** Strings of a key ending in `_at` that parse as timestamptz. */
  timestamps: number;
  /** Strings of a key ending in `_on` that parse as date. */
  dates: number;
  /** Objects and arrays. */
  structured: number;
}

/**
 * The type every non-null value of a key parses as: objects or arrays make it
 * jsonb; numbers bigint when all are whole, else numeric; booleans boolean;
 * strings timestamptz for an `_at` key and date for an `_on` key when every
 * one parses so, else text; any other mix text.
 */
export function typeOf(p: KeyProfile): ColumnType {
  if (p.values === 0) return 'unknown';
  if (p.structured > 0) return 'jsonb';
  if (p.numbers === p.values) return p.integers === p.values ? 'bigint' : 'numeric';
  if (p.booleans === p.values) return 'boolean';
  if (p.strings === p.values) {
    if (p.key.endsWith('_at') && p.timestamps === p.values) return 'timestamptz';
    if (p.key.endsWith('_on') && p.dates === p.values) return 'date';
  }
  return 'text';
}

/**
 * The narrowest type holding the values of both: types only ever widen, so a
 * value seen once keeps its column able to show it. `unknown` (only nulls)
 * gives way to anything; bigint and numeric give numeric; jsonb holds
 * anything; other mixes are text. (date and timestamptz never meet: a key is
 * date only when it ends in `_on`, timestamptz only when it ends in `_at`,
 * and a key has one column in every account.)
 */
export function widen(a: ColumnType, b: ColumnType): ColumnType {
  if (a === b || b === 'unknown') return a;
  if (a === 'unknown') return b;
  if (a === 'jsonb' || b === 'jsonb') return 'jsonb';
  if ([a, b].every((kind) => kind === 'bigint' || kind === 'numeric')) return 'numeric';
  return 'text';
}

/**
 * Most key columns a typed view gets: Postgres allows 1,664 columns in a
 * select list, and records whose keys are data (a map keyed by ids) would
 * pass that. Keys beyond it stay in `data` only, with a warning.
 */
export const MAX_TYPED_COLUMNS = 1000;

/**
 * Column names a key never takes: the view's own columns, and `account`,
 * which the all_accounts union puts first.
 */
const RESERVED = new Set(['id', 'deleted_at', 'account']);

/** The form of a changed name (`name__1`): no key keeps a name of that form as it is. */
const CHANGED_FORM = /__[0-9]+$/;

/**
 * Whether `key` is its own column: a plain lower-case identifier of at most
 * 63 bytes, not reserved (`id`, `deleted_at`, `account`) and not of the form
 * of a changed name (`…__N`).
 */
export function isOwnColumnName(key: string): boolean {
  return (
    /^[a-z_][a-z0-9_]*$/.test(key) &&
    Buffer.byteLength(key) <= 63 &&
    !RESERVED.has(key) &&
    !CHANGED_FORM.test(key)
  );
}

/**
 * The view column of `key`: the key itself when {@link isOwnColumnName},
 * else a changed name `stem__N`, the stem made from the key (`Weird Key` →
 * `weird_key`, `2nd` → `k_2nd`, `Name` → `name`), N the smallest from 1 whose
 * name is not in `taken` (the changed names already given in the view). A
 * changed name never equals a name a plain key keeps, so a plain key met later,
 * in any account, never finds its name taken.
 */
export function columnNameFor(key: string, taken: ReadonlySet<string>): string {
  if (isOwnColumnName(key)) return key;
  let stem = key
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48)
    .replace(/_+$/, '');
  if (stem === '') stem = 'key';
  else if (/^[0-9]/.test(stem)) stem = `k_${stem}`.slice(0, 48);
  for (let n = 1; ; n += 1) {
    const name = `${stem}__${n}`;
    if (!taken.has(name)) return name;
  }
}

/**
 * The column of each of `keys` in typed view `view`, the same in every
 * account: a plain key its own name, any other the name kept for it in
 * hiresync.typed_column_names, given (and kept there) at its first sight.
 * The caller holds the all_accounts views' lock, which serialises the
 * numbering.
 */
export async function columnNamesOf(
  trx: Transaction<Database>,
  view: string,
  keys: Iterable<string>,
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const changed: string[] = [];
  for (const key of new Set(keys)) {
    if (isOwnColumnName(key)) names.set(key, key);
    else changed.push(key);
  }
  if (changed.length === 0) return names;
  const { rows: present } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.typed_column_names') is not null as present`.execute(trx);
  if (!present[0]?.present) {
    throw new HiresyncError(
      "hiresync.typed_column_names is missing: run 'hiresync migrate' before refreshing typed views",
    );
  }
  const { rows } = await sql<{ key: string; column_name: string }>`
    select key, column_name from hiresync.typed_column_names where view = ${view}`.execute(trx);
  const kept = new Map(rows.map((r) => [r.key, r.column_name]));
  const taken = new Set(rows.map((r) => r.column_name));
  for (const key of changed.sort()) {
    let name = kept.get(key);
    if (name === undefined) {
      name = columnNameFor(key, taken);
      taken.add(name);
      await sql`insert into hiresync.typed_column_names (view, key, column_name)
        values (${view}, ${key}, ${name})`.execute(trx);
    }
    names.set(key, name);
  }
  return names;
}

/** The type of a column of type `type` in Postgres's words (format_type). */
export const PG_TYPES: Readonly<Record<ColumnType, string>> = {
  unknown: 'text',
  bigint: 'bigint',
  numeric: 'numeric',
  boolean: 'boolean',
  timestamptz: 'timestamp with time zone',
  date: 'date',
  text: 'text',
  jsonb: 'jsonb',
};

/** The ColumnType of a Postgres type, when it is one. */
function columnTypeOf(pgType: string): ColumnType | undefined {
  const found = (Object.entries(PG_TYPES) as [ColumnType, string][]).find(
    ([kind, pg]) => pg === pgType && kind !== 'unknown',
  );
  return found?.[0];
}

/**
 * Whether a view column kept at Postgres type `kept` shows every value of a
 * key whose column would now be of type `wanted`: the same type, text and
 * jsonb (they show any value as sent), or a type {@link widen} keeps (numeric
 * holds bigint).
 */
export function holdsType(kept: string, wanted: string): boolean {
  if (kept === wanted || kept === PG_TYPES.text || kept === PG_TYPES.jsonb) return true;
  const a = columnTypeOf(kept);
  const b = columnTypeOf(wanted);
  return a !== undefined && b !== undefined && widen(a, b) === a;
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
 * The typed_view_columns of `view` in `schema` (the search path's when
 * undefined), by key; previous_names empty in a schema migrated before 0009.
 */
export async function typedColumnsOf(
  trx: Transaction<Database>,
  view: string,
  schema?: string,
): Promise<TypedColumn[]> {
  const table =
    schema === undefined ? sql.table('typed_view_columns') : sql.id(schema, 'typed_view_columns');
  const relation = schema === undefined ? 'typed_view_columns' : `${schema}.typed_view_columns`;
  const previous = (await hasColumn(trx, relation, 'previous_names'))
    ? sql`previous_names`
    : sql`'{}'::text[]`;
  const { rows } = await sql<TypedColumn>`
    select key, column_name, type, ${previous} as previous_names from ${table}
    where view = ${view} order by key`.execute(trx);
  return rows;
}

/** Whether `relation` (a name the search path resolves) has column `column`. */
async function hasColumn(
  trx: Transaction<Database>,
  relation: string,
  column: string,
): Promise<boolean> {
  const { rows } = await sql<{ present: boolean }>`
    select exists (select 1 from pg_attribute where attrelid = to_regclass(${relation})
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
  /** `jobs`, … */
  table: string;
}

/** Counts what the values of every key of the rows changed after `since` are. */
async function profileKeys(
  trx: Transaction<Database>,
  table: string,
  since: string | null,
): Promise<{ profiles: KeyProfile[]; seenThrough: string | null }> {
  const changed = since === null ? sql`true` : sql`changed_at > ${since}::timestamptz`;
  const { rows } = await sql<Record<keyof KeyProfile, string>>`
    with kv as (
      select e.key, e.value, jsonb_typeof(e.value) as t
      from ${sql.table(table)} as r, jsonb_each(r.data) as e
      where jsonb_typeof(r.data) = 'object' and ${changed} and e.key <> 'id'
    )
    select key,
      count(*) filter (where t <> 'null') as values,
      count(*) filter (where t = 'number') as numbers,
      count(*) filter (where t = 'number' and hiresync.try_bigint(value) is not null) as integers,
      count(*) filter (where t = 'boolean') as booleans,
      count(*) filter (where t = 'string') as strings,
      count(*) filter (where t = 'string' and key like '%\\_at'
        and hiresync.try_timestamptz_utc(value) is not null) as timestamps,
      count(*) filter (where t = 'string' and key like '%\\_on'
        and hiresync.try_date(value) is not null) as dates,
      count(*) filter (where t in ('object', 'array')) as structured
    from kv group by key`.execute(trx);
  const { rows: through } = await sql<{ at: string | null }>`
    select max(changed_at)::text as at from ${sql.table(table)}
    where ${changed}`.execute(trx);
  return {
    profiles: rows.map((r) => ({
      key: r.key,
      values: Number(r.values),
      numbers: Number(r.numbers),
      integers: Number(r.integers),
      booleans: Number(r.booleans),
      strings: Number(r.strings),
      timestamps: Number(r.timestamps),
      dates: Number(r.dates),
      structured: Number(r.structured),
    })),
    seenThrough: through[0]?.at ?? since,
  };
}

/**
 * Whether the definition of `view` was built before try_timestamptz_utc
 * (hiresync.try_timestamptz, which reads as UTC too since control migration
 * 0005): rebuilt once, so that its definition and comments say so.
 */
async function readsSessionZone(trx: Transaction<Database>, view: string): Promise<boolean> {
  const { rows } = await sql<{ old: boolean }>`
    select coalesce(pg_get_viewdef(to_regclass(${view})) ~ 'try_timestamptz\\(', false) as old`.execute(
    trx,
  );
  return rows[0]?.old === true;
}

/**
 * Records that `schema.view` shows null where the records hold values
 * (objects of others keep columns from widening or keep columns that show no
 * key; or its refresh could not finish): message says which, and what
 * resolves it. Without `block`, that it is blocked no more. Kept in hiresync.typed_view_blocks, which `status` and
 * the metric hiresync_typed_view_blocked read.
 */
export async function noteTypedViewBlock(
  trx: Transaction<Database>,
  schema: string,
  view: string,
  block?: { message: string; blocking: readonly string[] },
): Promise<void> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.typed_view_blocks') is not null as present`.execute(trx);
  if (!rows[0]?.present) return;
  if (block) {
    await sql`insert into hiresync.typed_view_blocks (schema, view, message, blocking, blocked_since)
      values (${schema}, ${view}, ${block.message}, ${[...block.blocking]}::text[], now())
      on conflict (schema, view) do update set message = excluded.message,
        blocking = excluded.blocking, resolved_at = null,
        blocked_since = coalesce(hiresync.typed_view_blocks.blocked_since, excluded.blocked_since)`.execute(
      trx,
    );
  } else {
    await sql`update hiresync.typed_view_blocks
      set message = null, blocked_since = null, resolved_at = now()
      where schema = ${schema} and view = ${view} and message is not null`.execute(trx);
  }
}

/** What a typed view (or union) kept in place for objects of others cannot show. */
export interface KeptColumns {
  /** Columns kept at a type that cannot show every value of their key, as `name: old → new`. */
  conflicts: readonly string[];
  /** Columns that show no key any more (named under an earlier rule, or their key is gone): null in every row. */
  orphans: readonly string[];
}

/**
 * Why `view` shows null where the records hold values, and what resolves it:
 * drop the objects in the way (`dependents`), rebuild with `command`, create
 * them again.
 */
export function blockMessage(
  view: string,
  kept: KeptColumns,
  dependents: readonly string[],
  command: string,
): string {
  const them = dependents.length === 1 ? 'it' : 'them';
  const depend = `because ${dependents.join(', ')} depend${dependents.length === 1 ? 's' : ''} on it`;
  const parts: string[] = [];
  if (kept.conflicts.length > 0) {
    parts.push(
      `keeps column${kept.conflicts.length > 1 ? 's' : ''} ${kept.conflicts.join(', ')} at the old type ${depend}: values that do not fit the old type read null there (they are kept as sent in the records' data)`,
    );
  }
  if (kept.orphans.length > 0) {
    parts.push(
      `keeps column${kept.orphans.length > 1 ? 's' : ''} ${kept.orphans.join(', ')}, which ${kept.orphans.length > 1 ? 'show' : 'shows'} no key any more (named under an earlier rule, or no account has its key), ${depend}: ${kept.orphans.length > 1 ? 'they read' : 'it reads'} null in every row`,
    );
  }
  return `typed view ${view} ${parts.join('; and ')}. To resolve: drop ${dependents.join(', ')}, run '${command}', then create ${them} again (on the columns the view names now)`;
}

/** The lock_timeout of a refresh's table locks (an analyst's query holding one). */
const REFRESH_LOCK_TIMEOUT = '10s';

/**
 * Why the refresh of `view` failed, what it leaves absent, and what resolves
 * it: end what was in the way (or fix the cause), then run `command`.
 */
export function refreshFailureMessage(
  view: string,
  error: unknown,
  command: string,
  table: string,
): string {
  const code = (error as { code?: string }).code;
  const cause =
    code === LOCK_NOT_AVAILABLE
      ? `a lock it needs was held for more than ${REFRESH_LOCK_TIMEOUT} (an open transaction or a long query reads ${view}: see pg_stat_activity)`
      : code === DEADLOCK_DETECTED
        ? 'it deadlocked with another transaction (a migration or a removal running at the same time)'
        : coerceError(error).message;
  const remedy =
    code === LOCK_NOT_AVAILABLE
      ? 'end that transaction or query'
      : code === DEADLOCK_DETECTED
        ? 'let the other finish'
        : 'fix that';
  return `typed view ${view} could not be refreshed: ${cause}. Until it is, a key that appeared since has no column there and a value its column's type cannot hold reads null (every value is kept as sent in ${table}.data). To resolve: ${remedy}, then run '${command}'`;
}

const LOCK_NOT_AVAILABLE = '55P03';
const DEADLOCK_DETECTED = '40P01';

/** Comments the view and each of its columns with the key it shows. */
async function commentView(
  trx: Transaction<Database>,
  target: TypedViewTarget,
  layout: readonly ViewColumn[],
  keyOf: ReadonlyMap<string, string>,
): Promise<void> {
  await sql`comment on view ${sql.table(target.view)} is ${sql.lit(
    `${target.table} with one typed column per top-level key of the records (data), in key order (keys added while other objects depended on the view come last), then deleted_at. Types are inferred from every value seen and only widen; a value that does not parse as its column's type shows as null here (it stays in ${target.table}.data) until the next full run widens the column. Timestamps without a UTC offset, and dates in _at keys, read as UTC. Rebuilt by hiresync at the end of a full run when a key appears; a key that disappears keeps its column.`,
  )}`.execute(trx);
  for (const column of layout) {
    const key = keyOf.get(column.name);
    const note =
      column.name === 'id'
        ? 'Record id (API).'
        : column.name === 'deleted_at'
          ? 'Set when a completed full sync no longer saw the record (soft delete).'
          : key === undefined
            ? 'No key shows here any more.'
            : `Key ${JSON.stringify(key)} of the record as sent (data -> ${JSON.stringify(key)}), as ${shownType(column.type)}.`;
    await sql`comment on column ${sql.id(target.view, column.name)} is ${sql.lit(note)}`.execute(
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
 * succeeds clears it. `db` is bound to the account's schema (search_path).
 */
export async function refreshTypedView(
  db: Kysely<Database>,
  target: TypedViewTarget,
  runId?: string,
): Promise<TypedViewChange> {
  const { rows: here } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
    db,
  );
  const schema = here[0]?.schema ?? 'public';
  try {
    return await db.transaction().execute((trx) => rebuildTypedView(trx, schema, target, runId));
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
        if (runId !== undefined) await noteRunWarnings(trx, runId, [message]);
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
  schema: string,
  target: TypedViewTarget,
  runId: string | undefined,
): Promise<TypedViewChange> {
  // First, before any table is read: a migration takes this lock and then
  // changes the account's tables, so the other order could deadlock.
  // Column names are given across accounts, and the union built, under it.
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${ALL_ACCOUNTS_LOCK}::int)`.execute(
    trx,
  );
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${lockKey(`typed view ${schema}.${target.view}`)}::int)`.execute(
    trx,
  );
  // An analyst's long query on the view would hold the rebuild (and the
  // run's end) back: give up after a while instead (signalled); the next
  // full run tries again.
  await sql`select set_config('lock_timeout', ${REFRESH_LOCK_TIMEOUT}, true)`.execute(trx);
  await sql`insert into typed_views (view, source_table) values (${target.view}, ${target.table})
    on conflict (view) do nothing`.execute(trx);
  const { rows: state } = await sql<{ seen_through: string | null }>`
    select seen_through::text as seen_through from typed_views where view = ${target.view}`.execute(
    trx,
  );
  const since = state[0]?.seen_through ?? null;
  const { profiles, seenThrough } = await profileKeys(trx, target.table, since);
  const kept = await typedColumnsOf(trx, target.view);
  const columns = new Map(kept.map((c) => [c.key, { ...c }]));
  const added: string[] = [];
  const retyped: string[] = [];
  let leftOut = 0;
  for (const profile of [...profiles].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    const inferred = typeOf(profile);
    const column = columns.get(profile.key);
    if (!column && columns.size >= MAX_TYPED_COLUMNS) {
      leftOut += 1;
    } else if (!column) {
      columns.set(profile.key, {
        key: profile.key,
        column_name: '',
        type: inferred,
        previous_names: [],
      });
      added.push(profile.key);
    } else if (widen(column.type, inferred) !== column.type) {
      const wider = widen(column.type, inferred);
      retyped.push(`${profile.key}: ${column.type} → ${wider}`);
      column.type = wider;
    }
  }
  const names = await columnNamesOf(trx, target.view, columns.keys());
  const renamed: string[] = [];
  for (const column of columns.values()) {
    const name = names.get(column.key) ?? column.column_name;
    if (column.column_name !== '' && column.column_name !== name) {
      renamed.push(`${column.key}: ${column.column_name} → ${name}`);
      // Still a column of the view while objects of others keep it in place.
      column.previous_names = [
        ...column.previous_names.filter((n) => n !== column.column_name),
        column.column_name,
      ];
    }
    column.column_name = name;
  }
  // Stored before the views are built: the union reads them.
  if (added.length > 0 || retyped.length > 0 || renamed.length > 0) {
    if (renamed.length > 0) {
      // One key's new name may be another's old one: out of the way first.
      await sql`update typed_view_columns set column_name = '~' || column_name
        where view = ${target.view}`.execute(trx);
    }
    const remembers = await hasColumn(trx, 'typed_view_columns', 'previous_names');
    for (const c of columns.values()) {
      await sql`insert into typed_view_columns (view, key, column_name, type, added_run_id)
        values (${target.view}, ${c.key}, ${c.column_name}, ${c.type}, ${runId ?? null}::bigint)
        on conflict (view, key) do update set column_name = excluded.column_name, type = excluded.type`.execute(
        trx,
      );
      if (remembers && c.previous_names.length > 0) {
        await sql`update typed_view_columns set previous_names = ${c.previous_names}::text[]
          where view = ${target.view} and key = ${c.key}`.execute(trx);
      }
    }
  }
  const ordered = [...columns.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
  const desired: ViewColumn[] = [
    { name: 'id', type: 'bigint' },
    ...ordered.map((c) => ({ name: c.column_name, type: PG_TYPES[c.type] })),
    { name: 'deleted_at', type: 'timestamp with time zone' },
  ];
  const existing = await viewColumns(trx, { schema, name: target.view });
  const matches =
    existing !== undefined &&
    existing.length === desired.length &&
    desired.every((c) => existing.some((e) => e.name === c.name && e.type === c.type)) &&
    !(await readsSessionZone(trx, target.view));
  const warnings: string[] = [];
  if (matches) {
    // Nothing kept back: a signal of an earlier refresh is out of date.
    await noteTypedViewBlock(trx, schema, target.view);
  } else {
    const keyOf = keysByName([...columns.values()]);
    const typeOfKey = new Map([...columns.values()].map((c) => [c.key, PG_TYPES[c.type]]));
    // A union built before it read the tables would hold this view in place.
    const union = { schema: ALL_ACCOUNTS_SCHEMA, name: target.view };
    const above = await dependentsOf(trx, { schema, name: target.view });
    if (above.includes(`${union.schema}.${union.name}`)) await emptyView(trx, union);
    const placed = await placeView(
      trx,
      { schema, name: target.view },
      desired,
      (layout) => {
        const list = layout.map((c) =>
          c.name === 'id' || c.name === 'deleted_at'
            ? sql.id(c.name)
            : sql`${columnSelect(keyOf.get(c.name), c.type)} as ${sql.id(c.name)}`,
        );
        return sql`select ${sql.join(list)} from ${sql.table(target.table)}`;
      },
      { holds: holdsType },
    );
    await commentView(trx, target, placed.layout, keyOf);
    const wanted = new Set(desired.map((c) => c.name));
    const keptBack = keptColumns(placed, wanted, (name) => {
      const key = keyOf.get(name);
      return key === undefined ? undefined : typeOfKey.get(key);
    });
    if (keptBack) {
      const message = blockMessage(
        `${schema}.${target.view}`,
        keptBack,
        placed.dependents,
        refreshCommand(schema, target.view),
      );
      await noteTypedViewBlock(trx, schema, target.view, {
        message,
        blocking: placed.dependents,
      });
      warnings.push(message);
    } else {
      await noteTypedViewBlock(trx, schema, target.view);
    }
  }
  if (
    !matches ||
    added.length > 0 ||
    retyped.length > 0 ||
    renamed.length > 0 ||
    (await isBlocked(trx, ALL_ACCOUNTS_SCHEMA, target.view))
  ) {
    // The account's view stands even when the union cannot be rebuilt now.
    await sql`savepoint typed_union`.execute(trx);
    try {
      const union = await rebuildTypedUnion(trx, target.view);
      await sql`release savepoint typed_union`.execute(trx);
      if (union.warning) warnings.push(union.warning);
    } catch (error) {
      await sql`rollback to savepoint typed_union`.execute(trx);
      const message = refreshFailureMessage(
        `${ALL_ACCOUNTS_SCHEMA}.${target.view}`,
        error,
        'hiresync migrate',
        `${target.table}`,
      );
      await noteTypedViewBlock(trx, ALL_ACCOUNTS_SCHEMA, target.view, { message, blocking: [] });
      warnings.push(message);
    }
  }
  await sql`update typed_views
    set seen_through = ${seenThrough}::timestamptz${matches ? sql`` : sql`, rebuilt_at = now()`}
    where view = ${target.view}`.execute(trx);
  if (leftOut > 0) {
    warnings.push(
      `typed view ${schema}.${target.view} has ${MAX_TYPED_COLUMNS} key columns, the most it gets: ${leftOut} more key(s) stay in ${target.table}.data only (records whose keys are data, such as a map keyed by ids, are better read from data)`,
    );
  }
  if (warnings.length > 0 && runId !== undefined) await noteRunWarnings(trx, runId, warnings);
  return {
    added,
    retyped,
    ...(renamed.length > 0 ? { renamed } : {}),
    ...(warnings.length > 0 ? { warning: warnings.join('; ') } : {}),
  };
}

/**
 * What a view placed by placeView cannot show: its conflicts, the columns it
 * kept beyond `wanted` whose type cannot hold their key's (`typeOfName`:
 * the type the key's column has now, undefined for a column that shows no
 * key), and those that show no key. Undefined when it shows everything.
 */
export function keptColumns(
  placed: PlacedView,
  wanted: ReadonlySet<string>,
  typeOfName: (name: string) => string | undefined,
): KeptColumns | undefined {
  const conflicts = [...(placed.kept?.conflicts ?? [])];
  const orphans: string[] = [];
  for (const column of placed.layout) {
    if (wanted.has(column.name)) continue;
    const type = typeOfName(column.name);
    if (type === undefined) orphans.push(column.name);
    else if (!holdsType(column.type, type))
      conflicts.push(`${column.name}: ${column.type} → ${type}`);
  }
  return conflicts.length > 0 || orphans.length > 0 ? { conflicts, orphans } : undefined;
}

/** Whether hiresync.typed_view_blocks holds a signal for `schema.view` now. */
async function isBlocked(
  trx: Transaction<Database>,
  schema: string,
  view: string,
): Promise<boolean> {
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.typed_view_blocks') is not null as present`.execute(trx);
  if (!found[0]?.present) return false;
  const { rows } = await sql<{ blocked: boolean }>`
    select exists (select 1 from hiresync.typed_view_blocks
      where schema = ${schema} and view = ${view} and message is not null) as blocked`.execute(trx);
  return rows[0]?.blocked === true;
}

/** Adds `warnings` to the run's sync_runs.warnings (a schema migrated before 0007 has no such column: skipped). */
async function noteRunWarnings(
  trx: Transaction<Database>,
  runId: string,
  warnings: readonly string[],
): Promise<void> {
  const { rows } = await sql<{ present: boolean }>`
    select exists (select 1 from pg_attribute where attrelid = to_regclass('sync_runs')
      and attname = 'warnings' and not attisdropped) as present`.execute(trx);
  if (!rows[0]?.present) return;
  const text = warnings.join('; ').slice(0, 8000);
  await sql`update sync_runs set warnings = concat_ws('; ', warnings, ${text}::text)
    where id = ${runId}::bigint`.execute(trx);
}
