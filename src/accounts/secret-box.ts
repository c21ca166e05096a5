import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { HiresyncError } from '../errors.js';

/**
 * Credentials at rest (client secrets, API keys, refresh tokens), sealed with
 * AES-256-GCM under `HIRESYNC_SECRET_KEY`. The variable holds one or more
 * 32-byte keys (base64 or hex), comma-separated: the first seals, any opens,
 * so keys rotate without downtime (`hiresync accounts rekey` re-seals
 * everything with the first).
 *
 * A sealed value is `hs1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts):
 * the key id (the first 8 bytes of the key's SHA-256, not secret) picks the
 * key, and the additional data binds the value to what it is for (an
 * account's name and field), so a value copied into another row, or another
 * column, does not open.
 */
export class SecretBox {
  readonly #keys: ReadonlyMap<string, Buffer>;
  /** Id of the key that seals. */
  readonly sealingKeyId: string;

  constructor(keys: readonly Buffer[]) {
    const first = keys[0];
    if (!first) throw new Error('SecretBox needs at least one key');
    this.#keys = new Map(keys.map((key) => [keyId(key), key]));
    this.sealingKeyId = keyId(first);
  }

  /** Seals `plaintext` for `purpose` (e.g. `account:acme:secret`). */
  seal(plaintext: string, purpose: string): string {
    const key = this.#keys.get(this.sealingKeyId) as Buffer;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['hs1', this.sealingKeyId, iv, body, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /**
   * Opens a value sealed for `purpose`. Throws a {@link SecretKeyError} naming
   * HIRESYNC_SECRET_KEY when no configured key sealed it, or it was damaged.
   */
  open(sealed: string, purpose: string): string {
    const parts = sealed.split('.');
    const [version, id, iv, body, tag] = parts;
    if (parts.length !== 5 || version !== 'hs1' || !id || !iv || !body || !tag) {
      throw new SecretKeyError(`the stored ${describe(purpose)} is not a sealed value`);
    }
    const key = this.#keys.get(id);
    if (!key) {
      throw new SecretKeyError(
        `the stored ${describe(purpose)} was sealed with a key HIRESYNC_SECRET_KEY no longer holds (key id ${id}); add that key back (after the first) and run 'hiresync accounts rekey'`,
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(purpose, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(body, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretKeyError(
        `the stored ${describe(purpose)} does not open with its key (damaged, or copied from another row)`,
      );
    }
  }

  /** Whether `sealed` was sealed with the first key (rekey leaves those alone). */
  isCurrent(sealed: string): boolean {
    return sealed.split('.')[1] === this.sealingKeyId;
  }
}

/** A sealed credential cannot be opened, or no key is configured to open it. */
export class SecretKeyError extends HiresyncError {}

function describe(purpose: string): string {
  const [kind, name, field] = purpose.split(':');
  if (kind === 'connect-state') return "PKCE verifier of a connect link's opening";
  return kind === 'account' && name && field ? `${field} of account ${name}` : purpose;
}

/** The public id of a key: the first 8 bytes of its SHA-256, hex. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}
