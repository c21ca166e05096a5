import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { AuthConfig } from '../config/types.js';

/** An access token and what is known of its life. Times are epoch milliseconds. */
export interface CachedToken {
  accessToken: string;
  /** undefined: no lifetime known, kept until a 401. */
  expiresAt: number | undefined;
  obtainedAt: number;
}

/**
 * Encrypts tokens for the shared Redis cache with AES-256-GCM under a key
 * derived (HKDF-SHA256) from the credential secret, and names the Redis keys
 * of a credential without revealing it.
 */
export class TokenCipher {
  /** Identifies the credential (not secret): Redis keys of the token, its lock and the rate-limit state. */
  readonly namespace: string;
  readonly #key: Buffer;

  constructor(auth: AuthConfig) {
    const secret = auth.mode === 'api_key' ? auth.apiKey.reveal() : auth.clientSecret.reveal();
    // With client credentials the namespace is the client id (and sub), so that
    // workers on an old and a new secret during a rotation still share one lock;
    // a partner app's customers share its client id: the account tells them apart.
    const identity =
      auth.mode === 'client_credentials'
        ? createHash('sha256')
            .update(`${auth.tokenUrl}\n${auth.clientId}\n${auth.sub ?? ''}`)
            .digest('hex')
        : auth.mode === 'partner'
          ? createHash('sha256')
              .update(`${auth.tokenUrl}\n${auth.clientId}\npartner\n${auth.account}`)
              .digest('hex')
          : Buffer.from(
              hkdfSync('sha256', secret, auth.tokenUrl, 'hiresync namespace v1', 32),
            ).toString('hex');
    this.namespace = identity.slice(0, 32);
    this.#key = Buffer.from(
      hkdfSync('sha256', secret, this.namespace, 'hiresync token cache v1', 32),
    );
  }

  encrypt(token: CachedToken): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(token), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** Returns undefined when the value was sealed with another key (a rotated secret) or is damaged. */
  decrypt(sealed: string): CachedToken | undefined {
    try {
      const raw = Buffer.from(sealed, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString(
        'utf8',
      );
      const value = JSON.parse(text) as {
        accessToken?: unknown;
        expiresAt?: unknown;
        obtainedAt?: unknown;
      };
      if (typeof value.accessToken !== 'string' || typeof value.obtainedAt !== 'number')
        return undefined;
      return {
        accessToken: value.accessToken,
        expiresAt: typeof value.expiresAt === 'number' ? value.expiresAt : undefined,
        obtainedAt: value.obtainedAt,
      };
    } catch {
      return undefined;
    }
  }
}
