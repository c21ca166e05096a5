import { validateHeaderValue } from 'node:http';
import type { Got } from 'got';
import type { AuthConfig } from '../config.js';
import {
  AuthError,
  describeWait,
  HiresyncError,
  RedirectedError,
  RefreshRefusedError,
} from '../errors.js';
import type { Logger } from '../logger.js';
import { excerpt, registerSecret } from '../secret.js';
import type { RefreshTokenVault } from './refresh-token-vault.js';
import { sendWithRetries } from './send.js';
import { abortable, sleep } from './sleep.js';
import type { CachedToken } from './token-cipher.js';
import type { TokenStore } from './token-store.js';
import { authUrlSetting, baseUrlSetting } from './url-setting.js';

/** Options of {@link TokenProvider}. */
export interface TokenProviderOptions {
  auth: AuthConfig;
  http: Got;
  store: TokenStore;
  logger: Logger;
  maxRetries: number;
  defaultRetryAfterMs: number;
  /** Longest Retry-After waited (HIRESYNC_MAX_RETRY_AFTER). Default 1 h. */
  maxRetryAfterMs?: number;
  /** Largest token response read (HIRESYNC_MAX_PAGE_BYTES). Default 1 MiB. */
  maxResponseBytes?: number;
  /** The request timeout in force, for messages. */
  timeoutMs?: number;
  /** How long to wait for another process's refresh before giving up. Default 60 s. */
  lockWaitMs?: number;
  /** A partner account's refresh token: required with `auth.mode` partner. */
  refreshTokens?: RefreshTokenVault;
  now?: () => number;
}

/**
 * A stated lifetime shorter than this (about one request's round trip) is too
 * short to use at all, so it is not planned by: the token is used until a
 * 401 instead of being minted again for every page. Any longer lifetime is
 * planned by: the token is renewed when a tenth of it remains.
 */
export const MIN_TOKEN_LIFETIME_MS = 1000;
/** A stated lifetime longer than this is cut to it (a 401 still renews the token sooner). */
export const MAX_TOKEN_LIFETIME_MS = 7 * 86_400_000;

/**
 * Makes a token's stated lifetime usable: a lifetime already over or shorter
 * than {@link MIN_TOKEN_LIFETIME_MS} (an `expires_at` in the past,
 * `expires_in: 0.0001`) is dropped, so
 * the token is used until the API refuses it instead of being minted again
 * for every page; an absurdly long one (`expires_in: 1e300`) is cut to
 * {@link MAX_TOKEN_LIFETIME_MS}; times are whole milliseconds. Returns the
 * token and, when the lifetime was dropped, why.
 */
export function saneLifetime(token: CachedToken): { token: CachedToken; dropped?: string } {
  if (token.expiresAt === undefined) return { token };
  const lifetime = token.expiresAt - token.obtainedAt;
  if (Number.isNaN(lifetime) || lifetime < MIN_TOKEN_LIFETIME_MS) {
    const stated = lifetime <= 0 ? 'already over' : `only ${describeWait(lifetime)}`;
    return { token: { ...token, expiresAt: undefined }, dropped: stated };
  }
  const expiresAt = token.obtainedAt + Math.min(Math.floor(lifetime), MAX_TOKEN_LIFETIME_MS);
  return { token: { ...token, expiresAt } };
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

/**
 * What configures the token endpoint of these credentials: for `default`, the
 * variable of its auth mode; for a registered account, its stored URL and the
 * command that changes it.
 */
function tokenUrlVariable(auth: AuthConfig): string {
  return auth.mode === 'api_key' ? baseUrlSetting(auth.account) : authUrlSetting(auth.account);
}

/** What hiresync appends to that variable to form the token endpoint. */
function tokenPathSuffix(auth: AuthConfig): string {
  return auth.mode === 'api_key' ? '/auth/token' : '/token';
}

/** An HTTP Basic credential, known to the redaction (the client secret or key inside it). */
function basicAuthorization(user: string, password: string): string {
  const basic = Buffer.from(`${user}:${password}`).toString('base64');
  registerSecret(basic, { pinned: true });
  return `Basic ${basic}`;
}

/**
 * Why the token endpoint refused these credentials (`status`, its answer
 * `body`), and what fixes it: for `default`, the environment's variables; for
 * a registered account, the account and `hiresync accounts update NAME`.
 */
export function describeTokenError(auth: AuthConfig, status: number, body: string): string {
  let detail = '';
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const text = parsed.error_description ?? parsed.message ?? parsed.error;
    // Redacted before it is cut: a secret across the cut must not show half.
    if (typeof text === 'string') detail = `: ${excerpt(text, 300)}`;
  } catch {
    // The body is not JSON; the status says enough.
  }
  const path = new URL(auth.tokenUrl).pathname;
  if (status === 404 || status === 405) {
    // No token endpoint there: the URL is wrong, not the credentials.
    return `token request to ${path} answered ${status}${detail}; no token endpoint at that address: check ${tokenUrlVariable(auth)} (hiresync appends ${tokenPathSuffix(auth)} to it)`;
  }
  if (auth.mode !== 'partner' && auth.account !== undefined) {
    const account = auth.account;
    return auth.mode === 'client_credentials'
      ? `account ${account}: the token service refused its client secret (${status}${detail}): store the right one with 'hiresync accounts update ${account}' (secret on standard input); a wrong sub is changed with 'hiresync accounts update ${account} --sub N', a wrong client id by removing the account and adding it again (an old secret stays valid for at most a week after rotation)`
      : `account ${account}: the token service refused its API key (${status}${detail}): store the right one with 'hiresync accounts update ${account}' (key on standard input; version 1/2 keys work only during the transition period)`;
  }
  const fix =
    auth.mode === 'client_credentials'
      ? 'check HIRESYNC_CLIENT_ID, HIRESYNC_CLIENT_SECRET and HIRESYNC_SUB (an old secret stays valid for at most a week after rotation)'
      : auth.mode === 'partner'
        ? `the refresh token of account ${auth.account} was refused (revoked, expired unused, or already used), or the partner app's HIRESYNC_PARTNER_CLIENT_ID/HIRESYNC_PARTNER_CLIENT_SECRET are wrong`
        : 'check HIRESYNC_API_KEY (version 1/2 keys work only during the transition period)';
  return `token request to ${path} was refused (${status})${detail}; ${fix}`;
}

/** A token endpoint's 2xx answer, before its access token is judged. */
interface TokenAnswer {
  status: number;
  body: string;
  /** The endpoint's path, for messages. */
  path: string;
}

/** The `refresh_token` of a token answer, if it carries a usable one. */
export function rotatedRefreshToken(body: string): string | undefined {
  try {
    const fields = JSON.parse(body) as { refresh_token?: unknown } | null;
    const token = fields?.refresh_token;
    return typeof token === 'string' && token !== '' ? token : undefined;
  } catch {
    return undefined;
  }
}

/** Whether an error answer says the client's own authentication failed (RFC 6749 5.2 `invalid_client`). */
export function isClientAuthError(body: string): boolean {
  try {
    return (JSON.parse(body) as { error?: unknown } | null)?.error === 'invalid_client';
  } catch {
    return false;
  }
}

/**
 * A signal that follows `outer` except while a request is on the wire: an
 * abort that arrives then takes effect once the answer is in, so a request
 * that may have changed state on the server (a refresh grant rotating its
 * token) is never cut off before its answer is read. Waits between attempts
 * (a 429's Retry-After) still end at once.
 */
export function holdWhileSent(outer: AbortSignal): {
  signal: AbortSignal;
  /** The request is about to leave: throws if the outer signal was aborted first. */
  sending: () => void;
  /** Its answer is in: an abort held meanwhile takes effect now. */
  answered: () => void;
  /** Stops following `outer`. */
  release: () => void;
} {
  const controller = new AbortController();
  let onWire = false;
  const follow = () => {
    if (!onWire) controller.abort(outer.reason);
  };
  if (outer.aborted) controller.abort(outer.reason);
  else outer.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    sending: () => {
      controller.signal.throwIfAborted();
      onWire = true;
    },
    answered: () => {
      onWire = false;
      if (outer.aborted) controller.abort(outer.reason);
    },
    release: () => outer.removeEventListener('abort', follow),
  };
}

/** Numbers the providers of a process (their redaction slots). */
let providers = 0;

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
  /** The refresh in progress, shared by every caller; aborted when all of them have given up. */
  #inflight: { promise: Promise<string>; controller: AbortController; waiters: number } | undefined;
  #warnedLifetime = false;

  constructor(options: TokenProviderOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** The token to send now: cached while fresh, else renewed. Every wait ends when `signal` is aborted. */
  async getToken(signal?: AbortSignal): Promise<string> {
    const current = this.#current;
    // Registered again each time it is handed out: the redaction keeps the
    // newest tokens, and a token in use must stay among them however many
    // accounts' tokens were minted since.
    if (current && this.#isFresh(current)) return this.#handOut(current.accessToken);
    return this.#refresh(undefined, signal);
  }

  /**
   * Called after a 401 with the token that was refused: returns a different
   * token, taking one another process already minted if there is one.
   */
  async renew(refused: string, signal?: AbortSignal): Promise<string> {
    if (this.#current && this.#current.accessToken !== refused && this.#isFresh(this.#current)) {
      return this.#handOut(this.#current.accessToken);
    }
    return this.#refresh(refused, signal);
  }

  /**
   * Obtains a new token now, unless the one in the store is newer than the
   * one this process holds (another process has just obtained it).
   */
  async refreshNow(signal?: AbortSignal): Promise<void> {
    const stored = await this.#options.store.read();
    await this.#refresh(stored?.accessToken ?? this.#current?.accessToken, signal);
  }

  /**
   * Resolves once no token request of this provider is under way, whatever
   * its outcome: a closing process waits for it, as a refresh grant that has
   * left runs to its answer (which may carry a rotated refresh token).
   */
  async settled(): Promise<void> {
    await this.#inflight?.promise.catch(() => {});
  }

  /** Slot of this provider in the redaction registry: the token it hands out stays redacted. */
  readonly #slot = `token-provider:${++providers}`;

  /** The token handed out, kept in this provider's redaction slot (a no-op while it is unchanged). */
  #handOut(token: string): string {
    registerSecret(token, { slot: this.#slot });
    return token;
  }

  #isFresh(token: CachedToken): boolean {
    const at = renewAt(token);
    return at === undefined || this.#now() < at;
  }

  async #refresh(refused: string | undefined, signal: AbortSignal | undefined): Promise<string> {
    // A caller may join a refresh started before its token was refused, which
    // can hand out that very token (still in the store). A refused token is
    // never given out again: join (or start) refreshes until one knows it.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const token = await this.#joinRefresh(refused, signal);
      if (refused === undefined || token !== refused) return token;
      if (this.#current?.accessToken === refused) this.#current = undefined;
    }
    throw new HiresyncError(
      `the token endpoint keeps handing out the token the API has just refused; check the credentials and ${tokenUrlVariable(this.#options.auth)}`,
    );
  }

  /** Joins the refresh in progress, or starts one that will not hand out `refused`. */
  async #joinRefresh(
    refused: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    let shared = this.#inflight;
    if (!shared) {
      const controller = new AbortController();
      const promise = this.#refreshShared(refused, controller.signal)
        .then((token) => this.#handOut(token))
        .finally(() => {
          if (this.#inflight === created) this.#inflight = undefined;
        });
      // Observed here: when every caller has given up, nobody else awaits it.
      promise.catch(() => {});
      const created = { promise, controller, waiters: 0 };
      this.#inflight = created;
      shared = created;
    }
    shared.waiters += 1;
    try {
      return await abortable(shared.promise, signal);
    } finally {
      shared.waiters -= 1;
      if (shared.waiters === 0 && signal?.aborted) shared.controller.abort(signal.reason);
    }
  }

  async #refreshShared(refused: string | undefined, signal: AbortSignal): Promise<string> {
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
      const lock = await store.tryLock();
      if (lock) {
        try {
          // Another process may have stored a token between our read and our lock.
          const again = await store.read();
          if (usable(again)) {
            this.#current = again;
            return again.accessToken;
          }
          // The lock is renewed while the token request runs (it may wait out
          // a token-endpoint 429); should it be lost, the request stops and
          // the loop looks again, so two processes never mint at once.
          let minted: CachedToken;
          const attempt = { sent: false };
          try {
            minted = await this.#mint(AbortSignal.any([signal, lock.lost]), attempt);
          } catch (error) {
            // Looking again is safe unless a refresh grant left: its answer
            // may have rotated the refresh token, which must not be sent twice.
            const partner = this.#options.auth.mode === 'partner';
            if (lock.lost.aborted && !signal.aborted && !(partner && attempt.sent)) continue;
            throw error;
          }
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
          await lock.release();
        }
      }
      if (this.#now() > deadline) {
        throw new HiresyncError(
          `timed out after ${Math.round((this.#options.lockWaitMs ?? 60_000) / 1000)} s waiting for another process's token request (a slow or rate-limited token endpoint, or Redis trouble); the run will be retried`,
        );
      }
      await sleep(50 + Math.random() * 50, signal);
    }
  }

  async #mint(signal: AbortSignal, attempt: { sent: boolean }): Promise<CachedToken> {
    const { auth } = this.#options;
    if (auth.mode === 'partner') return this.#refreshGrant(auth, signal, attempt);
    const headers: Record<string, string> = { accept: 'application/json' };
    let body: string | undefined;
    if (auth.mode === 'client_credentials') {
      headers.authorization = basicAuthorization(auth.clientId, auth.clientSecret.reveal());
      headers['content-type'] = 'application/x-www-form-urlencoded';
      const form = new URLSearchParams({ grant_type: 'client_credentials' });
      if (auth.sub !== undefined) form.set('sub', auth.sub);
      body = form.toString();
    } else {
      headers.authorization = basicAuthorization(auth.apiKey.reveal(), '');
    }
    const answer = await this.#post(headers, body, { signal });
    return this.#readToken(answer);
  }

  /**
   * A partner account's token: a refresh grant with its stored refresh token,
   * through the vault, which commits a rotated refresh token before the access
   * token that came with it is handed out (see RefreshTokenVault). Once the
   * grant has left, it runs to its answer whatever its callers do (a
   * shutdown, a lost Redis lock): the answer may carry a rotated refresh token
   * that only this process will ever see. The request timeout bounds it.
   */
  async #refreshGrant(
    auth: Extract<AuthConfig, { mode: 'partner' }>,
    signal: AbortSignal,
    attempt: { sent: boolean },
  ): Promise<CachedToken> {
    const vault = this.#options.refreshTokens;
    if (!vault) throw new HiresyncError(`account ${auth.account} has no refresh-token store`);
    return vault.exchange<CachedToken>(async (refreshToken, sending) => {
      registerSecret(refreshToken);
      const headers = {
        accept: 'application/json',
        authorization: basicAuthorization(auth.clientId, auth.clientSecret.reveal()),
        'content-type': 'application/x-www-form-urlencoded',
      };
      const form = new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
      });
      const held = holdWhileSent(signal);
      // Never sent twice (maxRetries 0): a grant whose answer was lost may
      // have rotated the token, and sending the old one again would be
      // refused as a reuse. The attempt fails instead; the vault's mark says
      // the outcome is unknown. A 429 was not processed: it is waited out.
      let answer: TokenAnswer;
      try {
        answer = await this.#post(headers, form.toString(), {
          signal: held.signal,
          maxRetries: 0,
          beforeSend: async () => {
            held.signal.throwIfAborted();
            await sending();
            held.sending();
            attempt.sent = true;
          },
          onAnswer: () => held.answered(),
        });
      } catch (error) {
        // A refusal is an answer too: the vault marks the account.
        if (error instanceof RefreshRefusedError) return { rotated: undefined, error };
        throw error;
      } finally {
        held.release();
      }
      // Read before the access token is judged: a rotation must be kept even
      // when the rest of the answer is unusable.
      const rotated = rotatedRefreshToken(answer.body);
      if (rotated !== undefined) registerSecret(rotated);
      try {
        return { rotated, value: this.#readToken(answer) };
      } catch (error) {
        return { rotated, error: error as Error };
      }
    });
  }

  /**
   * POSTs to the token endpoint and returns a 2xx answer; a redirect or any
   * other status throws an error naming the cause and the fix.
   */
  async #post(
    headers: Record<string, string>,
    body: string | undefined,
    options: {
      signal: AbortSignal;
      maxRetries?: number;
      /** Awaited right before each request leaves. */
      beforeSend?: () => Promise<void>;
      /** Called with each answer, whatever its status. */
      onAnswer?: () => void;
    },
  ): Promise<TokenAnswer> {
    const { auth } = this.#options;
    const response = await sendWithRetries({
      http: this.#options.http,
      method: 'POST',
      url: auth.tokenUrl,
      headers,
      body,
      maxRetries: options.maxRetries ?? this.#options.maxRetries,
      defaultRetryAfterMs: this.#options.defaultRetryAfterMs,
      maxRetryAfterMs: this.#options.maxRetryAfterMs ?? 3_600_000,
      maxResponseBytes: this.#options.maxResponseBytes ?? 1024 ** 2,
      timeoutMs: this.#options.timeoutMs,
      endpointVariable: tokenUrlVariable(auth),
      logger: this.#options.logger,
      signal: options.signal,
      hooks: {
        ...(options.beforeSend ? { beforeAttempt: options.beforeSend } : {}),
        ...(options.onAnswer ? { onResponse: options.onAnswer } : {}),
      },
    });
    const path = new URL(auth.tokenUrl).pathname;
    const variable = tokenUrlVariable(auth);
    if (response.status >= 300 && response.status < 400) {
      throw new RedirectedError(
        response.status,
        path,
        `token request to ${path} was answered with a ${response.status} redirect, which is not followed (credentials never go to another address); ` +
          `${variable} must name the token service itself (hiresync appends ${tokenPathSuffix(auth)} to it)`,
        undefined,
      );
    }
    if (response.status < 200 || response.status >= 300) {
      if (auth.mode === 'partner' && isClientAuthError(response.body)) {
        // RFC 6749 5.2: the partner app's own credentials were refused, not
        // the customer's grant; fixing them restores every account.
        throw new AuthError(
          response.status,
          path,
          `token request to ${path} refused the partner app's own credentials (${response.status} invalid_client): check HIRESYNC_PARTNER_CLIENT_ID and HIRESYNC_PARTNER_CLIENT_SECRET (account ${auth.account}'s authorization is kept)`,
          undefined,
        );
      }
      const message = describeTokenError(auth, response.status, response.body);
      // A refresh refused (RFC 6749 5.2: invalid_grant is a 400; some answer
      // 401): the customer's authorization is gone, not the partner app's.
      if (auth.mode === 'partner' && (response.status === 400 || response.status === 401)) {
        throw new RefreshRefusedError(response.status, path, message, undefined);
      }
      throw new AuthError(response.status, path, message, undefined);
    }
    return { status: response.status, body: response.body, path };
  }

  /** The access token of a 2xx answer, with a lifetime it can be planned by. */
  #readToken(answer: TokenAnswer): CachedToken {
    const { status, path } = answer;
    const parsed = parseTokenResponse(answer.body, this.#now());
    if (!parsed) {
      throw new AuthError(
        status,
        path,
        `token response from ${path} has no access_token; check that ${tokenUrlVariable(this.#options.auth)} points at the token service`,
        undefined,
      );
    }
    try {
      validateHeaderValue('authorization', `Bearer ${parsed.accessToken}`);
    } catch {
      // The token itself is never part of the message.
      throw new AuthError(
        status,
        path,
        `the token endpoint returned an access token that cannot be sent in a header (it holds a character such as CR or LF that HTTP headers do not allow); ${path} is answering wrongly: report it to the API vendor`,
        undefined,
      );
    }
    const { token, dropped } = saneLifetime(parsed);
    if (dropped !== undefined && !this.#warnedLifetime) {
      this.#warnedLifetime = true;
      this.#options.logger.warn(
        { path, statedLifetime: dropped },
        'token lifetime stated by the token endpoint is unusable; using the token until the API refuses it',
      );
    }
    return token;
  }
}
