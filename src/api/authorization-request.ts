import { randomBytes, timingSafeEqual } from 'node:crypto';

/** What an authorization request (RFC 6749 4.1.1) carries besides its endpoint. */
export interface AuthorizationRequest {
  /** The partner app's client id (HIRESYNC_PARTNER_CLIENT_ID). */
  clientId: string;
  /** Where the browser comes back: `http://127.0.0.1:PORT/callback`. */
  redirectUri: string;
  /** The value the callback must echo: ties the answer to this request (CSRF). */
  state: string;
  /** HIRESYNC_PARTNER_SCOPE; omitted when undefined. */
  scope: string | undefined;
  /** The PKCE challenge of this request's verifier (pkce.ts), sent with method S256. */
  codeChallenge: string;
}

/** A fresh `state`: 32 random bytes, base64url (43 characters). */
export function newState(): string {
  return randomBytes(32).toString('base64url');
}

/** The loopback redirect URI of `accounts authorize` on `port` (RFC 8252 7.3). */
export function loopbackRedirectUri(port: number): string {
  return `http://127.0.0.1:${port}/callback`;
}

/**
 * The URL the customer opens: `authorizeUrl` (HIRESYNC_AUTHORIZE_URL, which
 * carries no query) with `response_type=code`, `client_id`, `redirect_uri`,
 * `state`, `code_challenge` with `code_challenge_method=S256` (PKCE, RFC
 * 7636: the code is useless without the verifier hiresync keeps) and, when
 * set, `scope`.
 */
export function authorizeRequestUrl(authorizeUrl: string, request: AuthorizationRequest): string {
  const url = new URL(authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', request.clientId);
  url.searchParams.set('redirect_uri', request.redirectUri);
  url.searchParams.set('state', request.state);
  url.searchParams.set('code_challenge', request.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  if (request.scope !== undefined) url.searchParams.set('scope', request.scope);
  return url.href;
}

/** What a request to the callback says (RFC 6749 4.1.2). */
export type CallbackAnswer =
  /** The authorization server granted access: `code` is exchanged for tokens. */
  | { kind: 'code'; code: string }
  /** It did not (the user denied, or the request was refused): `error` and its description. */
  | { kind: 'error'; error: string; description: string | undefined }
  /** Not an answer to this command's request: no or another `state` (ignored; waiting goes on). */
  | { kind: 'state mismatch' }
  /** The right state, but neither a code nor an error, or either twice. */
  | { kind: 'malformed'; problem: string };

/**
 * Reads the query of a callback request, checking its `state` against
 * `expected` first (in constant time): an answer not carrying it, an error
 * included, is not this command's and changes nothing.
 */
export function readCallback(query: URLSearchParams, expected: string): CallbackAnswer {
  const states = query.getAll('state');
  const state = states[0];
  if (states.length !== 1 || state === undefined || !sameText(state, expected)) {
    return { kind: 'state mismatch' };
  }
  const errors = query.getAll('error');
  const codes = query.getAll('code');
  if (errors.length > 1 || codes.length > 1) {
    return { kind: 'malformed', problem: 'the callback carries code or error more than once' };
  }
  const error = errors[0];
  if (error !== undefined) {
    return {
      kind: 'error',
      error,
      description: query.get('error_description') ?? undefined,
    };
  }
  const code = codes[0];
  if (code === undefined || code === '') {
    return { kind: 'malformed', problem: 'the callback carries neither a code nor an error' };
  }
  return { kind: 'code', code };
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
