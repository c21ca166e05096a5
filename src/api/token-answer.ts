import type { AuthConfig } from '../config/types.js';
import { describeWait } from '../errors.js';
import { excerpt } from '../secret.js';
import type { CachedToken } from './token-cipher.js';
import { authUrlSetting, baseUrlSetting } from './url-setting.js';

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
export function tokenUrlVariable(auth: AuthConfig): string {
  if (auth.adding) {
    return auth.mode === 'api_key'
      ? '--base-url or HIRESYNC_BASE_URL'
      : '--auth-url or HIRESYNC_AUTH_URL';
  }
  return auth.mode === 'api_key' ? baseUrlSetting(auth.account) : authUrlSetting(auth.account);
}

/** What hiresync appends to that variable to form the token endpoint. */
export function tokenPathSuffix(auth: AuthConfig): string {
  return auth.mode === 'api_key' ? '/auth/token' : '/token';
}

/**
 * What a token endpoint's error answer says, in either shape: RFC 6749 5.2's
 * `{"error": "invalid_grant", "error_description": …}` (as `invalid_grant:
 * …`) or `{"message": …}` (the description, when both are sent). Redacted
 * and cut to 300 characters; undefined when the body says nothing readable.
 */
export function oauthErrorText(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined; // Not JSON: the status says enough.
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const fields = parsed as Record<string, unknown>;
  const text = (value: unknown) =>
    typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  const description = text(fields.error_description) ?? text(fields.message);
  const parts = [text(fields.error), description].filter((p): p is string => p !== undefined);
  // Redacted before it is cut: a secret across the cut must not show half.
  return parts.length === 0 ? undefined : excerpt(parts.join(': '), 300);
}

/** The RFC 6749 `error` code of a token endpoint's answer (`invalid_grant`, …), if it states one. */
export function oauthErrorCode(body: string): string | undefined {
  try {
    const error = (JSON.parse(body) as { error?: unknown } | null)?.error;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why the token endpoint refused these credentials (`status`, its answer
 * `body`), and what fixes it: for `default`, the environment's variables; for
 * a registered account, the account and `hiresync accounts update NAME`.
 */
export function describeTokenError(auth: AuthConfig, status: number, body: string): string {
  let detail = '';
  try {
    // RFC 6749 5.2's description first, else the `{"message": …}` shape, else the bare code.
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
  if (auth.mode !== 'partner' && auth.adding) {
    // Not registered yet: nothing to update, the flags of `add` decide.
    return auth.mode === 'client_credentials'
      ? `the token service refused the client secret given (${status}${detail}): check it, --client-id and --sub (an old secret stays valid for at most a week after rotation)`
      : `the token service refused the API key given (${status}${detail}): check it (version 1/2 keys work only during the transition period)`;
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
export interface TokenAnswer {
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
  return oauthErrorCode(body) === 'invalid_client';
}
