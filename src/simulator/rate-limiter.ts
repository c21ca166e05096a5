import type { ServerResponse } from 'node:http';
import { json } from './http-messages.js';

/** A fixed window of `limit` list requests per `windowMs`. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/**
 * How `X-RateLimit-Reset` states the window's end: `seconds` until it (to the
 * millisecond); `epoch`: Unix epoch seconds, the windows then aligned on the
 * epoch (a window of whole seconds ends on a whole second); `epoch-ms`: Unix
 * epoch seconds to the millisecond (`1764121234.567`), each window opening
 * with the first request after the last one closed.
 */
export type RateLimitResetFormat = 'seconds' | 'epoch' | 'epoch-ms';

/** How a 429's Retry-After states its wait. */
export type RetryAfterFormat = 'seconds' | 'http-date' | 'epoch';

/** What counting one request against a {@link FixedWindow} decided. */
export type WindowDecision =
  /** Served: `remaining` requests left in the window, which resets in `resetMs`. */
  | { allowed: true; remaining: number; resetMs: number }
  /** Refused: the window resets in `retryAfterS` seconds (rounded up). */
  | { allowed: false; retryAfterS: number };

/**
 * A fixed window of {@link RateLimit.limit} requests that opens with the
 * first request after the last one closed.
 */
export class FixedWindow {
  #start = 0;
  #count = 0;

  /** `aligned`: windows begin at multiples of the window's length since the epoch. */
  constructor(
    readonly rate: RateLimit,
    readonly aligned = false,
  ) {}

  /** Counts a request made at `now` (epoch ms), unless the window is spent. */
  take(now: number): WindowDecision {
    const { limit, windowMs } = this.rate;
    if (now >= this.#start + windowMs) {
      this.#start = this.aligned ? now - (now % windowMs) : now;
      this.#count = 0;
    }
    const resetMs = this.#start + windowMs - now;
    if (this.#count >= limit) return { allowed: false, retryAfterS: Math.ceil(resetMs / 1000) };
    this.#count += 1;
    return { allowed: true, remaining: limit - this.#count, resetMs };
  }
}

/**
 * The `X-RateLimit-*` headers of a served request: Remaining always, Limit
 * and Reset when `full`. Reset is the seconds until the window resets, to the
 * millisecond (`seconds`, the default), or the Unix epoch second it resets at
 * (`epoch`, rounded up; `epoch-ms`: to the millisecond), on a clock
 * `clockSkewMs` ahead of `now`.
 */
export function rateLimitHeaders(
  window: FixedWindow,
  served: { remaining: number; resetMs: number },
  full: boolean,
  reset: { format: RateLimitResetFormat; now: number; clockSkewMs: number } = {
    format: 'seconds',
    now: 0,
    clockSkewMs: 0,
  },
): Record<string, string> {
  const headers: Record<string, string> = { 'x-ratelimit-remaining': String(served.remaining) };
  if (full) {
    headers['x-ratelimit-limit'] = String(window.rate.limit);
    headers['x-ratelimit-reset'] =
      reset.format === 'epoch'
        ? String(Math.ceil((reset.now + reset.clockSkewMs + served.resetMs) / 1000))
        : reset.format === 'epoch-ms'
          ? ((reset.now + reset.clockSkewMs + served.resetMs) / 1000).toFixed(3)
          : (served.resetMs / 1000).toFixed(3);
  }
  return headers;
}

/** The Retry-After value of a wait of `retryAfterS` seconds from now, in `format`. */
export function retryAfterValue(retryAfterS: number, format: RetryAfterFormat): string {
  return format === 'http-date'
    ? new Date(Date.now() + retryAfterS * 1000).toUTCString()
    : format === 'epoch'
      ? String(Math.floor(Date.now() / 1000) + retryAfterS)
      : String(Math.max(0, retryAfterS));
}

/**
 * Answers 429 with `Retry-After`, and, when `limit` is given,
 * `X-RateLimit-Limit` and `X-RateLimit-Remaining: 0`.
 */
export function sendTooManyRequests(
  res: ServerResponse,
  retryAfterS: number,
  format: RetryAfterFormat,
  limit?: number,
): void {
  const headers: Record<string, string> = { 'retry-after': retryAfterValue(retryAfterS, format) };
  if (limit !== undefined) {
    headers['x-ratelimit-limit'] = String(limit);
    headers['x-ratelimit-remaining'] = '0';
  }
  json(res, 429, { message: 'Too Many Requests' }, headers);
}
