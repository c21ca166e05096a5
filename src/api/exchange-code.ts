import type { Got } from 'got';
import type { PartnerConfig } from '../config/types.js';
import { HiresyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import { registerSecret, Secret } from '../secret.js';
import { sendWithRetries } from './send.js';
import { oauthErrorText } from './token-answer.js';
import type { TokenRequestOutcome } from './token-grants.js';

/** Options of {@link exchangeCode}. */
export interface ExchangeCodeOptions {
  /** The got instance of src/api/http.ts (no redirects followed, statuses returned). */
  http: Got;
  /** The account's token endpoint: `{auth_url}/token`. */
  tokenUrl: string;
  /** The partner app: its client authenticates by HTTP Basic. */
  partner: PartnerConfig;
  /** The authorization code the callback brought; never logged or printed. */
  code: string;
  /** The redirect URI of the authorization request, which the endpoint checks. */
  redirectUri: string;
  /** The PKCE verifier of the authorization request (`code_verifier`); never logged or printed. */
  codeVerifier: string;
  logger: Logger;
  /** Timeout of one request. */
  timeoutMs: number;
  /**
   * Where the auth URL is set, as errors name it. Default "--auth-url or
   * HIRESYNC_AUTH_URL" (a new account); a registered account's own otherwise.
   */
  authUrlSetting?: string;
  signal?: AbortSignal | undefined;
  /** Told how the request ended once it has left (hiresync_token_requests_total of the account). */
  onTokenRequest?: (outcome: TokenRequestOutcome) => void;
}

/** A token endpoint's refusal or other non-success, read for a message (RFC 6749 `error` or `message`). */
function describeAnswer(status: number, body: string): string {
  const text = oauthErrorText(body);
  return text === undefined ? String(status) : `${status}: ${text}`;
}

/**
 * Exchanges an authorization code for the customer's refresh token (RFC 6749
 * 4.1.3): POST `tokenUrl`, form `grant_type=authorization_code`, `code`,
 * `redirect_uri`, `code_verifier` (RFC 7636 4.5), the partner app's client by HTTP Basic, through
 * sendWithRetries (no retry after a request that may have been processed;
 * its 429 waits, response-size limit and redaction apply). The
 * code, the tokens and the Basic credential are registered for redaction
 * before anything could print them. Throws a HiresyncError saying what to fix
 * when the endpoint refuses, redirects, or answers without a refresh token.
 */
export async function exchangeCode(options: ExchangeCodeOptions): Promise<Secret> {
  let answered: number | undefined;
  try {
    const refreshToken = await sendExchange(options, (status) => {
      answered = status;
    });
    options.onTokenRequest?.('ok');
    return refreshToken;
  } catch (error) {
    if (!options.signal?.aborted) {
      const refused = answered !== undefined && answered >= 400 && answered < 500;
      options.onTokenRequest?.(refused ? 'refused' : 'error');
    }
    throw error;
  }
}

async function sendExchange(
  options: ExchangeCodeOptions,
  onStatus: (status: number) => void,
): Promise<Secret> {
  const { partner } = options;
  registerSecret(options.code);
  registerSecret(options.codeVerifier);
  const basic = Buffer.from(`${partner.clientId}:${partner.clientSecret.reveal()}`).toString(
    'base64',
  );
  registerSecret(basic, { pinned: true });
  const setting = options.authUrlSetting ?? '--auth-url or HIRESYNC_AUTH_URL';
  const response = await sendWithRetries({
    http: options.http,
    method: 'POST',
    url: options.tokenUrl,
    headers: {
      accept: 'application/json',
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: options.code,
      redirect_uri: options.redirectUri,
      code_verifier: options.codeVerifier,
    }).toString(),
    // A code is single-use: never sent twice (a code redeemed whose answer
    // was lost would be refused on a second try, and the server may revoke
    // what it issued for it). A 429 was not processed: a short one is waited.
    maxRetries: 0,
    defaultRetryAfterMs: 1000,
    maxRetryAfterMs: 30_000,
    maxResponseBytes: 1024 ** 2,
    timeoutMs: options.timeoutMs,
    endpointVariable: setting,
    logger: options.logger,
    signal: options.signal,
  });
  const path = new URL(options.tokenUrl).pathname;
  const { status } = response;
  onStatus(status);
  if (status >= 300 && status < 400) {
    throw new HiresyncError(
      `the token endpoint ${path} answered with a ${status} redirect, which is not followed (credentials never go to another address): ${setting} must name the token service itself (hiresync appends /token)`,
    );
  }
  if (status < 200 || status >= 300) {
    const answered = describeAnswer(status, response.body);
    if (status === 401) {
      throw new HiresyncError(
        `the token endpoint ${path} refused the partner app's credentials (${answered}): check HIRESYNC_PARTNER_CLIENT_ID and HIRESYNC_PARTNER_CLIENT_SECRET`,
      );
    }
    if (status === 404 || status === 405) {
      throw new HiresyncError(
        `no token endpoint at ${path} (${answered}): check ${setting} (hiresync appends /token to it)`,
      );
    }
    throw new HiresyncError(
      `the token endpoint ${path} refused the authorization code (${answered}); authorize again`,
    );
  }
  let fields: Record<string, unknown>;
  try {
    const parsed = JSON.parse(response.body) as unknown;
    fields =
      typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    fields = {};
  }
  if (typeof fields.access_token === 'string') registerSecret(fields.access_token);
  const refreshToken = fields.refresh_token;
  if (typeof refreshToken !== 'string' || refreshToken.trim() === '') {
    throw new HiresyncError(
      `the token endpoint ${path} answered the authorization code without a refresh_token: hiresync cannot keep access to the account without one (the partner app may need offline access; ask the API vendor's partner support)`,
    );
  }
  return new Secret(refreshToken);
}
