import { EPOCH_SECONDS_THRESHOLD } from './retry-after.js';

/**
 * The largest allowance or limit recorded. Redis keeps it as a 64-bit integer
 * (HINCRBY), and Lua would turn a larger number into `1e+20`, which HINCRBY
 * refuses; no real window holds more requests than this.
 */
export const MAX_REMAINING = 1_000_000_000;

/** A `X-RateLimit-Reset` further ahead than this is absurd and ignored. */
export const MAX_RESET_MS = 86_400_000;

/** What a response's `X-RateLimit-*` headers said, each sane or absent. */
export interface RateLimitHeaders {
  /** `X-RateLimit-Remaining`: a whole number, 0..{@link MAX_REMAINING}. */
  remaining?: number;
  /** `X-RateLimit-Limit`: a whole number, 1..{@link MAX_REMAINING}. */
  limit?: number;
  /** `X-RateLimit-Reset` given as seconds until the window resets, in milliseconds. */
  resetInMs?: number;
  /**
   * `X-RateLimit-Reset` given as Unix epoch seconds (above 10^9), in epoch
   * milliseconds of the API's clock (the pacer converts it to its own clock
   * with the offset estimated from `Date` headers: clock-offset.ts).
   */
  resetAtMs?: number;
  /** The response's `Date` (a whole second of the API's clock), in epoch ms. */
  dateMs?: number;
}

function numberOf(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(trimmed)) return undefined;
  const n = Number(trimmed);
  return Number.isNaN(n) ? undefined : n;
}

/**
 * A header's number. A header sent twice arrives joined (`2, 2`): the
 * smallest value counts (the most cautious allowance or the earliest reset).
 */
function numberIn(value: string | readonly string[] | undefined): number | undefined {
  const texts = (Array.isArray(value) ? value : [value as string | undefined])
    .filter((v): v is string => typeof v === 'string')
    .flatMap((v) => v.split(','));
  const numbers = texts.map(numberOf).filter((n): n is number => n !== undefined);
  return numbers.length === 0 ? undefined : Math.min(...numbers);
}

/** A `Date` header in ms, or undefined. */
function dateOf(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Reads `X-RateLimit-Remaining`, `-Limit` and `-Reset`, clamping absurd values
 * instead of failing: a negative or fractional allowance counts as its whole
 * part at least 0, a huge one as {@link MAX_REMAINING} (plenty); a limit below
 * 1 is dropped; a Reset above 10^9 is epoch seconds (kept with the `Date`
 * it is to be read against), else seconds from now (fractions kept), and one
 * negative, past or more than a day ahead is dropped.
 */
export function readRateLimitHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  nowMs: number = Date.now(),
): RateLimitHeaders {
  const out: RateLimitHeaders = {};
  const remaining = numberIn(headers['x-ratelimit-remaining']);
  if (remaining !== undefined) {
    out.remaining = Math.min(Math.max(0, Math.floor(remaining)), MAX_REMAINING);
  }
  const limit = numberIn(headers['x-ratelimit-limit']);
  if (limit !== undefined && limit >= 1) out.limit = Math.min(Math.floor(limit), MAX_REMAINING);
  const reset = numberIn(headers['x-ratelimit-reset']);
  if (reset !== undefined && reset >= 0) {
    if (reset > EPOCH_SECONDS_THRESHOLD) {
      const at = Math.ceil(reset * 1000);
      // Judged against the API's own clock (its Date header) when it sends one.
      const serverNow = dateOf(headers.date);
      const inMs = at - (serverNow ?? nowMs);
      if (inMs <= MAX_RESET_MS && (serverNow === undefined || inMs > -1000)) {
        out.resetAtMs = at;
        if (serverNow !== undefined) out.dateMs = serverNow;
      }
    } else if (reset * 1000 <= MAX_RESET_MS) {
      out.resetInMs = Math.ceil(reset * 1000);
    }
  }
  return out;
}
