import { sql, type Transaction } from 'kysely';
import { sharedRelation } from '../shared-relation.js';
import type { Database } from '../tables.js';

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
export function columnTypeOf(pgType: string): ColumnType | undefined {
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

/**
 * Counts what the values of every key of `account`'s rows of `table`
 * (hiresync.data_<table>) changed after `since` are.
 */
export async function profileKeys(
  trx: Transaction<Database>,
  account: string,
  table: string,
  since: string | null,
): Promise<{ profiles: KeyProfile[]; seenThrough: string | null }> {
  const shared = sql.raw(sharedRelation(table));
  const changed = since === null ? sql`true` : sql`changed_at > ${since}::timestamptz`;
  const { rows } = await sql<Record<keyof KeyProfile, string>>`
    with kv as (
      select e.key, e.value, jsonb_typeof(e.value) as t
      from ${shared} as r, jsonb_each(r.data) as e
      where r.account = ${account} and jsonb_typeof(r.data) = 'object' and ${changed}
        and e.key <> 'id'
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
    select max(changed_at)::text as at from ${shared}
    where account = ${account} and ${changed}`.execute(trx);
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
