import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  connectTokenHash,
  newConnectState,
  newConnectToken,
  verifyConnectToken,
} from '../../../src/accounts/connect-token.js';

const key = randomBytes(32);
const other = randomBytes(32);

describe('connect link tokens', () => {
  it('makes a url-safe token of 256 random bits and a 128-bit MAC, different every time', () => {
    const a = newConnectToken([key]);
    const b = newConnectToken([key]);
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{22}$/);
    expect(a.token).not.toBe(b.token);
    expect(a.hash).toBe(connectTokenHash(a.token));
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.hash).not.toContain(a.token.split('.')[0]);
  });

  it('verifies a token signed with the first key under any configured key (key rotation)', () => {
    const { token } = newConnectToken([key, other]);
    expect(verifyConnectToken(token, [key])).toBe(true);
    expect(verifyConnectToken(token, [other, key])).toBe(true);
    expect(verifyConnectToken(token, [other])).toBe(false);
  });

  it('refuses a token whose random part or MAC was changed, cut short or padded', () => {
    const { token } = newConnectToken([key]);
    const [random = '', mac = ''] = token.split('.');
    const flip = (text: string, at: number) =>
      `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
    for (const forged of [
      `${flip(random, 0)}.${mac}`,
      `${random}.${flip(mac, 5)}`,
      `${random}.${mac.slice(0, -1)}`,
      `${random}.${mac}A`,
      `${random}.${mac}=`,
      `${random}${mac}`,
      `${random}.${mac}.x`,
      '',
      '../../etc/passwd',
    ]) {
      expect(verifyConnectToken(forged, [key])).toBe(false);
    }
  });

  it('refuses a MAC whose last character differs only in its unused bits (one encoding per MAC)', () => {
    const { token } = newConnectToken([key]);
    const last = token.at(-1) as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // 16 bytes in 22 base64url characters: the last one carries 2 bits and 4 unused.
    const index = alphabet.indexOf(last);
    const sibling = alphabet[index ^ 1] as string;
    expect(verifyConnectToken(`${token.slice(0, -1)}${sibling}`, [key])).toBe(false);
  });

  it('makes states of 32 random bytes, stored only as their hash', () => {
    const { state, hash } = newConnectState();
    expect(Buffer.from(state, 'base64url')).toHaveLength(32);
    expect(hash).toBe(connectTokenHash(state));
    expect(newConnectState().state).not.toBe(state);
  });
});
