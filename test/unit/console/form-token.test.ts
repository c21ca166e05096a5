import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkFormToken,
  createFormToken,
  FORM_TOKEN_TTL_MS,
  formTokenKeys,
} from '../../../src/console/form-token.js';

const NOW = Date.UTC(2026, 10, 26, 4, 0, 0);
const SECRET = randomBytes(32);
const PASSWORD = 'correct horse battery';

describe('the console form token', () => {
  it('is taken by every worker of the deployment within the hour', () => {
    const token = createFormToken(formTokenKeys(PASSWORD, [SECRET]), NOW);
    // Another process derives the same keys from the same environment.
    const other = formTokenKeys(PASSWORD, [Buffer.from(SECRET)]);
    expect(checkFormToken(token, other, NOW)).toBe('ok');
    expect(checkFormToken(token, other, NOW + FORM_TOKEN_TTL_MS)).toBe('ok');
  });

  it('is expired after the hour, and when dated too far ahead of this clock', () => {
    const keys = formTokenKeys(PASSWORD, [SECRET]);
    expect(checkFormToken(createFormToken(keys, NOW), keys, NOW + FORM_TOKEN_TTL_MS + 1)).toBe(
      'expired',
    );
    expect(checkFormToken(createFormToken(keys, NOW + 10 * 60_000), keys, NOW)).toBe('expired');
    expect(checkFormToken(createFormToken(keys, NOW + 60_000), keys, NOW)).toBe('ok');
  });

  it('differs between two pages rendered in the same millisecond, so each page’s can be spent once', () => {
    const keys = formTokenKeys(PASSWORD, [SECRET]);
    const first = createFormToken(keys, NOW);
    const second = createFormToken(keys, NOW);
    expect(first).not.toBe(second);
    expect([checkFormToken(first, keys, NOW), checkFormToken(second, keys, NOW)]).toEqual([
      'ok',
      'ok',
    ]);
  });

  it('is missing when the form has none', () => {
    const keys = formTokenKeys(PASSWORD, [SECRET]);
    expect(checkFormToken(undefined, keys, NOW)).toBe('missing');
    expect(checkFormToken('', keys, NOW)).toBe('missing');
  });

  it('is forged when signed under another key, another password, or altered', () => {
    const keys = formTokenKeys(PASSWORD, [SECRET]);
    const token = createFormToken(keys, NOW);
    expect(
      checkFormToken(createFormToken(formTokenKeys(PASSWORD, [randomBytes(32)]), NOW), keys, NOW),
    ).toBe('forged');
    expect(
      checkFormToken(createFormToken(formTokenKeys('another password!', [SECRET]), NOW), keys, NOW),
    ).toBe('forged');
    const [v, time, nonce, mac] = token.split('.');
    // A later time under the same signature (to outlive the hour).
    expect(checkFormToken(`${v}.${(NOW + 1).toString(36)}.${nonce}.${mac}`, keys, NOW)).toBe(
      'forged',
    );
    // Another nonce under the same signature (to be spent again).
    expect(checkFormToken(`${v}.${time}.${'B'.repeat(16)}.${mac}`, keys, NOW)).toBe('forged');
    expect(checkFormToken(`${v}.${time}.${nonce}.${'A'.repeat(43)}`, keys, NOW)).toBe('forged');
    expect(checkFormToken('not a token', keys, NOW)).toBe('forged');
  });

  it('signs with the first secret key and is taken under any, so keys can be rolled', () => {
    const old = randomBytes(32);
    const fresh = randomBytes(32);
    const before = createFormToken(formTokenKeys(PASSWORD, [old]), NOW);
    const rolled = formTokenKeys(PASSWORD, [fresh, old]);
    expect(checkFormToken(before, rolled, NOW)).toBe('ok');
    expect(
      checkFormToken(createFormToken(rolled, NOW), formTokenKeys(PASSWORD, [fresh]), NOW),
    ).toBe('ok');
  });

  it('is signed under a key of the password alone when no secret key is set', () => {
    const keys = formTokenKeys(PASSWORD, []);
    expect(checkFormToken(createFormToken(keys, NOW), formTokenKeys(PASSWORD, []), NOW)).toBe('ok');
    expect(
      checkFormToken(createFormToken(keys, NOW), formTokenKeys('another password!', []), NOW),
    ).toBe('forged');
  });
});
