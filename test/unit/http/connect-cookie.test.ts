import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  browserNonceHash,
  connectCookie,
  connectCookieName,
  expiredConnectCookie,
  newBrowserNonce,
  readBrowserNonce,
} from '../../../src/http/connect-cookie.js';

const STATE = 'the-state';
const NONCE = newBrowserNonce();
const attributes = (cookie: string) => cookie.split('; ').slice(1);

/** A request carrying `cookie` as its Cookie header. */
const withCookie = (cookie: string | undefined) =>
  ({ headers: cookie === undefined ? {} : { cookie } }) as IncomingMessage;

describe('the connect link cookie', () => {
  it('is HttpOnly, SameSite=Lax, limited to the callback path, lives as long as the state, and is not Secure on a loopback http URL', () => {
    const cookie = connectCookie(STATE, NONCE, {
      publicUrl: 'http://127.0.0.1:8080',
      maxAgeMs: 15 * 60_000,
    });
    expect(cookie.startsWith(`${connectCookieName(STATE)}=${NONCE}; `)).toBe(true);
    expect(attributes(cookie)).toEqual([
      'Max-Age=900',
      'Path=/oauth/callback',
      'HttpOnly',
      'SameSite=Lax',
    ]);
  });

  it('is Secure when HIRESYNC_PUBLIC_URL is https, and its path is below the public URL path', () => {
    const options = { publicUrl: 'https://sync.example.com/hiresync/', maxAgeMs: 90_500 };
    expect(attributes(connectCookie(STATE, NONCE, options))).toEqual([
      'Max-Age=91',
      'Path=/hiresync/oauth/callback',
      'HttpOnly',
      'SameSite=Lax',
      'Secure',
    ]);
    expect(expiredConnectCookie(STATE, options)).toBe(
      `${connectCookieName(STATE)}=; Max-Age=0; Path=/hiresync/oauth/callback; HttpOnly; SameSite=Lax; Secure`,
    );
  });

  it('is named after the state, so that links opened in two tabs keep a cookie each', () => {
    expect(connectCookieName(STATE)).toMatch(/^hiresync_connect_[0-9a-f]{16}$/);
    expect(connectCookieName('another-state')).not.toBe(connectCookieName(STATE));
  });

  it("reads back the state's nonce among other cookies, and nothing from a missing or malformed one", () => {
    const name = connectCookieName(STATE);
    const other = connectCookieName('another-state');
    expect(
      readBrowserNonce(withCookie(`a=b; ${other}=${newBrowserNonce()}; ${name}=${NONCE}`), STATE),
    ).toBe(NONCE);
    expect(readBrowserNonce(withCookie(undefined), STATE)).toBeUndefined();
    expect(readBrowserNonce(withCookie(`${other}=${NONCE}`), STATE)).toBeUndefined();
    expect(readBrowserNonce(withCookie(`${name}=short`), STATE)).toBeUndefined();
    expect(readBrowserNonce(withCookie(`${name}=`), STATE)).toBeUndefined();
  });

  it('stores only the SHA-256 of a fresh random nonce', () => {
    expect(NONCE).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newBrowserNonce()).not.toBe(NONCE);
    expect(browserNonceHash(NONCE)).toMatch(/^[0-9a-f]{64}$/);
    expect(browserNonceHash(NONCE)).not.toContain(NONCE);
  });
});
