import { sql, type Transaction } from 'kysely';
import { HiresyncError } from '../../errors.js';
import type { Database } from '../tables.js';
import type { TypedColumn } from './view-columns.js';

/**
 * Column names a key never takes: the view's own columns (`id` and the
 * row's state, RECORD_STATE_COLUMNS), and `account`, which the all_accounts
 * union puts first.
 */
const RESERVED = new Set(['id', 'deleted_at', 'changed_at', 'synced_at', 'account']);

/** The form of a changed name (`name__1`): no key keeps a name of that form as it is. */
const CHANGED_FORM = /__[0-9]+$/;

/**
 * Whether `key` is its own column: a plain lower-case identifier of at most
 * 63 bytes, not reserved (`id`, `deleted_at`, `changed_at`, `synced_at`,
 * `account`) and not of the form
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

/**
 * Names each of `columns` by `names` (key → name), remembering a name it had
 * in previous_names; returns the renames as `key: old → new`.
 */
export function renameColumns(
  columns: Iterable<TypedColumn>,
  names: ReadonlyMap<string, string>,
): string[] {
  const renamed: string[] = [];
  for (const column of columns) {
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
  return renamed;
}
