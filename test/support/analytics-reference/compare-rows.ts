import type { ColumnKind } from './columns.js';
import type { Row } from './source-of-hire.js';

/** Days and rates agree within this (the spec's tolerance). */
export const NUMERIC_TOLERANCE = 1e-6;
/** Timestamps (epoch ms) agree within this: Postgres keeps microseconds. */
const TIMESTAMP_TOLERANCE_MS = 0.01;

const APPROXIMATE: ReadonlySet<ColumnKind> = new Set(['numeric', 'timestamp']);

function exactKey(row: Row, columns: Readonly<Record<string, ColumnKind>>): string {
  return JSON.stringify(
    Object.entries(columns)
      .filter(([, kind]) => !APPROXIMATE.has(kind))
      .map(([name]) => row[name] ?? null),
  );
}

function approximate(row: Row, columns: Readonly<Record<string, ColumnKind>>): number[] {
  return Object.entries(columns)
    .filter(([, kind]) => APPROXIMATE.has(kind))
    .map(([name]) =>
      row[name] === null || row[name] === undefined ? -Infinity : Number(row[name]),
    );
}

function compareNumbers(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function agrees(kind: ColumnKind, expected: unknown, actual: unknown): boolean {
  if (expected === null || expected === undefined || actual === null || actual === undefined) {
    return (expected ?? null) === (actual ?? null);
  }
  if (kind === 'numeric' || kind === 'timestamp') {
    const tolerance = kind === 'numeric' ? NUMERIC_TOLERANCE : TIMESTAMP_TOLERANCE_MS;
    return Math.abs(Number(expected) - Number(actual)) <= tolerance;
  }
  return expected === actual;
}

function show(row: Row, columns: Readonly<Record<string, ColumnKind>>): string {
  return JSON.stringify(
    Object.fromEntries(
      Object.entries(columns).map(([name, kind]) => {
        const value = row[name] ?? null;
        return [
          name,
          kind === 'timestamp' && typeof value === 'number' ? new Date(value).toISOString() : value,
        ];
      }),
    ),
  );
}

/**
 * Compares two lists of rows as multisets: rows are paired by their exact
 * columns (ids, text, counts, booleans, dates), then in order of their days,
 * rates and timestamps, which must agree within the tolerances. Returns one
 * line per disagreement (empty when they agree), naming the view.
 */
export function compareRows(
  view: string,
  columns: Readonly<Record<string, ColumnKind>>,
  expected: readonly Row[],
  actual: readonly Row[],
): string[] {
  const groups = new Map<string, { expected: Row[]; actual: Row[] }>();
  const add = (side: 'expected' | 'actual', row: Row) => {
    const key = exactKey(row, columns);
    const group = groups.get(key) ?? { expected: [], actual: [] };
    group[side].push(row);
    groups.set(key, group);
  };
  for (const row of expected) add('expected', row);
  for (const row of actual) add('actual', row);
  const lines: string[] = [];
  for (const group of groups.values()) {
    const order = (a: Row, b: Row) =>
      compareNumbers(approximate(a, columns), approximate(b, columns));
    const e = [...group.expected].sort(order);
    const a = [...group.actual].sort(order);
    for (let i = 0; i < Math.max(e.length, a.length); i += 1) {
      const x = e[i];
      const y = a[i];
      if (!y && x) lines.push(`${view}: missing ${show(x, columns)}`);
      else if (!x && y) lines.push(`${view}: unexpected ${show(y, columns)}`);
      else if (x && y) {
        const differing = Object.entries(columns).filter(
          ([name, kind]) => !agrees(kind, x[name], y[name]),
        );
        if (differing.length > 0) {
          lines.push(
            `${view}: ${differing.map(([name]) => `${name} expected ${JSON.stringify(x[name] ?? null)} got ${JSON.stringify(y[name] ?? null)}`).join(', ')} in ${show(x, columns)}`,
          );
        }
      }
    }
  }
  return lines;
}
