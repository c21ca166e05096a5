import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import { rebuildTypedUnion } from './account-schemas.js';
import { ALL_ACCOUNTS_LOCK, ALL_ACCOUNTS_SCHEMA } from './migrate.js';
import { LOCK_SPACE, lockKey } from './resource-lock.js';
import type { Database } from './schema.js';

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
 * value seen once keeps its column able to show it.
 */
export function widen(a: ColumnType, b: ColumnType): ColumnType {
  if (a === b || b === 'unknown') return a;
  if (a === 'unknown') return b;
  if (a === 'jsonb' || b === 'jsonb') return 'jsonb';
  const numeric = new Set<ColumnType>(['bigint', 'numeric']);
  if (numeric.has(a) && numeric.has(b)) return 'numeric';
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

/**
 * The view column of `key`: the key itself when it is a plain lower-case
 * identifier of at most 63 bytes, else a safe name made from it (`Weird Key`
 * → `weird_key`, `2nd` → `k_2nd`), suffixed `_2`, `_3`, … while it is
 * `taken` or reserved (`id`, `deleted_at`, `account`).
 */
export function columnNameFor(key: string, taken: ReadonlySet<string>): string {
  const plain = /^[a-z_][a-z0-9_]*$/.test(key) && Buffer.byteLength(key) <= 63;
  let base = plain
    ? key
    : key
        .toLowerCase()
        .replace(/[^a-z0-9_]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .slice(0, 55);
  if (base === '' || /^[0-9]/.test(base)) base = `k_${base}`.slice(0, 55);
  if (!RESERVED.has(base) && !taken.has(base)) return base;
  const stem = base.slice(0, 55);
  for (let n = 2; ; n += 1) {
    const name = `${stem}_${n}`;
    if (!RESERVED.has(name) && !taken.has(name)) return name;
  }
}

/** A column of a typed view, as kept in typed_view_columns. */
export interface TypedColumn {
  key: string;
  column_name: string;
  type: ColumnType;
}

/** How a column reads its key from `data`, never raising (see migrations/hiresync/0003_safe_casts.ts). */
function columnExpression(column: TypedColumn): RawBuilder<unknown> {
  const value = sql`data -> ${sql.lit(column.key)}`;
  switch (column.type) {
    case 'bigint':
    case 'numeric':
    case 'boolean':
    case 'timestamptz':
    case 'date':
      return sql`${sql.id('hiresync', `try_${column.type}`)}(${value})`;
    case 'jsonb':
      return value;
    default:
      return sql`data ->> ${sql.lit(column.key)}`;
  }
}

/** What {@link refreshTypedView} did. */
export interface TypedViewChange {
  /** Keys that got a column. */
  added: string[];
  /** Keys whose column's type widened, as `key: old → new`. */
  retyped: string[];
  /** Why the view was left as it was (an object of someone else's depends on it), if so. */
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
        and hiresync.try_timestamptz(value) is not null) as timestamps,
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
 * Objects that depend on the view and are not hiresync's (an analyst's own
 * view on jobs_flat): dropping the view would take them along.
 */
async function foreignDependents(trx: Transaction<Database>, view: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select distinct vn.nspname || '.' || v.relname as name
    from pg_depend d
    join pg_rewrite w on w.oid = d.objid
    join pg_class v on v.oid = w.ev_class
    join pg_namespace vn on vn.oid = v.relnamespace
    where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass
      and d.refobjid = to_regclass(${view}) and v.oid <> d.refobjid
      and vn.nspname <> ${ALL_ACCOUNTS_SCHEMA}
    order by 1`.execute(trx);
  return rows.map((r) => r.name);
}

/** Drops and creates the view from its columns, each commented with the key it shows. */
async function buildView(
  trx: Transaction<Database>,
  target: TypedViewTarget,
  columns: readonly TypedColumn[],
): Promise<void> {
  const view = sql.table(target.view);
  const list = columns.map((c) => sql`${columnExpression(c)} as ${sql.id(c.column_name)}`);
  await sql`drop view if exists ${view}`.execute(trx);
  await sql`create view ${view} as
    select id, ${sql.join([...list, sql`deleted_at`])}
    from ${sql.table(target.table)}`.execute(trx);
  await sql`comment on view ${view} is ${sql.lit(
    `${target.table} with one typed column per top-level key of the records (data), in key order, then deleted_at. Types are inferred from every value seen and only widen; a value that does not parse as its column's type shows as null here (it stays in ${target.table}.data) until the next full run widens the column. Rebuilt by hiresync at the end of a full run when a key appears; a key that disappears keeps its column.`,
  )}`.execute(trx);
  await sql`comment on column ${sql.id(target.view, 'id')} is ${sql.lit('Record id (API).')}`.execute(
    trx,
  );
  await sql`comment on column ${sql.id(target.view, 'deleted_at')} is ${sql.lit(
    'Set when a completed full sync no longer saw the record (soft delete).',
  )}`.execute(trx);
  for (const c of columns) {
    const shown = c.type === 'unknown' ? 'text (only nulls seen so far)' : c.type;
    await sql`comment on column ${sql.id(target.view, c.column_name)} is ${sql.lit(
      `Key ${JSON.stringify(c.key)} of the record as sent (data -> ${JSON.stringify(c.key)}), as ${shown}.`,
    )}`.execute(trx);
  }
}

/**
 * Brings a typed view up to date with the records changed since it last
 * looked: a new key adds a column, a value that does not parse as its
 * column's type widens it (bigint → numeric → text; anything → jsonb with
 * objects), a key no longer seen keeps its column. The view is dropped and
 * created again only when something changed (with the all_accounts union
 * built on it), in one transaction under an advisory lock of the view, so a
 * reader sees the old view or the new one. When an object that is not
 * hiresync's depends on the view, nothing changes and `warning` says what to
 * do. `db` is bound to the account's schema (search_path).
 */
export async function refreshTypedView(
  db: Kysely<Database>,
  target: TypedViewTarget,
  runId?: string,
): Promise<TypedViewChange> {
  return db.transaction().execute(async (trx) => {
    // An analyst's long query on the view would hold the rebuild (and the
    // run's end) back: give up after a while instead; the next full run tries again.
    await sql`select set_config('lock_timeout', '10s', true)`.execute(trx);
    const { rows: here } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
      trx,
    );
    const schema = here[0]?.schema ?? 'public';
    await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${lockKey(`typed view ${schema}.${target.view}`)}::int)`.execute(
      trx,
    );
    await sql`insert into typed_views (view, source_table) values (${target.view}, ${target.table})
      on conflict (view) do nothing`.execute(trx);
    const { rows: state } = await sql<{ seen_through: string | null }>`
      select seen_through::text as seen_through from typed_views where view = ${target.view}`.execute(
      trx,
    );
    const since = state[0]?.seen_through ?? null;
    const { profiles, seenThrough } = await profileKeys(trx, target.table, since);
    const { rows: kept } = await sql<TypedColumn>`
      select key, column_name, type from typed_view_columns
      where view = ${target.view} order by key`.execute(trx);
    const columns = new Map(kept.map((c) => [c.key, { ...c }]));
    const taken = new Set(kept.map((c) => c.column_name));
    const added: string[] = [];
    const retyped: string[] = [];
    let leftOut = 0;
    for (const profile of [...profiles].sort((a, b) => (a.key < b.key ? -1 : 1))) {
      const inferred = typeOf(profile);
      const column = columns.get(profile.key);
      if (!column && columns.size >= MAX_TYPED_COLUMNS) {
        leftOut += 1;
      } else if (!column) {
        const name = columnNameFor(profile.key, taken);
        taken.add(name);
        columns.set(profile.key, { key: profile.key, column_name: name, type: inferred });
        added.push(profile.key);
      } else if (widen(column.type, inferred) !== column.type) {
        const wider = widen(column.type, inferred);
        retyped.push(`${profile.key}: ${column.type} → ${wider}`);
        column.type = wider;
      }
    }
    const { rows: exists } = await sql<{ present: boolean }>`
      select to_regclass(${target.view}) is not null as present`.execute(trx);
    const rebuild = added.length > 0 || retyped.length > 0 || !exists[0]?.present;
    if (rebuild) {
      const dependents = await foreignDependents(trx, target.view);
      if (dependents.length > 0) {
        // Left as it was, seen_through included: the next full run tries again.
        return {
          added: [],
          retyped: [],
          warning: `typed view ${schema}.${target.view} not rebuilt (new keys: ${added.join(', ') || 'none'}; widened: ${retyped.join(', ') || 'none'}): ${dependents.join(', ')} depend${dependents.length === 1 ? 's' : ''} on it; drop ${dependents.length === 1 ? 'it' : 'them'} (and create ${dependents.length === 1 ? 'it' : 'them'} again after the next full run), or build on ${target.table} instead`,
        };
      }
      // The all_accounts union selects from this view: dropped first, built again after.
      await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${ALL_ACCOUNTS_LOCK}::int)`.execute(
        trx,
      );
      await sql`drop view if exists ${sql.id(ALL_ACCOUNTS_SCHEMA, target.view)}`.execute(trx);
      const ordered = [...columns.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
      await buildView(trx, target, ordered);
      for (const c of ordered) {
        await sql`insert into typed_view_columns (view, key, column_name, type, added_run_id)
          values (${target.view}, ${c.key}, ${c.column_name}, ${c.type}, ${runId ?? null}::bigint)
          on conflict (view, key) do update set type = excluded.type`.execute(trx);
      }
      await rebuildTypedUnion(trx, target.view);
    }
    await sql`update typed_views
      set seen_through = ${seenThrough}::timestamptz${rebuild ? sql`, rebuilt_at = now()` : sql``}
      where view = ${target.view}`.execute(trx);
    if (leftOut > 0) {
      return {
        added,
        retyped,
        warning: `typed view ${schema}.${target.view} has ${MAX_TYPED_COLUMNS} key columns, the most it gets: ${leftOut} more key(s) stay in ${target.table}.data only (records whose keys are data, such as a map keyed by ids, are better read from data)`,
      };
    }
    return { added, retyped };
  });
}
