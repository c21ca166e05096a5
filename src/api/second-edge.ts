/**
 * Where the API's second begins on our clock, learned from the moments its
 * `Date` headers tick over, and when to send a request so that they tick
 * between two answers close together.
 *
 * An epoch `X-RateLimit-Reset` is waited for at Reset − the offset's lower
 * bound (clock-offset.ts), so a window is joined late by the gap between the
 * offset's bounds. That gap is where the API's second edge may lie: a `Date`
 * of second D answered after our instant s puts the edge (D + 1 s on the API's
 * clock) after s, and a `Date` of D + 1 s received at r puts it at or before
 * r. Requests bunched at the start of a window (20 in 200 ms) rarely straddle
 * an edge, and the gap stays near a second. When the window has time to
 * spare, its requests are spread instead over the interval where the next
 * edge may fall, each held (never longer than half the bounds' gap) until its
 * share of the interval: each answer either shows the tick (the edge lies
 * between it and the answer before: the next edge, a second later, is known
 * to within that spacing plus a round trip) or moves the interval's start up
 * to its own send time. With 20 requests a window that is done within the
 * first second, to about 50 ms.
 *
 * A hold only delays a request, and only while what the window still allows
 * fits before its earliest possible end; the bounds themselves stay those of
 * clock-offset.ts, so a stale `Date` (one that ticks over late) only widens them
 * and a clock step is caught as contradicting bounds, as there.
 *
 * src/redis/scripts/pace-acquire-3.lua applies the same rule to the shared
 * state; this module is that rule as a pure function.
 */
import { type ClockOffset, lowerBoundAt, upperBoundAt } from './clock-offset.js';

/** A gap between the offset's bounds this small is not worth holding requests for. */
export const PRECISE_MS = 20;

/** Time kept spare before a window's earliest end beyond twice what its remaining requests take. */
export const SLACK_MS = 50;

/** Where the next API second edge may fall on our clock: from `from` to `to` (the latest). */
export interface EdgeInterval {
  from: number;
  to: number;
}

/**
 * The interval of our clock where the API's next second edge may fall: the
 * first whose latest instant is still ahead of `now` (it may have begun).
 */
export function nextEdgeInterval(offset: ClockOffset, now: number): EdgeInterval {
  const lo = lowerBoundAt(offset, now);
  const gap = upperBoundAt(offset, now) - lo;
  // Edges are at our instants k·1000 − offset, the offset between lo and hi.
  const to = (Math.floor((now + lo) / 1000) + 1) * 1000 - lo;
  return { from: to - gap, to };
}

/** What {@link edgeProbeHoldMs} weighs. */
export interface EdgeProbeInput {
  /** The offset's bounds learned so far (Date headers, clock-offset.ts). */
  offset: ClockOffset;
  now: number;
  /** The current window's end as waited for (Reset − the offset's lower bound). */
  resetAt: number;
  /** Requests the window still allows (the reserve left out), this one included. */
  requestsLeft: number;
  /** What one request is expected to take: its round trip and the caller's work between two. */
  stepMs: number;
  /** A request's round trip (sent to answered, on our clock). */
  rttMs: number;
}

/**
 * How long to hold a request so that its answer lands at its share of the
 * interval of the next API second edge (0: send it now). Nothing is held
 * once the bounds are as tight as round trips allow, nor for longer than half
 * their gap, nor when the hold would push the window's remaining requests
 * past the earliest instant its end may come.
 */
export function edgeProbeHoldMs(input: EdgeProbeInput): number {
  const { offset, now, resetAt, requestsLeft, stepMs, rttMs } = input;
  const gap = upperBoundAt(offset, now) - lowerBoundAt(offset, now);
  if (gap <= Math.max(PRECISE_MS, 2 * stepMs)) return 0;
  // The window's requests spread evenly over the interval, its edge unknown within it.
  const edge = nextEdgeInterval(offset, now);
  const spacing = Math.min(gap, 1000) / (requestsLeft + 1);
  const hold = Math.ceil(edge.from + spacing - rttMs / 2 - now);
  // Only the interval at hand is searched: waiting most of a second for the next one costs a
  // caller with few requests left more than the narrower bounds would save it.
  if (hold <= 0 || hold > gap / 2) return 0;
  // The window's end is stated on the API's clock: it may come as early as the upper bound says.
  // A request slipping past it would spend the next window's allowance: twice the time expected.
  const earliestEnd = resetAt - gap;
  return now + hold + 2 * requestsLeft * stepMs + SLACK_MS <= earliestEnd ? hold : 0;
}
