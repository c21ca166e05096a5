import { validateHeaderValue } from 'node:http';
import type { Got } from 'got';
import type { AuthConfig } from '../config/types.js';
import {
  ApiError,
  AuthError,
  CredentialRefusedError,
  HiresyncError,
  ReauthorizationRequiredError,
  RedirectedError,
  RefreshRefusedError,
} from '../errors.js';
import type { Logger } from '../logger.js';
import { registerSecret } from '../secret.js';
import { type CredentialRefusals, credentialRefusalOf } from './credential-refusal.js';
import { holdWhileSent } from './hold-while-sent.js';
import type { RefreshTokenVault } from './refresh-token-port.js';
import { sendWithRetries } from './send.js';
import {
  describeTokenError,
  isClientAuthError,
  parseTokenResponse,
  rotatedRefreshToken,
  saneLifetime,
  type TokenAnswer,
  tokenPathSuffix,
  tokenUrlVariable,
} from './token-answer.js';
import type { CachedToken } from './token-cipher.js';

/** Options of {@link TokenGrants}. */
export interface TokenGrantsOptions {
  auth: AuthConfig;
  http: Got;
  logger: Logger;
  maxRetries: number;
  defaultRetryAfterMs: number;
  /** Longest Retry-After waited (HIRESYNC_MAX_RETRY_AFTER). Default 1 h. */
  maxRetryAfterMs?: number;
  /** Largest token response read (HIRESYNC_MAX_PAGE_BYTES). Default 1 MiB. */
  maxResponseBytes?: number;
  /** The request timeout in force, for messages. */
  timeoutMs?: number;
  /** A partner account's refresh token: required with `auth.mode` partner. */
  refreshTokens?: RefreshTokenVault;
  /** A registered client-credentials or API-key account: where a refusal of its credential is recorded. */
  credentialRefusals?: CredentialRefusals | undefined;
  /** Told how each token request that left ended (hiresync_token_requests_total). */
  onTokenRequest?: (outcome: TokenRequestOutcome) => void;
  now: () => number;
}

/**
 * How a token request ended: `ok`, a token; `refused`, the token endpoint
 * refused the credential or grant (a 4xx answer: a wrong secret, a revoked
 * authorization); `error`, anything else (unreachable, 5xx, a redirect, an
 * answer without a usable token).
 */
export type TokenRequestOutcome = 'ok' | 'refused' | 'error';

/** The outcome of a token request that threw `error`. */
export function tokenRequestOutcome(error: unknown): TokenRequestOutcome {
  if (error instanceof ReauthorizationRequiredError) return 'refused';
  if (error instanceof ApiError && error.status >= 400 && error.status < 500) return 'refused';
  return 'error';
}

/** An HTTP Basic credential, known to the redaction (the client secret or key inside it). */
function basicAuthorization(user: string, password: string): string {
  const basic = Buffer.from(`${user}:${password}`).toString('base64');
  registerSecret(basic, { pinned: true });
  return `Basic ${basic}`;
}

/**
 * The grants that obtain an access token from the token endpoint: client
 * credentials (with the optional `sub`), a transition-period API key, or a
 * partner account's refresh grant. One request per call, never shared: the
 * {@link TokenProvider} decides when to mint and makes sure one process at a
 * time does.
 */
export class TokenGrants {
  readonly #options: TokenGrantsOptions;
  #warnedLifetime = false;

  constructor(options: TokenGrantsOptions) {
    this.#options = options;
  }

  /**
   * Obtains a new token with the grant of the credentials' mode. `attempt.sent`
   * becomes true once the request has left (a refresh grant's answer may
   * rotate the refresh token, so the caller must not send another). Each
   * request that left is counted by its outcome (`onTokenRequest`).
   */
  async mint(signal: AbortSignal, attempt: { sent: boolean }): Promise<CachedToken> {
    const count = this.#options.onTokenRequest;
    try {
      const token = await this.#mint(signal, attempt);
      count?.('ok');
      return token;
    } catch (error) {
      // A request that never left (a grant the vault would not send) is none;
      // one stopped by a shutdown or a lost lock says nothing of the endpoint.
      if (attempt.sent && !signal.aborted) count?.(tokenRequestOutcome(error));
      throw error;
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
    let answer: TokenAnswer;
    try {
      answer = await this.#post(headers, body, {
        signal,
        beforeSend: async () => {
          attempt.sent = true;
        },
      });
    } catch (error) {
      // Refused for good: the account runs nothing until its credential is
      // replaced (state credentials_refused), recorded before the run fails.
      if (error instanceof CredentialRefusedError) {
        await this.#options.credentialRefusals?.refused(error.reason);
      }
      throw error;
    }
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
      const refusal = credentialRefusalOf(auth, response.status, response.body);
      if (refusal !== undefined) {
        throw new CredentialRefusedError(response.status, path, message, undefined, refusal);
      }
      throw new AuthError(response.status, path, message, undefined);
    }
    return { status: response.status, body: response.body, path };
  }

  /** The access token of a 2xx answer, with a lifetime it can be planned by. */
  #readToken(answer: TokenAnswer): CachedToken {
    const { status, path } = answer;
    const parsed = parseTokenResponse(answer.body, this.#options.now());
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
