import { createHmac } from 'node:crypto';
import { Redacted } from '../secret.js';

/** What a hashed value is stored as: this prefix, then 64 lowercase hex digits. */
export const HASH_PREFIX = 'hmac-sha256:';

const STORED_HASH = /^hmac-sha256:[0-9a-f]{64}$/;

/**
 * True when `value` has the form of a hash as hiresync stores it
 * (`hmac-sha256:` and 64 lowercase hex digits). Only `reapply-policy` asks:
 * a value stored under a hash path in that form is taken as hashed already
 * and left alone, so that running it twice never hashes a hash. A run hashes
 * whatever it is served, whatever its form (see RecordPolicy.record).
 */
export function isStoredHash(value: unknown): value is string {
  return typeof value === 'string' && value.length === 76 && STORED_HASH.test(value);
}

/**
 * Hashes policy values under `HIRESYNC_HASH_KEY`: `hmac-sha256:<hex>`, the
 * lowercase hex of HMAC-SHA256 over the value's UTF-8 text — a string as it
 * is, any other value as its compact JSON text (keys in the order received,
 * numbers as sent). The same value hashes the same in every account and run,
 * so joins on a hashed column still work, and an analyst holding the key can
 * reproduce a hash (`encode(hmac(value, key, 'sha256'), 'hex')` in Postgres
 * with pgcrypto). Printing or JSON-encoding it yields `[redacted]`.
 */
export class FieldHasher extends Redacted {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    super();
    if (key.length === 0) throw new Error('FieldHasher needs a key');
    this.#key = Buffer.from(key);
  }

  /** The stored text of `value`. */
  readonly hash = (value: unknown): string => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return HASH_PREFIX + createHmac('sha256', this.#key).update(text, 'utf8').digest('hex');
  };
}
