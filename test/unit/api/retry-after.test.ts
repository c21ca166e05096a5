import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../../src/api/retry-after.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('7', NOW)).toBe(7000);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
  });

  it('reads very long waits without capping them', () => {
    expect(parseRetryAfter('86400', NOW)).toBe(86_400_000);
  });

  it('reads fractional seconds leniently, rounding up', () => {
    expect(parseRetryAfter('1.5', NOW)).toBe(1500);
  });

  it('reads an HTTP-date in the future', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 12:00:30 GMT', NOW)).toBe(30_000);
  });

  it('treats an HTTP-date in the past as no wait', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 11:59:00 GMT', NOW)).toBe(0);
  });

  it('reads the first value of a repeated header', () => {
    expect(parseRetryAfter(['3', '9'], NOW)).toBe(3000);
  });

  it('returns undefined for absent, empty, negative or unreadable values', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter('', NOW)).toBeUndefined();
    expect(parseRetryAfter('-5', NOW)).toBeUndefined();
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
    expect(parseRetryAfter('Someday, 99 Foo 2026', NOW)).toBeUndefined();
  });

  it('reads a number above 10^9 as Unix epoch seconds', () => {
    expect(parseRetryAfter(String(NOW / 1000 + 30), NOW)).toBe(30_000);
    expect(parseRetryAfter(String(NOW / 1000 - 30), NOW)).toBe(0);
    expect(parseRetryAfter('1000000000', NOW)).toBe(1_000_000_000_000);
  });
});
