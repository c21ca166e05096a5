import { describe, expect, it } from 'vitest';
import {
  jwtExpiry,
  MAX_TOKEN_LIFETIME_MS,
  MIN_TOKEN_LIFETIME_MS,
  parseTokenResponse,
  renewAt,
  saneLifetime,
} from '../../../src/api/token-answer.js';
import { TokenCipher } from '../../../src/api/token-cipher.js';
import { MAX_TOKEN_TTL_MS, tokenTtlMs } from '../../../src/api/token-store.js';
import type { AuthConfig } from '../../../src/config/types.js';
import { Secret } from '../../../src/secret.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');

function jwt(claims: object): string {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'HS256' })}.${part(claims)}.c2ln`;
}

describe('parseTokenResponse', () => {
  it('reads expires_in seconds', () => {
    expect(
      parseTokenResponse('{"token_type":"Bearer","access_token":"a","expires_in":3600}', NOW),
    ).toEqual({
      accessToken: 'a',
      expiresAt: NOW + 3_600_000,
      obtainedAt: NOW,
    });
  });

  it('reads expires_at as a timestamp or epoch seconds', () => {
    expect(
      parseTokenResponse('{"access_token":"a","expires_at":"2026-11-22T13:00:00Z"}', NOW)
        ?.expiresAt,
    ).toBe(NOW + 3_600_000);
    expect(
      parseTokenResponse(`{"access_token":"a","expires_at":${NOW / 1000 + 60}}`, NOW)?.expiresAt,
    ).toBe(NOW + 60_000);
  });

  it("falls back to the JWT's exp claim, else to no lifetime", () => {
    const token = jwt({ exp: NOW / 1000 + 900 });
    expect(parseTokenResponse(JSON.stringify({ access_token: token }), NOW)?.expiresAt).toBe(
      NOW + 900_000,
    );
    expect(parseTokenResponse('{"access_token":"opaque"}', NOW)?.expiresAt).toBeUndefined();
  });

  it('rejects answers without an access token', () => {
    expect(parseTokenResponse('{"token_type":"Bearer"}', NOW)).toBeUndefined();
    expect(parseTokenResponse('<html>', NOW)).toBeUndefined();
    expect(parseTokenResponse('{"access_token":""}', NOW)).toBeUndefined();
  });
});

describe('renewAt', () => {
  it('renews with a tenth of the lifetime left, at most 60 s before expiry', () => {
    expect(renewAt({ accessToken: 'a', obtainedAt: 0, expiresAt: 100_000 })).toBe(90_000);
    expect(renewAt({ accessToken: 'a', obtainedAt: 0, expiresAt: 3_600_000 })).toBe(3_540_000);
    expect(renewAt({ accessToken: 'a', obtainedAt: 0, expiresAt: undefined })).toBeUndefined();
  });

  it('plans a short but usable lifetime (expires_at 3 s ahead): renewal with 300 ms left', () => {
    const parsed = parseTokenResponse(
      JSON.stringify({ access_token: 'a', expires_at: new Date(NOW + 3000).toISOString() }),
      NOW,
    );
    const { token, dropped } = saneLifetime(parsed as NonNullable<typeof parsed>);
    expect(dropped).toBeUndefined();
    expect(token.expiresAt).toBe(NOW + 3000);
    expect(renewAt(token)).toBe(NOW + 2700);
  });
});

describe('jwtExpiry', () => {
  it('ignores tokens that are not JWTs or lack exp', () => {
    expect(jwtExpiry('abc')).toBeUndefined();
    expect(jwtExpiry(jwt({ sub: 1 }))).toBeUndefined();
    expect(jwtExpiry('a.!!!.c')).toBeUndefined();
  });
});

describe('TokenCipher', () => {
  const auth = (secret: string): AuthConfig => ({
    mode: 'client_credentials',
    tokenUrl: 'https://auth.example.com/token',
    clientId: 'c1',
    clientSecret: new Secret(secret),
    sub: undefined,
  });

  it('round-trips a token and never stores it in clear', () => {
    const cipher = new TokenCipher(auth('s1'));
    const token = { accessToken: 'the-access-token', expiresAt: NOW + 1000, obtainedAt: NOW };
    const sealed = cipher.encrypt(token);
    expect(sealed).not.toContain('the-access-token');
    expect(Buffer.from(sealed, 'base64').toString('latin1')).not.toContain('the-access-token');
    expect(cipher.decrypt(sealed)).toEqual(token);
  });

  it('keeps the namespace across a secret rotation but cannot read the old sealed token', () => {
    const before = new TokenCipher(auth('old-secret'));
    const after = new TokenCipher(auth('new-secret'));
    expect(after.namespace).toBe(before.namespace);
    expect(
      after.decrypt(before.encrypt({ accessToken: 'x', expiresAt: undefined, obtainedAt: NOW })),
    ).toBeUndefined();
  });

  it('derives an API-key namespace that does not reveal the key', () => {
    const cipher = new TokenCipher({
      mode: 'api_key',
      tokenUrl: 'https://h/auth/token',
      apiKey: new Secret('key-123'),
    });
    expect(cipher.namespace).not.toContain('key-123');
    expect(cipher.namespace).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('saneLifetime', () => {
  const at = (expiresAt: number | undefined) => ({ accessToken: 'a', obtainedAt: NOW, expiresAt });

  it('drops a lifetime already over or too short to plan by, saying why', () => {
    expect(saneLifetime(at(NOW - 60_000))).toEqual({
      token: at(undefined),
      dropped: 'already over',
    });
    expect(saneLifetime(at(NOW + 0.1)).token.expiresAt).toBeUndefined();
  });

  it('keeps every lifetime of at least one round trip (1 s) and drops the shorter ones', () => {
    expect(MIN_TOKEN_LIFETIME_MS).toBe(1000);
    expect(saneLifetime(at(NOW + 999)).token).toEqual(at(undefined));
    expect(saneLifetime(at(NOW + 1000))).toEqual({ token: at(NOW + 1000) });
    expect(saneLifetime(at(NOW + 5000))).toEqual({ token: at(NOW + 5000) });
  });

  it('cuts an absurd lifetime and rounds to whole milliseconds', () => {
    expect(saneLifetime(at(NOW + 1e303)).token.expiresAt).toBe(NOW + MAX_TOKEN_LIFETIME_MS);
    expect(saneLifetime(at(NOW + 3_600_123.4)).token.expiresAt).toBe(NOW + 3_600_123);
  });
});

describe('tokenTtlMs', () => {
  const at = (expiresAt: number | undefined) => ({ accessToken: 'a', obtainedAt: NOW, expiresAt });

  it('gives Redis a whole number of milliseconds within range', () => {
    expect(tokenTtlMs(at(NOW + 1234.5678), NOW)).toBe(1235);
    expect(tokenTtlMs(at(NOW + 1e303), NOW)).toBe(MAX_TOKEN_TTL_MS);
    expect(tokenTtlMs(at(undefined), NOW)).toBe(MAX_TOKEN_TTL_MS);
    expect(tokenTtlMs(at(NOW - 1), NOW)).toBeUndefined();
  });
});
