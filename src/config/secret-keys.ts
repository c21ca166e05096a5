import { Redacted } from '../secret.js';

/**
 * The keys of `HIRESYNC_SECRET_KEY`, validated: 32 bytes each, the first
 * seals, any opens. Config keeps them as they are; the accounts layer makes
 * the SecretBox that uses them. Printing, logging or JSON-encoding them
 * yields `[redacted]`.
 */
export class SecretKeys extends Redacted {
  readonly #keys: readonly Buffer[];

  constructor(keys: readonly Buffer[]) {
    super();
    if (keys.length === 0) throw new Error('SecretKeys needs at least one key');
    this.#keys = Object.freeze([...keys]);
  }

  /** The keys, the sealing one first: for the SecretBox alone. */
  reveal(): readonly Buffer[] {
    return this.#keys;
  }
}

/**
 * Reads `HIRESYNC_SECRET_KEY`: comma-separated keys of 32 bytes, each 64 hex
 * digits or base64 (standard or url-safe). Returns the keys, or a problem that
 * never quotes the value.
 */
export function parseSecretKeys(text: string): { keys: Buffer[] } | { problem: string } {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) return { problem: 'holds no key' };
  const keys: Buffer[] = [];
  for (const [i, item] of items.entries()) {
    const key = /^[0-9a-f]{64}$/i.test(item)
      ? Buffer.from(item, 'hex')
      : /^[A-Za-z0-9+/_-]+={0,2}$/.test(item)
        ? Buffer.from(item, item.includes('-') || item.includes('_') ? 'base64url' : 'base64')
        : undefined;
    if (key?.length !== 32) {
      return {
        problem: `key ${i + 1} of ${items.length} is not 32 bytes in base64 or hex (make one with: openssl rand -base64 32)`,
      };
    }
    keys.push(key);
  }
  return { keys };
}
