/**
 * The cookie that binds a connect link's opening to the browser that opened
 * it: `GET /connect/<token>` sets a random nonce, of which only the SHA-256
 * is stored with the state (so any worker can check it), and
 * `/oauth/callback` accepts the state only from a browser sending it back.
 * A link forwarded to someone else's administrator, or an authorize URL
 * sent on from the browser that opened the link, then completes nothing.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { CALLBACK_PATH } from '../accounts/connect-links.js';
import { connectTokenHash } from '../accounts/connect-token.js';

/** The cookie names' prefix; the rest names the state, so openings in several tabs each keep theirs. */
const COOKIE_PREFIX = 'hiresync_connect_';

/** Hex characters of the state's hash in the cookie's name (not secret: the state is 256 random bits). */
const NAME_HASH_CHARS = 16;

const NONCE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** What the cookie of one opening needs from the deployment. */
export interface ConnectCookieOptions {
  /** HIRESYNC_PUBLIC_URL: its path prefixes the callback's; https makes the cookie Secure. */
  publicUrl: string;
  /** Lifetime of the state, and so of the cookie (Max-Age, whole seconds rounded up). */
  maxAgeMs: number;
}

/** The name of the cookie of the opening whose state is `state`. */
export function connectCookieName(state: string): string {
  return `${COOKIE_PREFIX}${connectTokenHash(state).slice(0, NAME_HASH_CHARS)}`;
}

/** A fresh nonce for a browser: 32 random bytes, base64url (43 characters). */
export function newBrowserNonce(): string {
  return randomBytes(32).toString('base64url');
}

/** What the state stores of a nonce: lowercase hex SHA-256. */
export function browserNonceHash(nonce: string): string {
  return connectTokenHash(nonce);
}

/** The path the cookie is sent to: the callback's, below HIRESYNC_PUBLIC_URL's own path. */
export function connectCookiePath(publicUrl: string): string {
  return `${new URL(publicUrl).pathname.replace(/\/+$/, '')}${CALLBACK_PATH}`;
}

/**
 * The `Set-Cookie` value of an opening: the nonce under the state's cookie
 * name, `HttpOnly` (no script reads it), `SameSite=Lax` (sent on the
 * vendor's top-level redirect back, on no cross-site subrequest), `Path`
 * the callback's only, `Max-Age` the state's life, and `Secure` when
 * HIRESYNC_PUBLIC_URL is https (a loopback http URL cannot have it).
 */
export function connectCookie(state: string, nonce: string, options: ConnectCookieOptions): string {
  const secure = new URL(options.publicUrl).protocol === 'https:';
  return [
    `${connectCookieName(state)}=${nonce}`,
    `Max-Age=${Math.max(1, Math.ceil(options.maxAgeMs / 1000))}`,
    `Path=${connectCookiePath(options.publicUrl)}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/** The `Set-Cookie` value that deletes the cookie of `state` once its callback came. */
export function expiredConnectCookie(state: string, options: ConnectCookieOptions): string {
  const secure = new URL(options.publicUrl).protocol === 'https:';
  return [
    `${connectCookieName(state)}=`,
    'Max-Age=0',
    `Path=${connectCookiePath(options.publicUrl)}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/**
 * The nonce the request's cookies hold for `state`, or undefined (no such
 * cookie, or one not shaped as a nonce). Several cookies of that name: the
 * first well-formed one.
 */
export function readBrowserNonce(req: IncomingMessage, state: string): string | undefined {
  const name = connectCookieName(state);
  const header = req.headers.cookie ?? '';
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== name) continue;
    const value = pair.slice(at + 1).trim();
    if (NONCE_PATTERN.test(value)) return value;
  }
  return undefined;
}
