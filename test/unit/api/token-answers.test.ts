import { describe, expect, it } from 'vitest';
import { holdWhileSent } from '../../../src/api/hold-while-sent.js';
import {
  describeTokenError,
  isClientAuthError,
  rotatedRefreshToken,
} from '../../../src/api/token-answer.js';
import type { AuthConfig } from '../../../src/config/types.js';
import { Secret } from '../../../src/secret.js';

describe('holdWhileSent', () => {
  it('follows the outer signal while no request is on the wire', () => {
    const outer = new AbortController();
    const held = holdWhileSent(outer.signal);
    outer.abort(new Error('shutting down'));
    expect(held.signal.aborted).toBe(true);
    expect(() => held.sending()).toThrow('shutting down');
  });

  it('holds an abort that arrives while the request is on the wire until its answer is in', () => {
    const outer = new AbortController();
    const held = holdWhileSent(outer.signal);
    held.sending();
    outer.abort(new Error('shutting down'));
    expect(held.signal.aborted).toBe(false);
    held.answered();
    expect(held.signal.aborted).toBe(true);
    expect(held.signal.reason).toEqual(new Error('shutting down'));
  });

  it('stops following the outer signal once released', () => {
    const outer = new AbortController();
    const held = holdWhileSent(outer.signal);
    held.release();
    outer.abort();
    expect(held.signal.aborted).toBe(false);
  });
});

describe('token answers', () => {
  it('reads a rotated refresh token whatever else the answer holds', () => {
    expect(rotatedRefreshToken('{"access_token":"","refresh_token":"r2"}')).toBe('r2');
    expect(rotatedRefreshToken('{"access_token":"a"}')).toBeUndefined();
    expect(rotatedRefreshToken('{"refresh_token":""}')).toBeUndefined();
    expect(rotatedRefreshToken('{"refresh_token":5}')).toBeUndefined();
    expect(rotatedRefreshToken('null')).toBeUndefined();
    expect(rotatedRefreshToken('<html>')).toBeUndefined();
  });

  it("tells the client's own refusal (invalid_client) from a refused grant", () => {
    expect(isClientAuthError('{"error":"invalid_client"}')).toBe(true);
    expect(isClientAuthError('{"error":"invalid_grant"}')).toBe(false);
    expect(isClientAuthError('not json')).toBe(false);
    expect(isClientAuthError('null')).toBe(false);
  });
});

describe('token refusals', () => {
  const key = (account?: string): AuthConfig => ({
    mode: 'api_key',
    tokenUrl: 'https://api.example.com/auth/token',
    apiKey: new Secret('k'),
    ...(account ? { account } : {}),
  });
  const client = (account?: string): AuthConfig => ({
    mode: 'client_credentials',
    tokenUrl: 'https://auth.example.com/token',
    clientId: 'c',
    clientSecret: new Secret('s'),
    sub: undefined,
    ...(account ? { account } : {}),
  });
  const body = '{"error":"invalid_client","error_description":"bad credentials"}';

  it("of a registered account name it and 'hiresync accounts update', never default's variables", () => {
    expect(describeTokenError(key('beta'), 401, body)).toBe(
      "account beta: the token service refused its API key (401: bad credentials): store the right one with 'hiresync accounts update beta' (key on standard input; version 1/2 keys work only during the transition period)",
    );
    const secret = describeTokenError(client('acme'), 401, body);
    expect(secret).toMatch(
      /^account acme: the token service refused its client secret \(401: bad credentials\): store the right one with 'hiresync accounts update acme' \(secret on standard input\)/,
    );
    for (const [auth, flag] of [
      [client('acme'), "'hiresync accounts update acme --auth-url URL'"],
      [key('beta'), "'hiresync accounts update beta --base-url URL'"],
    ] as const) {
      const missing = describeTokenError(auth, 404, '{}');
      expect(missing).toContain(flag);
      expect(missing).not.toMatch(/HIRESYNC_/);
    }
    for (const message of [secret, describeTokenError(key('beta'), 401, body)]) {
      expect(message).not.toMatch(/HIRESYNC_/);
    }
  });

  it("of default name the environment's variables", () => {
    expect(describeTokenError(client(), 401, body)).toContain(
      'check HIRESYNC_CLIENT_ID, HIRESYNC_CLIENT_SECRET and HIRESYNC_SUB',
    );
    expect(describeTokenError(key(), 401, body)).toContain('check HIRESYNC_API_KEY');
    expect(describeTokenError(client(), 404, '{}')).toContain('check HIRESYNC_AUTH_URL');
  });
});
