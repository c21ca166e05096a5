import { describe, expect, it } from 'vitest';
import { MAX_REMAINING, readRateLimitHeaders } from '../../../src/api/rate-limit-headers.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');

describe('readRateLimitHeaders', () => {
  it('reads Remaining, Limit and a Reset in seconds from now', () => {
    expect(
      readRateLimitHeaders(
        { 'x-ratelimit-remaining': '7', 'x-ratelimit-limit': '50', 'x-ratelimit-reset': '12' },
        NOW,
      ),
    ).toEqual({ remaining: 7, limit: 50, resetInMs: 12_000 });
  });

  it('keeps a fractional Reset to the millisecond, rounding up', () => {
    expect(readRateLimitHeaders({ 'x-ratelimit-reset': '1.2345' }, NOW)).toEqual({
      resetInMs: 1235,
    });
  });

  it('reads a Reset above 10^9 as Unix epoch seconds', () => {
    const epoch = NOW / 1000 + 30;
    expect(readRateLimitHeaders({ 'x-ratelimit-reset': String(epoch) }, NOW)).toEqual({
      resetAtMs: NOW + 30_000,
    });
  });

  it('keeps an epoch Reset on the API clock with the Date it is read against, however far our clock is', () => {
    const apiNow = NOW + 3_600_000; // the API's clock an hour ahead of ours
    expect(
      readRateLimitHeaders(
        {
          'x-ratelimit-reset': String(apiNow / 1000 + 2),
          date: new Date(apiNow).toUTCString(),
        },
        NOW,
      ),
    ).toEqual({ resetAtMs: apiNow + 2_000, dateMs: apiNow });
  });

  it('clamps absurd allowances instead of failing: huge is plenty, negative is none, fractions are cut', () => {
    const read = (value: string) =>
      readRateLimitHeaders({ 'x-ratelimit-remaining': value }, NOW).remaining;
    expect(read('100000000000000000000')).toBe(MAX_REMAINING);
    expect(read('1e400')).toBe(MAX_REMAINING);
    expect(read('-3')).toBe(0);
    expect(read('2.9')).toBe(2);
    expect(read('many')).toBeUndefined();
    expect(read('')).toBeUndefined();
  });

  it('drops a limit below 1 and caps a huge one', () => {
    const read = (value: string) => readRateLimitHeaders({ 'x-ratelimit-limit': value }, NOW).limit;
    expect(read('0')).toBeUndefined();
    expect(read('-50')).toBeUndefined();
    expect(read('1e20')).toBe(MAX_REMAINING);
    expect(read('10.7')).toBe(10);
  });

  it('drops a Reset that is negative, unreadable, or more than a day ahead', () => {
    const read = (value: string) => readRateLimitHeaders({ 'x-ratelimit-reset': value }, NOW);
    expect(read('-1')).toEqual({});
    expect(read('soon')).toEqual({});
    expect(read('1e300')).toEqual({});
    expect(read('86401')).toEqual({});
    expect(read(String(NOW / 1000 + 2 * 86_400))).toEqual({});
    expect(read('0')).toEqual({ resetInMs: 0 });
  });

  it('reads the first of repeated headers', () => {
    expect(readRateLimitHeaders({ 'x-ratelimit-remaining': ['4', '9'] }, NOW)).toEqual({
      remaining: 4,
    });
  });
});
