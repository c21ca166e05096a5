import { describe, expect, it } from 'vitest';
import {
  FixedWindow,
  rateLimitHeaders,
  retryAfterValue,
} from '../../../src/simulator/rate-limiter.js';

/** An epoch time in ms, as `Date.now()` gives. */
const T = 1_700_000_000_000;

describe('the simulator fixed window', () => {
  it('aligned on the epoch, ends each window on a multiple of its length and states that end as epoch seconds', () => {
    const window = new FixedWindow({ limit: 2, windowMs: 2_000 }, true);
    const served = window.take(T + 1_300);
    expect(served).toEqual({ allowed: true, remaining: 1, resetMs: 700 });
    if (!served.allowed) throw new Error('refused');
    expect(
      rateLimitHeaders(window, served, true, { format: 'epoch', now: T + 1_300, clockSkewMs: 0 }),
    ).toEqual({
      'x-ratelimit-remaining': '1',
      'x-ratelimit-limit': '2',
      'x-ratelimit-reset': String((T + 2_000) / 1000),
    });
    expect(
      rateLimitHeaders(window, served, true, {
        format: 'epoch-ms',
        now: T + 1_300,
        clockSkewMs: 0,
      }),
    ).toMatchObject({
      'x-ratelimit-reset': ((T + 2_000) / 1000).toFixed(3),
    });
    expect(window.take(T + 2_100)).toEqual({ allowed: true, remaining: 1, resetMs: 1_900 });
  });

  it('serves the limit, then refuses until the window that opened with the first request ends', () => {
    const window = new FixedWindow({ limit: 2, windowMs: 10_000 });
    expect(window.take(T + 1_000)).toEqual({ allowed: true, remaining: 1, resetMs: 10_000 });
    expect(window.take(T + 3_500)).toEqual({ allowed: true, remaining: 0, resetMs: 7_500 });
    expect(window.take(T + 9_100)).toEqual({ allowed: false, retryAfterS: 2 });
    expect(window.take(T + 11_000)).toEqual({ allowed: true, remaining: 1, resetMs: 10_000 });
  });

  it('opens the next window with the first request after the last one closed, not on a fixed grid', () => {
    const window = new FixedWindow({ limit: 1, windowMs: 1_000 });
    window.take(T);
    expect(window.take(T + 5_300)).toEqual({ allowed: true, remaining: 0, resetMs: 1_000 });
    expect(window.take(T + 6_000)).toEqual({ allowed: false, retryAfterS: 1 });
  });
});

describe('Retry-After of a simulator 429', () => {
  it('states seconds (never negative), an HTTP date or epoch seconds', () => {
    expect(retryAfterValue(3, 'seconds')).toBe('3');
    expect(retryAfterValue(-2, 'seconds')).toBe('0');
    expect(Date.parse(retryAfterValue(60, 'http-date'))).toBeGreaterThan(Date.now());
    expect(Number(retryAfterValue(60, 'epoch'))).toBeGreaterThan(Date.now() / 1000);
  });
});
