/**
 * What an extra resource is: a list the simulator serves although hiresync's
 * catalog (src/resources) does not declare it, as the real API serves many
 * more lists than a deployment syncs. Its records are built from their index
 * like the declared ones, with shapes chosen to exercise typed views.
 */

import type { SimulationContext } from './simulation-context.js';

/**
 * What the values of a top-level key are (besides null, which most keys
 * sometimes hold): `decimal` numbers some of which are not whole, `mixed`
 * values of more than one kind (integers and text), `null` never a value.
 * `timestamp` ISO 8601 (with microseconds on some), `date` YYYY-MM-DD.
 */
export type ValueKind =
  | 'integer'
  | 'decimal'
  | 'boolean'
  | 'timestamp'
  | 'date'
  | 'text'
  | 'object'
  | 'array'
  | 'mixed'
  | 'null';

/** A list served at `/v3/NAME` that hiresync's catalog does not declare. */
export interface ExtraResource {
  readonly name: string;
  /** One line for what `hiresync simulate` prints and for tests. */
  readonly description: string;
  /** The list path: `/v3/NAME`. */
  readonly path: string;
  /**
   * Id of the record at index 0 before an account's offset; ids step by 7.
   * Above 2^32 and a range of 10^9 of its own, apart from the declared
   * resources' (4.3·10^9 to about 1.7·10^10).
   */
  readonly idBase: number;
  /** Every top-level key a record may carry (`id` included) and what it holds. */
  readonly keys: Readonly<Record<string, ValueKind>>;
  /** Keys only records added after the start (grow) carry. */
  readonly lateKeys: readonly string[];
  /** The record at `index`. */
  simulate(sim: SimulationContext, index: number): Record<string, unknown>;
}

const DAY_MS = 86_400_000;

/** The date `days` after the creation time `createdAt` (ISO 8601), as YYYY-MM-DD. */
export function dateAfter(createdAt: string, days: number): string {
  return new Date(Date.parse(createdAt) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The time `seconds` after `at` (ISO 8601), as ISO 8601 in whole seconds (`…T10:04:05Z`). */
export function wholeSecondsAfter(at: string, seconds: number): string {
  const ms = Math.floor(Date.parse(at) / 1000) * 1000 + seconds * 1000;
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** The time `seconds` after `at` (ISO 8601), as ISO 8601 with the microseconds `micros`. */
export function microsAfter(at: string, seconds: number, micros: number): string {
  const ms = Math.floor(Date.parse(at) / 1000) * 1000 + seconds * 1000;
  return `${new Date(ms).toISOString().slice(0, 19)}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
}

/**
 * The `external_ref` most records carry: mostly an integer, a string on
 * every seventh index (3, 10, 17, …), null on some others, so its values do
 * not all parse as one type.
 */
export function externalRef(prefix: string, index: number, h: number): number | string | null {
  if (index % 7 === 3) return `${prefix}-${(h >>> 3) % 100_000}`;
  if (index % 11 === 5) return null;
  return 500_000 + (h % 400_000);
}
