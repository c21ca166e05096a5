import { describe, expect, it } from 'vitest';
import {
  decideRetry,
  FIRST_TRY,
  type RetryDecision,
  type RetryRules,
  type RetryState,
  type TryResult,
} from '../../../src/api/retry-decision.js';

const NOW = Date.parse('2026-05-04T12:00:00Z');
const RULES: RetryRules = { maxRetries: 2, defaultRetryAfterMs: 10_000, maxRetryAfterMs: 60_000 };
/** The jitter at its top: the backoff is its full bound. */
const TOP = () => 0.999_999_999;

const answer = (status: number, headers: Record<string, string> = {}): TryResult => ({
  status,
  headers,
});
const state = (s: Partial<RetryState> = {}): RetryState => ({ ...FIRST_TRY, ...s });

describe('decideRetry: what one try of a request leads to', () => {
  it.each<[string, TryResult, RetryState, RetryRules, RetryDecision]>([
    ['a 200 goes to the caller', answer(200), state(), RULES, { action: 'accept' }],
    ['a 404 goes to the caller', answer(404), state(), RULES, { action: 'accept' }],
    ['a 422 goes to the caller', answer(422), state(), RULES, { action: 'accept' }],
    ['a redirect goes to the caller', answer(302), state(), RULES, { action: 'accept' }],
    [
      'a 401 goes to the caller when no token can be renewed (the token endpoint)',
      answer(401),
      state(),
      RULES,
      { action: 'accept' },
    ],
    [
      'a first 401 renews the token',
      answer(401),
      state(),
      { ...RULES, renewTokenOn401: true },
      { action: 'renew-token' },
    ],
    [
      'a 401 after the renewal goes to the caller',
      answer(401),
      state({ renewed: true }),
      { ...RULES, renewTokenOn401: true },
      { action: 'accept' },
    ],
    [
      "a 429 waits its Retry-After's seconds",
      answer(429, { 'retry-after': '7' }),
      state(),
      RULES,
      { action: 'wait-rate-limit', waitMs: 7000, retryAfterMs: 7000 },
    ],
    [
      "a 429 waits until its Retry-After's HTTP-date",
      answer(429, { 'retry-after': 'Mon, 04 May 2026 12:00:30 GMT' }),
      state(),
      RULES,
      { action: 'wait-rate-limit', waitMs: 30_000, retryAfterMs: 30_000 },
    ],
    [
      'a 429 without Retry-After waits the rate-limit window',
      answer(429),
      state(),
      RULES,
      { action: 'wait-rate-limit', waitMs: 10_000, retryAfterMs: undefined },
    ],
    [
      'a second 429 in a row waits at least the window, whatever Retry-After says',
      answer(429, { 'retry-after': '0' }),
      state({ rateLimited: 1 }),
      RULES,
      { action: 'wait-rate-limit', waitMs: 10_000, retryAfterMs: 0 },
    ],
    [
      'a third 429 in a row waits twice the window',
      answer(429, { 'retry-after': '1' }),
      state({ rateLimited: 2 }),
      RULES,
      { action: 'wait-rate-limit', waitMs: 20_000, retryAfterMs: 1000 },
    ],
    [
      'a 429 asking longer than HIRESYNC_MAX_RETRY_AFTER fails at once',
      answer(429, { 'retry-after': '61' }),
      state(),
      RULES,
      { action: 'fail', cause: 'retry-after-too-long', waitMs: 61_000 },
    ],
    [
      'repeated 429s fail once their doubling backoff passes HIRESYNC_MAX_RETRY_AFTER',
      answer(429, { 'retry-after': '1' }),
      state({ rateLimited: 4 }),
      RULES,
      { action: 'fail', cause: 'retry-after-too-long', waitMs: 80_000, inARow: 5 },
    ],
    [
      'a 503 retries after a jittered backoff (500 ms bound at first)',
      answer(503),
      state(),
      RULES,
      { action: 'retry', delayMs: 500, reason: '503' },
    ],
    [
      'a second failure doubles the bound',
      answer(500),
      state({ failures: 1 }),
      RULES,
      { action: 'retry', delayMs: 1000, reason: '500' },
    ],
    [
      'a network error retries like a 5xx, named by its code',
      { failed: 'ECONNRESET' },
      state(),
      RULES,
      { action: 'retry', delayMs: 500, reason: 'ECONNRESET' },
    ],
    [
      'a timeout retries like a 5xx',
      { failed: 'timeout' },
      state({ failures: 1 }),
      RULES,
      { action: 'retry', delayMs: 1000, reason: 'timeout' },
    ],
    [
      'failures past maxRetries give up',
      answer(502),
      state({ failures: 2 }),
      RULES,
      { action: 'fail', cause: 'retries-exhausted', failures: 3 },
    ],
    [
      'network failures past maxRetries give up',
      { failed: 'ECONNREFUSED' },
      state({ failures: 2 }),
      RULES,
      { action: 'fail', cause: 'retries-exhausted', failures: 3 },
    ],
  ])('%s', (_, result, before, rules, expected) => {
    expect(decideRetry(result, before, rules, { now: NOW, random: TOP }).decision).toEqual(
      expected,
    );
  });

  it('counts 429s in a row and failures apart, and starts both over after a token renewal', () => {
    const rules = { ...RULES, renewTokenOn401: true };
    const options = { now: NOW, random: TOP };
    let s = FIRST_TRY;
    s = decideRetry(answer(429), s, rules, options).state;
    s = decideRetry(answer(503), s, rules, options).state;
    expect(s).toEqual({ failures: 1, rateLimited: 1, renewed: false });
    s = decideRetry(answer(401), s, rules, options).state;
    expect(s).toEqual({ failures: 0, rateLimited: 0, renewed: true });
  });

  it('draws the backoff within its bound: never more, and as little as nothing', () => {
    const low = decideRetry(
      answer(503),
      state({ failures: 3 }),
      { ...RULES, maxRetries: 9 },
      {
        now: NOW,
        random: () => 0,
      },
    );
    expect(low.decision).toEqual({ action: 'retry', delayMs: 0, reason: '503' });
    const capped = decideRetry(
      answer(503),
      state({ failures: 20 }),
      { ...RULES, maxRetries: 99 },
      {
        now: NOW,
        random: TOP,
      },
    );
    expect(capped.decision).toEqual({ action: 'retry', delayMs: 30_000, reason: '503' });
  });
});
