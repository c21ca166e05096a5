import { type FieldHasher, isStoredHash } from './field-hasher.js';
import {
  type FieldPolicy,
  type HashValue,
  type PolicyNode,
  policedRecord,
  WITHHELD,
} from './field-policy.js';

/** A page body and its records after the field policy. */
export interface PolicedPage {
  /** The body to store: the one received, with the policy applied, every number as sent. */
  body: string;
  /** Its records, parsed (numbers as JavaScript reads them), for validation. */
  records: unknown[];
}

/**
 * Keeps a number exactly as sent when JavaScript would print it otherwise
 * (an id beyond 2^53, `1.0`, `2e3`): Postgres reads ids and numerics from the
 * body's text, so the rewritten body must hold the same digits.
 */
export function exactNumbers(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== 'number' || context?.source === undefined) return value;
  return String(value) === context.source ? value : JSON.rawJSON(context.source);
}

/**
 * True when every number of a JSON text reads back as the same digits
 * (`String(Number(token)) === token`), so that parsing and printing it again
 * changes no number: then the page can be policed on a plain parse. Strings
 * are skipped whole (indexOf to their closing quote), so the scan costs
 * little beside the parse.
 */
export function numbersRoundTrip(text: string): boolean {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string: to the first quote not escaped by an odd run of backslashes.
      for (;;) {
        const quote = text.indexOf('"', i + 1);
        if (quote < 0) return false;
        let backslashes = 0;
        while (text.charCodeAt(quote - 1 - backslashes) === 92) backslashes += 1;
        i = quote;
        if (backslashes % 2 === 0) break;
      }
      i += 1;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + 1;
      for (; j < n; j += 1) {
        const d = text.charCodeAt(j);
        // Digits, '.', 'e', 'E', '+', '-'.
        if (!((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45)) {
          break;
        }
      }
      const token = text.slice(i, j);
      if (String(Number(token)) !== token) return false;
      i = j;
    } else {
      i += 1;
    }
  }
  return true;
}

function recordsOf(parsed: unknown, recordsKey: string | undefined): unknown[] {
  return (
    recordsKey === undefined ? parsed : (parsed as Record<string, unknown>)[recordsKey]
  ) as unknown[];
}

/** Record arrays already policed in place: never policed twice (a hash of a hash). */
const POLICED = new WeakSet<unknown[]>();

/**
 * Applies a resource's policy tree to every record of a page body (an array,
 * or an object whose `recordsKey` property holds it) and writes the body
 * anew: nothing a policy path drops or hashes is left in it. Everything else
 * of the body is kept as sent, numbers digit for digit (strings are
 * re-escaped, which JSON and Postgres read as the same text).
 *
 * A body whose numbers all read back as sent (the usual page) is policed on
 * a plain parse — `parsed`, the page's records as fetchPages parsed them,
 * when the body is the array: they are policed in place, so nothing of them
 * outlives this call unpoliced. A body holding an id beyond 2^53, `1.50` or
 * `2e3` is parsed keeping each such number's digits, then once more for
 * validation.
 */
export function policePage(
  body: string,
  recordsKey: string | undefined,
  tree: PolicyNode,
  hash: HashValue,
  parsed?: unknown[],
): PolicedPage {
  if (!numbersRoundTrip(body)) {
    const exact = JSON.parse(body, exactNumbers) as unknown;
    policeAll(recordsOf(exact, recordsKey), tree, hash);
    const text = JSON.stringify(exact);
    return { body: text, records: recordsOf(JSON.parse(text), recordsKey) };
  }
  if (recordsKey === undefined && parsed !== undefined) {
    if (!POLICED.has(parsed)) policeAll(parsed, tree, hash);
    POLICED.add(parsed);
    return { body: JSON.stringify(parsed), records: parsed };
  }
  const plain = JSON.parse(body) as unknown;
  const records = recordsOf(plain, recordsKey);
  policeAll(records, tree, hash);
  return { body: JSON.stringify(plain), records };
}

function policeAll(records: unknown[], tree: PolicyNode, hash: HashValue): void {
  for (const [index, record] of records.entries()) {
    records[index] = policedRecord(record, tree, hash);
  }
}

/** Options of {@link RecordPolicy.record}. */
export interface RecordOptions {
  /**
   * The record was stored by hiresync (reapply-policy): a value of the form
   * of a stored hash (`hmac-sha256:` and 64 lowercase hex digits) under a
   * hash path is hashed already and kept as it is, and so is a record
   * withheld whole ({@link WITHHELD}), so that applying a policy to what it
   * has already policed changes nothing. Default false: a page from the API
   * is hashed whatever its values look like. See docs/privacy.md,
   * "Reapplying the policy".
   */
  keepHashed?: boolean;
}

/**
 * A field policy ready to apply: its rules and, when any rule hashes, the
 * hasher of `HIRESYNC_HASH_KEY` (config refuses a hashing policy without one).
 */
export class RecordPolicy {
  readonly policy: FieldPolicy;
  readonly #hasher: FieldHasher | undefined;
  readonly #hash: HashValue;
  /** {@link RecordPolicy.#hash}, leaving a value already hashed as it is. */
  readonly #hashOnce: HashValue;

  constructor(policy: FieldPolicy, hasher: FieldHasher | undefined) {
    if (policy.hashes && !hasher) throw new Error('a policy that hashes needs HIRESYNC_HASH_KEY');
    this.policy = policy;
    this.#hasher = hasher;
    this.#hash = hasher?.hash ?? refuseHash;
    const hash = this.#hash;
    this.#hashOnce = (value) => (isStoredHash(value) ? value : hash(value));
  }

  /** The same hasher under other rules (the policy mirrored onto reference columns). */
  with(policy: FieldPolicy): RecordPolicy {
    return policy === this.policy ? this : new RecordPolicy(policy, this.#hasher);
  }

  /** True when `resource`'s records are changed by the policy. */
  covers(resource: string): boolean {
    return this.policy.treeOf(resource) !== undefined;
  }

  /**
   * The page as stored under the policy; undefined when the policy leaves
   * `resource` alone. `parsed`, the body's records already parsed, are
   * policed in place where they can be (see policePage).
   */
  page(
    resource: string,
    body: string,
    recordsKey: string | undefined,
    parsed?: unknown[],
  ): PolicedPage | undefined {
    const tree = this.policy.treeOf(resource);
    return tree && policePage(body, recordsKey, tree, this.#hash, parsed);
  }

  /**
   * One record under the policy, in place where it is an object; the record
   * itself when the policy leaves `resource` alone. For a record read back
   * from the warehouse (reapply-policy: numbers exact, see exactNumbers),
   * pass `keepHashed` (see {@link RecordOptions}).
   */
  record(resource: string, record: unknown, options: RecordOptions = {}): unknown {
    const tree = this.policy.treeOf(resource);
    if (!tree) return record;
    if (!options.keepHashed) return policedRecord(record, tree, this.#hash);
    return record === WITHHELD ? record : policedRecord(record, tree, this.#hashOnce);
  }
}

function refuseHash(): string {
  throw new Error('a policy that hashes needs HIRESYNC_HASH_KEY');
}
