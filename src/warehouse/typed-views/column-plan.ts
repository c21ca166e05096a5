import { type ColumnType, type KeyProfile, typeOf, widen } from './column-types.js';
import type { TypedColumn } from './view-columns.js';

/**
 * Keys a resource's declaration fixes in its typed view, with their types
 * (ResourceDeclaration.columns): columns whatever the data held so far.
 */
export type DeclaredColumns = Readonly<Record<string, Exclude<ColumnType, 'unknown'>>>;

/** What {@link planColumns} changed. */
export interface ColumnPlan {
  /** Keys that got a column. */
  added: string[];
  /** Keys whose column's type changed, as `key: old → new`. */
  retyped: string[];
  /** New keys beyond the most a view gets, left out. */
  leftOut: number;
  /** Declared keys some of whose values do not read as their column's type. */
  unread: string[];
}

/**
 * Brings `columns` (a view's, by key) to `declared` and the `profiles` of
 * the records looked at. A declared key always has a column, of its declared
 * type, which the data never widens (a value that does not read as it shows
 * as null, and is reported in `unread`); a column stored before the
 * declaration at a type that holds more keeps the wider type (widen), so no
 * column narrows. Any other key gets a column of the type its values give
 * (beyond `max` columns: left out, counted), widened as they require.
 */
export function planColumns(
  columns: Map<string, TypedColumn>,
  profiles: readonly KeyProfile[],
  declared: DeclaredColumns,
  max: number,
): ColumnPlan {
  const plan: ColumnPlan = { added: [], retyped: [], leftOut: 0, unread: [] };
  for (const [key, type] of Object.entries(declared).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const column = columns.get(key);
    if (!column) {
      columns.set(key, { key, column_name: '', type, previous_names: [] });
      plan.added.push(key);
    } else if (widen(column.type, type) !== column.type) {
      const wider = widen(column.type, type);
      plan.retyped.push(`${key}: ${column.type} → ${wider}`);
      column.type = wider;
    }
  }
  for (const profile of [...profiles].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    const inferred = typeOf(profile);
    const column = columns.get(profile.key);
    if (profile.key in declared) {
      if (column && !readsAll(column.type, inferred)) plan.unread.push(profile.key);
    } else if (!column && columns.size >= max) {
      plan.leftOut += 1;
    } else if (!column) {
      columns.set(profile.key, {
        key: profile.key,
        column_name: '',
        type: inferred,
        previous_names: [],
      });
      plan.added.push(profile.key);
    } else if (widen(column.type, inferred) !== column.type) {
      const wider = widen(column.type, inferred);
      plan.retyped.push(`${profile.key}: ${column.type} → ${wider}`);
      column.type = wider;
    }
  }
  return plan;
}

/** Whether a column of type `type` reads every value of a key whose values are of type `values`: text and jsonb read any. */
function readsAll(type: ColumnType, values: ColumnType): boolean {
  return type === 'text' || type === 'jsonb' || widen(type, values) === type;
}
