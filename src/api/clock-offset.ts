/**
 * The offset between the API's clock and the pacer's (Redis time), estimated
 * over many responses. A response's `Date` names the whole second the API
 * answered in, and the API answered between the request's send time and its
 * receipt here, so each response bounds the offset (API time − ours):
 *
 *   Date − received  ≤  offset  <  Date + 1 s − sent
 *
 * The estimate keeps the tightest bounds seen: the largest lower bound and
 * the smallest upper bound. One response bounds the offset to within a second
 * (plus its round trip); a response answered just after the API's second
 * turned bounds it to within its round trip, and many responses at different
 * moments of the second soon include one. An `X-RateLimit-Reset` in epoch
 * seconds is then waited for on our clock, at Reset − the lower bound: never
 * before the API's instant, and late by at most the bounds' gap.
 *
 * Clocks drift: each bound widens by {@link DRIFT_PER_MS} per millisecond of
 * its age, so an old bound gives way to newer ones. A response whose own
 * bounds contradict the stored ones at all (its upper bound below their lower,
 * or its lower above their upper) proves them wrong — a clock was set, even
 * by less than a second — so they are dropped at once for the response's own.
 *
 * src/redis/scripts/pace-observe-3.lua applies the same rule to the state
 * all processes of a credential share (fields offsetLo, offsetLoAt, offsetHi,
 * offsetHiAt); this module is that rule as a pure function.
 */

/** How fast a bound widens with age: 100 ppm, more than a clock's usual drift. */
export const DRIFT_PER_MS = 1e-4;

/** The bounds of the offset (API clock − ours, ms) and when each was learned (our clock). */
export interface ClockOffset {
  lo: number;
  loAt: number;
  hi: number;
  hiAt: number;
}

/** One response: its `Date` (epoch ms of the whole second) and when it was sent and received (our clock). */
export interface DatedResponse {
  dateMs: number;
  sentAt: number;
  receivedAt: number;
}

/** The lower bound as it stands at `now`, widened for its age. */
export function lowerBoundAt(offset: ClockOffset, now: number): number {
  return offset.lo - Math.floor(Math.max(0, now - offset.loAt) * DRIFT_PER_MS);
}

/** The upper bound as it stands at `now`, widened for its age. */
export function upperBoundAt(offset: ClockOffset, now: number): number {
  return offset.hi + Math.floor(Math.max(0, now - offset.hiAt) * DRIFT_PER_MS);
}

/** The estimate after one more response (`previous` undefined: the first). */
export function nextClockOffset(
  previous: ClockOffset | undefined,
  response: DatedResponse,
): ClockOffset {
  const { dateMs, sentAt, receivedAt } = response;
  const own: ClockOffset = {
    lo: dateMs - receivedAt,
    loAt: receivedAt,
    hi: dateMs + 1000 - sentAt,
    hiAt: receivedAt,
  };
  if (!previous) return own;
  const lo = lowerBoundAt(previous, receivedAt);
  const hi = upperBoundAt(previous, receivedAt);
  // Contradicting bounds: the stored ones are wrong (a clock was set), whatever the amount.
  if (own.lo > hi || own.hi < lo) return own;
  const next = { ...previous };
  if (own.lo > lo) {
    next.lo = own.lo;
    next.loAt = receivedAt;
  }
  if (own.hi < hi) {
    next.hi = own.hi;
    next.hiAt = receivedAt;
  }
  return next;
}

/** The estimate over `responses` in order; undefined when there are none. */
export function clockOffsetOf(responses: readonly DatedResponse[]): ClockOffset | undefined {
  return responses.reduce<ClockOffset | undefined>(nextClockOffset, undefined);
}

/**
 * When, on our clock, the API's instant `apiMs` (e.g. an epoch
 * `X-RateLimit-Reset`) comes: never before it, whatever the offset within
 * the bounds (`offset` undefined: the clocks are taken to agree).
 */
export function localInstantOf(
  apiMs: number,
  offset: ClockOffset | undefined,
  now: number,
): number {
  return offset ? apiMs - lowerBoundAt(offset, now) : apiMs;
}
