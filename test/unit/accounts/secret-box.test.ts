import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyId, SecretBox, SecretKeyError } from '../../../src/accounts/secret-box.js';

const OLD = randomBytes(32);
const NEW = randomBytes(32);
const PURPOSE = 'account:acme:secret';
const PLAINTEXT = 'client-secret-9f2c41';

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('SecretBox', () => {
  it('opens what it sealed, and the sealed value holds neither the plaintext nor its base64', () => {
    const box = new SecretBox([NEW]);
    const sealed = box.seal(PLAINTEXT, PURPOSE);
    expect(sealed).toMatch(/^hs1\.[0-9a-f]{16}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain(PLAINTEXT);
    expect(sealed).not.toContain(Buffer.from(PLAINTEXT).toString('base64').slice(0, 12));
    expect(box.open(sealed, PURPOSE)).toBe(PLAINTEXT);
  });

  it('seals the same value differently each time (a fresh IV)', () => {
    const box = new SecretBox([NEW]);
    expect(box.seal(PLAINTEXT, PURPOSE)).not.toBe(box.seal(PLAINTEXT, PURPOSE));
  });

  it('rotates: the first key seals, an older key after it still opens', () => {
    const sealedWithOld = new SecretBox([OLD]).seal(PLAINTEXT, PURPOSE);
    const rotated = new SecretBox([NEW, OLD]);
    expect(rotated.open(sealedWithOld, PURPOSE)).toBe(PLAINTEXT);
    expect(rotated.isCurrent(sealedWithOld)).toBe(false);
    const resealed = rotated.seal(PLAINTEXT, PURPOSE);
    expect(rotated.isCurrent(resealed)).toBe(true);
    expect(resealed.split('.')[1]).toBe(keyId(NEW));
    expect(new SecretBox([NEW]).open(resealed, PURPOSE)).toBe(PLAINTEXT);
  });

  it('refuses a value sealed for another purpose (copied into another row or column)', () => {
    const box = new SecretBox([NEW]);
    const sealed = box.seal(PLAINTEXT, PURPOSE);
    const error = errorOf(() => box.open(sealed, 'account:other:secret'));
    expect(error).toBeInstanceOf(SecretKeyError);
    expect(error.message).toContain('secret of account other');
    expect(error.message).not.toContain(PLAINTEXT);
  });

  it('names HIRESYNC_SECRET_KEY and the key id, never a key, when no configured key sealed the value', () => {
    const sealed = new SecretBox([OLD]).seal(PLAINTEXT, PURPOSE);
    const error = errorOf(() => new SecretBox([NEW]).open(sealed, PURPOSE));
    expect(error).toBeInstanceOf(SecretKeyError);
    expect(error.message).toContain('HIRESYNC_SECRET_KEY');
    expect(error.message).toContain(keyId(OLD));
    for (const key of [OLD, NEW]) {
      expect(error.message).not.toContain(key.toString('hex'));
      expect(error.message).not.toContain(key.toString('base64'));
    }
    expect(error.message).not.toContain(PLAINTEXT);
  });

  it('refuses a damaged value and a value that is not sealed at all', () => {
    const box = new SecretBox([NEW]);
    const parts = box.seal(PLAINTEXT, PURPOSE).split('.');
    const body = Buffer.from(parts[3] ?? '', 'base64url');
    body[0] = (body[0] ?? 0) ^ 1;
    parts[3] = body.toString('base64url');
    expect(() => box.open(parts.join('.'), PURPOSE)).toThrow(SecretKeyError);
    const plain = errorOf(() => box.open(PLAINTEXT, PURPOSE));
    expect(plain).toBeInstanceOf(SecretKeyError);
    expect(plain.message).not.toContain(PLAINTEXT);
  });
});
