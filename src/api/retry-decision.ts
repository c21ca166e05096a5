import { backoffDelay } from './http.js';
import { parseRetryAfter } from './retry-after.js';

/** The rules {@link decideRetry} applies (see SendOptions). */
export interface RetryRules {
  /** Retries after 5xx or network failures before giving up. */
  maxRetries: number;
  /**
   * Wait after a 429 without a readable Retry-After, and the least wait after
   * a second 429 in a row (doubling with each further one).
   */
  defaultRetryAfterMs: number;
  /** Longest wait a 429 may ask for (HIRESYNC_MAX_RETRY_AFTER). */
  maxRetryAfterMs: number;
  /** A 401 is answered by one token renewal and a retry; otherwise it goes to the caller. */
  renewTokenOn401?: boolean;
}

/** What the tries of one request have met so far. */
export interface RetryState {
  /** 5xx answers and network failures (not reset by a success of another kind). */
  failures: number;
  /** 429 answers in a row. */
  rateLimited: number;
  /** The token was renewed after a 401. */
  renewed: boolean;
}

/** The state before a request's first try. */
export const FIRST_TRY: RetryState = Object.freeze({ failures: 0, rateLimited: 0, renewed: false });

/** One try of a request: the answer's status and headers, or no answer (`failed`: `timeout` or the network error's code). */
export type TryResult =
  | { status: number; headers: Readonly<Record<string, string | string[] | undefined>> }
  | { failed: string };

/** What to do after a try. */
export type RetryDecision =
  /** The answer goes to the caller to judge (2xx, 4xx, a 401 after renewal, a redirect). */
  | { action: 'accept' }
  /** A 401: renew the access token and send again (the counts start over). */
  | { action: 'renew-token' }
  /** A 429: pause every peer for `waitMs`, then send the same request again. */
  | { action: 'wait-rate-limit'; waitMs: number; retryAfterMs: number | undefined }
  /** A 5xx or network failure: wait the jittered backoff `delayMs`, then send again. */
  | { action: 'retry'; delayMs: number; reason: string }
  /** The 5xx or network failures outlasted `maxRetries`. */
  | { action: 'fail'; cause: 'retries-exhausted'; failures: number }
  /**
   * A 429 asked for `waitMs`, longer than `maxRetryAfterMs`; `inARow` is set
   * when it is the doubling backoff of that many 429s in a row that did.
   */
  | { action: 'fail'; cause: 'retry-after-too-long'; waitMs: number; inARow?: number };

/**
 * The retry rules of the API spec as a pure function of one try's result and
 * the tries before it:
 * - 429 waits its Retry-After (else the rate-limit window); from the second
 *   429 in a row at least the window, doubling each time, so an API that
 *   answers `Retry-After: 0` forever is not hammered; a wait longer than
 *   `maxRetryAfterMs` fails;
 * - 5xx and network failures retry with jittered exponential backoff up to
 *   `maxRetries`;
 * - with `renewTokenOn401`, the first 401 renews the token;
 * - anything else is accepted, for the caller to judge.
 * `now` reads an HTTP-date Retry-After; `random` draws the jitter.
 */
export function decideRetry(
  result: TryResult,
  state: RetryState,
  rules: RetryRules,
  options: { now: number; random?: () => number },
): { decision: RetryDecision; state: RetryState } {
  const backoff = (failures: number) => backoffDelay(failures - 1, 500, 30_000, options.random);
  if ('failed' in result || result.status >= 500) {
    const failures = state.failures + 1;
    const next = { ...state, failures };
    if (failures > rules.maxRetries) {
      return { decision: { action: 'fail', cause: 'retries-exhausted', failures }, state: next };
    }
    const reason = 'failed' in result ? result.failed : String(result.status);
    return { decision: { action: 'retry', delayMs: backoff(failures), reason }, state: next };
  }
  if (result.status === 429) {
    const rateLimited = state.rateLimited + 1;
    const next = { ...state, rateLimited };
    const asked = parseRetryAfter(result.headers['retry-after'], options.now);
    let waitMs = asked ?? rules.defaultRetryAfterMs;
    if (waitMs > rules.maxRetryAfterMs) {
      return { decision: { action: 'fail', cause: 'retry-after-too-long', waitMs }, state: next };
    }
    if (rateLimited > 1) {
      // Repeated 429s: the API's Retry-After is not working; back off on our own,
      // and once that backoff passes the ceiling, end the attempt (the run
      // resumes from its checkpoint later) instead of waiting forever.
      const doubled = rules.defaultRetryAfterMs * 2 ** Math.min(rateLimited - 2, 30);
      if (doubled > rules.maxRetryAfterMs) {
        return {
          decision: {
            action: 'fail',
            cause: 'retry-after-too-long',
            waitMs: doubled,
            inARow: rateLimited,
          },
          state: next,
        };
      }
      waitMs = Math.max(waitMs, doubled);
    }
    return { decision: { action: 'wait-rate-limit', waitMs, retryAfterMs: asked }, state: next };
  }
  if (result.status === 401 && rules.renewTokenOn401 && !state.renewed) {
    return {
      decision: { action: 'renew-token' },
      state: { failures: 0, rateLimited: 0, renewed: true },
    };
  }
  return { decision: { action: 'accept' }, state };
}
