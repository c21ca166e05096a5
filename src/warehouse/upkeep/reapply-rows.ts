import { exactNumbers, numbersRoundTrip } from '../../privacy/police-page.js';

/** A row as reapply-policy reads it: its key, its record as JSON text, and what else it rewrites. */
export interface StoredRow {
  id: string;
  /** A history version's valid_from, as Postgres prints it (read back exactly). */
  validFrom?: string | undefined;
  /** The record as stored (`data::text` or `raw::text`). */
  text: string;
  /** A rejected record stored as a JSON string: that string (the record's text, or a string record). */
  string?: string | null | undefined;
  /** A reference table's text columns, in the order of {@link RowPolice.columns}. */
  cells?: ReadonlyArray<string | null> | undefined;
}

/** What to write for a row the policy changes. */
export interface Rewrite {
  row: StoredRow;
  /** The new record, as JSON text (numbers as stored, digit for digit). */
  text: string;
  /** A rejected record kept as its text: stored again as a JSON string of `text`. */
  asText: boolean;
  /** A reference table's text columns, new values. */
  cells?: Array<string | null> | undefined;
}

/** A reference table's text column and the keys of a record that fill it (list's, then nested copy's). */
export interface CellSource {
  column: string;
  keys: readonly string[];
}

/** How the policy applies to the rows of one relation. */
export interface RowPolice {
  /** One record (or a string record) under the policy, values already hashed kept (RecordPolicy.record, keepHashed). */
  record: (record: unknown) => unknown;
  /** A reference table's text columns. */
  columns?: readonly CellSource[] | undefined;
}

/**
 * Parses a stored JSON text so that printing it again gives the same digits:
 * plainly when every number reads back as written (the usual record), else
 * keeping each other number's text (ids beyond 2^53, `1.50`).
 */
export function parseStored(text: string): unknown {
  return numbersRoundTrip(text) ? JSON.parse(text) : JSON.parse(text, exactNumbers);
}

function hasKey(record: unknown, key: string): boolean {
  return typeof record === 'object' && record !== null && Object.hasOwn(record, key);
}

/** A value as a text column holds it (`->>`): a string as itself, null as null. */
function cellOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * A reference table's column under the policy. The column holds the text of
 * one key of the record (`raw ->> key`) — or, for a key the record lacks,
 * what a copy from elsewhere left there — so the policy is applied to the
 * column's value as to that key's: the key the record carries, else the
 * first whose rule changes it.
 */
function policedCell(
  police: RowPolice,
  source: CellSource,
  carried: string | undefined,
  value: string | null,
): string | null {
  const under = (key: string) =>
    cellOf((police.record({ [key]: value }) as Record<string, unknown>)[key]);
  if (carried !== undefined) return under(carried);
  for (const key of source.keys) {
    const policed = under(key);
    if (policed !== value) return policed;
  }
  return value;
}

/** The text of `record` and, policed, its new text; undefined when the policy changes nothing. */
function policedText(record: unknown, police: RowPolice): string | undefined {
  const before = JSON.stringify(record);
  const after = JSON.stringify(police.record(record));
  return after === before ? undefined : after;
}

/**
 * A rejected record kept as a JSON string: the record's own text (a record
 * Postgres could not hold as jsonb, see write-page.ts), policed and kept as
 * text again; or a record that was a string, policed as a value.
 */
function rewriteString(row: StoredRow, text: string, police: RowPolice): Rewrite | undefined {
  const start = text.trimStart()[0];
  if (start === '{' || start === '[') {
    let record: unknown;
    try {
      record = parseStored(text);
    } catch {
      record = undefined;
    }
    if (record !== undefined) {
      const after = policedText(record, police);
      return after === undefined ? undefined : { row, text: after, asText: true };
    }
  }
  const policed = police.record(text);
  return policed === text ? undefined : { row, text: JSON.stringify(policed), asText: false };
}

/**
 * What to write for `row` under the policy, or undefined when the policy
 * leaves it as it is (then it is not written at all: no new row version).
 * Records are compared as JSON texts of the same parse, before and after.
 */
export function rewriteOf(row: StoredRow, police: RowPolice): Rewrite | undefined {
  if (typeof row.string === 'string') return rewriteString(row, row.string, police);
  const record = parseStored(row.text);
  const columns = police.columns ?? [];
  const carried = columns.map((c) => c.keys.find((key) => hasKey(record, key)));
  const after = policedText(record, police);
  const cells = columns.map((c, i) => policedCell(police, c, carried[i], row.cells?.[i] ?? null));
  const cellsChanged = cells.some((value, i) => value !== (row.cells?.[i] ?? null));
  if (after === undefined && !cellsChanged) return undefined;
  return {
    row,
    text: after ?? JSON.stringify(record),
    asText: false,
    cells: columns.length > 0 ? cells : undefined,
  };
}
