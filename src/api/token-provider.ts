import { setTimeout as sleep } from 'node:timers/promises';
import type { Got } from 'got';
import type { AuthConfig } from '../config.js';
import { AuthError, HiresyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import { registerSecret } from '../secret.js';
import { type SendHooks, sendWithRetries } from './send.js';
import type { CachedToken } from './token-cipher.js';
import type { TokenStore } from './token-store.js';

/** Options of {@link TokenProvider}. */
export interface TokenProviderOptions {
  auth: AuthConfig;
  http: Got;
  store: TokenStore;
  logger: Logger;
  maxRetries: number;
  defaultRetryAfterMs: number;
  /** How long to wait for another process's refresh before giving up. Default 60 s. */
  lockWaitMs?: number;
  hooks?: SendHooks;
  now?: () => number;
}

/** Renew when less than a tenth of the lifetime, and at most 60 s, remains. */
export function renewAt(token: CachedToken): number | undefined {
  if (token.expiresAt === undefined) return undefined;
  const lifetime = token.expiresAt - token.obtainedAt;
  return token.expiresAt - Math.min(lifetime / 10, 60_000);
}

/** Reads the `exp` claim (seconds) of a JWT without verifying it; undefined if it is not a JWT. */
export function jwtExpiry(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (token.split('.').length !== 3 || !payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      exp?: unknown;
    };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp)
      ? claims.exp * 1000
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a token endpoint's JSON answer: `access_token`, and the lifetime from
 * `expires_in` (seconds), else `expires_at` (timestamp or epoch seconds),
 * else the JWT's `exp`, else none (kept until a 401).
 */
export function parseTokenResponse(body: string, now: number): CachedToken | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.access_token !== 'string' || v.access_token === '') return undefined;
  let expiresAt: number | undefined;
  const expiresIn = typeof v.expires_in === 'string' ? Number(v.expires_in) : v.expires_in;
  if (typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0) {
    expiresAt = now + expiresIn * 1000;
  } else if (typeof v.expires_at === 'number' && Number.isFinite(v.expires_at)) {
    // Epoch seconds, or milliseconds when the number is too large to be seconds.
    expiresAt = v.expires_at > 1e11 ? v.expires_at : v.expires_at * 1000;
  } else if (typeof v.expires_at === 'string' && !Number.isNaN(Date.parse(v.expires_at))) {
    expiresAt = Date.parse(v.expires_at);
  } else {
    expiresAt = jwtExpiry(v.access_token);
  }
  return { accessToken: v.access_token, expiresAt, obtainedAt: now };
}

function describeTokenError(auth: AuthConfig, status: number, body: string): string {
  let detail = '';
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const text = parsed.error_description ?? parsed.message ?? parsed.error;
    if (typeof text === 'string') detail = `: ${text.slice(0, 300)}`;
  } catch {
    // The body is not JSON; the status says enough.
  }
  const fix =
    auth.mode === 'client_credentials'
      ? 'check HIRESYNC_CLIENT_ID, HIRESYNC_CLIENT_SECRET and HIRESYNC_SUB (an old secret stays valid for at most a week after rotation)'
      : 'check HIRESYNC_API_KEY (version 1/2 keys work only during the transition period)';
  return `token request to ${new URL(auth.tokenUrl).pathname} was refused (${status})${detail}; ${fix}`;
}

/** Every token handed out is known to the redaction of logs, errors and stored text. */
function registerToken(token: string): string {
  registerSecret(token);
  return token;
}

/**
 * Gives out the access token in force. Tokens are shared through a store (Redis
 * in production) so all processes with the same credentials use one token, and
 * minting is single-flight across them: some deployments of the API revoke the
 * previous token when a new one is minted.
 */
export class TokenProvider {
  readonly #options: TokenProviderOptions;
  readonly #now: () => number;
  #current: CachedToken | undefined;
  #inflight: Promise<string> | undefined;

  constructor(options: TokenProviderOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** The token to send now: cached while fresh, else renewed. */
  async getToken(): Promise<string> {
    const current = this.#current;
    if (current && this.#isFresh(current)) return current.accessToken;
    return this.#refresh(undefined);
  }

  /**
   * Called after a 401 with the token that was refused: returns a different
   * token, taking one another process already minted if there is one.
   */
  async renew(refused: string): Promise<string> {
    if (this.#current && this.#current.accessToken !== refused && this.#isFresh(this.#current)) {
      return this.#current.accessToken;
    }
    return this.#refresh(refused);
  }

  #isFresh(token: CachedToken): boolean {
    const at = renewAt(token);
    return at === undefined || this.#now() < at;
  }

  #refresh(refused: string | undefined): Promise<string> {
    this.#inflight ??= this.#refreshShared(refused)
      .then(registerToken)
      .finally(() => {
        this.#inflight = undefined;
      });
    return this.#inflight;
  }

  async #refreshShared(refused: string | undefined): Promise<string> {
    const { store, logger } = this.#options;
    const deadline = this.#now() + (this.#options.lockWaitMs ?? 60_000);
    const usable = (t: CachedToken | undefined): t is CachedToken =>
      t !== undefined && t.accessToken !== refused && this.#isFresh(t);
    for (;;) {
      const shared = await store.read();
      if (usable(shared)) {
        this.#current = shared;
        return shared.accessToken;
      }
      const release = await store.tryLock();
      if (release) {
        try {
          // Another process may have stored a token between our read and our lock.
          const again = await store.read();
          if (usable(again)) {
            this.#current = again;
            return again.accessToken;
          }
          const minted = await this.#mint();
          await store.write(minted);
          this.#current = minted;
          logger.info(
            {
              mode: this.#options.auth.mode,
              expiresInS:
                minted.expiresAt && Math.round((minted.expiresAt - minted.obtainedAt) / 1000),
            },
            'access token obtained',
          );
          return minted.accessToken;
        } finally {
          await release();
        }
      }
      if (this.#now() > deadline) {
        throw new HiresyncError(
          'timed out waiting for another process to refresh the access token; check that Redis is healthy',
        );
      }
      await sleep(50 + Math.random() * 50);
    }
  }

  async #mint(): Promise<CachedToken> {
    const { auth } = this.#options;
    const headers: Record<string, string> = { accept: 'application/json' };
    let body: string | undefined;
    if (auth.mode === 'client_credentials') {
      const basic = Buffer.from(`${auth.clientId}:${auth.clientSecret.reveal()}`).toString(
        'base64',
      );
      registerSecret(basic, { pinned: true });
      headers.authorization = `Basic ${basic}`;
      headers['content-type'] = 'application/x-www-form-urlencoded';
      const form = new URLSearchParams({ grant_type: 'client_credentials' });
      if (auth.sub !== undefined) form.set('sub', auth.sub);
      body = form.toString();
    } else {
      registerSecret(Buffer.from(`${auth.apiKey.reveal()}:`).toString('base64'), { pinned: true });
      headers.authorization = `Basic ${Buffer.from(`${auth.apiKey.reveal()}:`).toString('base64')}`;
    }
    const response = await sendWithRetries({
      http: this.#options.http,
      method: 'POST',
      url: auth.tokenUrl,
      headers,
      body,
      maxRetries: this.#options.maxRetries,
      defaultRetryAfterMs: this.#options.defaultRetryAfterMs,
      logger: this.#options.logger,
      hooks: this.#options.hooks,
    });
    const path = new URL(auth.tokenUrl).pathname;
    if (response.status < 200 || response.status >= 300) {
      throw new AuthError(
        response.status,
        path,
        describeTokenError(auth, response.status, response.body),
        undefined,
      );
    }
    const token = parseTokenResponse(response.body, this.#now());
    if (!token) {
      throw new AuthError(
        response.status,
        path,
        `token response from ${path} has no access_token; check HIRESYNC_AUTH_URL / HIRESYNC_BASE_URL point at the token service`,
        undefined,
      );
    }
    return token;
  }
}
