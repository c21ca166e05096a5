import { describe, expect, it } from 'vitest';
import {
  type ClockOffset,
  lowerBoundAt,
  nextClockOffset,
  upperBoundAt,
} from '../../../src/api/clock-offset.js';
import { edgeProbeHoldMs, nextEdgeInterval } from '../../../src/api/second-edge.js';

/** Our clock's start (a whole second). */
const T0 = Date.parse('2026-11-26T12:00:00Z');
const LIMIT = 20;
const WINDOW_MS = 2000;
const RTT = 10;

interface Api {
  /** The API's clock less ours at our instant `at`. */
  offsetAt: (at: number) => number;
  /** How late the Date header ticks over (a cached header renewed by a late timer). */
  staleMs?: number;
}

interface Walk {
  /** Requests refused for a spent window. */
  refused: number;
  /** The offset's bounds after each answer, with the true offset then. */
  bounds: Array<{ lo: number; hi: number; truth: number }>;
  /** How long after the API's window opened each window's first request reached it. */
  joinedLate: number[];
  /** Holds the policy asked for. */
  holds: number[];
}

/**
 * A walk of `requests` sequential requests against an API with a fixed window
 * of 20 requests / 2 s aligned on its own clock and an epoch Reset, paced as
 * the pacer does: a spent window waited for until Reset − the offset's lower
 * bound, and (with `holds`) each request held as edgeProbeHoldMs says.
 */
function walk(api: Api, requests: number, holds: boolean, startAt = 0): Walk {
  const result: Walk = { refused: 0, bounds: [], joinedLate: [], holds: [] };
  const counts = new Map<number, number>();
  let offset: ClockOffset | undefined;
  let resetAt = 0;
  let remaining = LIMIT;
  let now = T0 + startAt;
  for (let sent = 0; sent < requests; ) {
    if (offset && remaining === 0 && now < resetAt) now = resetAt;
    if (offset && remaining > 0 && now < resetAt && holds) {
      const hold = edgeProbeHoldMs({
        offset,
        now,
        resetAt,
        requestsLeft: remaining,
        stepMs: RTT,
        rttMs: RTT,
      });
      if (hold > 0) {
        result.holds.push(hold);
        now += hold;
      }
    }
    const answeredAt = now + RTT / 2;
    const apiNow = answeredAt + api.offsetAt(answeredAt);
    const window = Math.floor(apiNow / WINDOW_MS);
    const count = counts.get(window) ?? 0;
    if (count === 0 && sent > 0) result.joinedLate.push(apiNow - window * WINDOW_MS);
    const received = now + RTT;
    if (count >= LIMIT) {
      result.refused += 1;
      now = received + WINDOW_MS;
      continue;
    }
    counts.set(window, count + 1);
    sent += 1;
    const dated = apiNow - (api.staleMs ?? 0);
    offset = nextClockOffset(offset, {
      dateMs: dated - (((dated % 1000) + 1000) % 1000),
      sentAt: now,
      receivedAt: received,
    });
    result.bounds.push({
      lo: lowerBoundAt(offset, received),
      hi: upperBoundAt(offset, received),
      truth: api.offsetAt(answeredAt),
    });
    remaining = LIMIT - count - 1;
    resetAt = (window + 1) * WINDOW_MS - lowerBoundAt(offset, received);
    now = received;
  }
  return result;
}

const last = <T>(items: T[]): T => items[items.length - 1] as T;

describe("the API's second edge learned from Date ticks", () => {
  it('bounds the edge between the send of the last ":00" answer and the receipt of the first ":01" one', () => {
    // "…:00" answered to a request sent at t1 = 100 ms, "…:01" received at t2 = 950 ms.
    let offset = nextClockOffset(undefined, { dateMs: T0, sentAt: T0 + 100, receivedAt: T0 + 110 });
    offset = nextClockOffset(offset, { dateMs: T0 + 1000, sentAt: T0 + 940, receivedAt: T0 + 950 });
    // The edge seen fell in (t1, t2]; the next one comes a second later, as far apart.
    expect(nextEdgeInterval(offset, T0 + 960)).toEqual({ from: T0 + 1100, to: T0 + 1950 });
  });

  it.each([0, 137, 450, 777, 990])(
    'narrows the edge to within 80 ms in the first window when held requests spread over it (API clock %i ms ahead)',
    (apiAhead) => {
      const spread = walk({ offsetAt: () => apiAhead }, LIMIT, true);
      const { lo, hi, truth } = last(spread.bounds);
      expect(hi - lo).toBeLessThanOrEqual(80);
      expect(lo).toBeLessThanOrEqual(truth);
      expect(hi).toBeGreaterThanOrEqual(truth);
    },
  );

  it("leaves the edge unknown within most of a second when the window's requests go back to back", () => {
    const bunched = walk({ offsetAt: () => 450 }, LIMIT, false);
    const { lo, hi } = last(bunched.bounds);
    expect(hi - lo).toBeGreaterThan(500);
  });

  it.each([0, 137, 450, 777, 990])(
    'joins every window from the third on within 80 ms of its opening, with no request refused (API clock %i ms ahead)',
    (apiAhead) => {
      // Started late in its first window (at most 700 ms left): the first window may have no time to spare.
      const result = walk({ offsetAt: () => apiAhead }, 200, true, 300);
      expect(result.refused).toBe(0);
      expect(result.joinedLate).toHaveLength(9);
      for (const late of result.joinedLate.slice(1)) expect(late).toBeLessThanOrEqual(80);
    },
  );

  it.each([5, 40, 300])(
    'never sends early enough to be refused when the Date header ticks over %i ms late (a stale or cached Date)',
    (staleMs) => {
      for (const apiAhead of [0, 137, 450, 990]) {
        const result = walk({ offsetAt: () => apiAhead, staleMs }, 200, true, 300);
        expect(result.refused).toBe(0);
        for (const { lo, truth } of result.bounds) expect(lo).toBeLessThanOrEqual(truth);
      }
    },
  );

  it('never sends early enough to be refused when the API clock steps 400 ms ahead mid-walk', () => {
    const api = { offsetAt: (at: number) => (at < T0 + 7_300 ? 137 : 537) };
    const result = walk(api, 200, true, 300);
    expect(result.refused).toBe(0);
    for (const { lo, truth } of result.bounds) expect(lo).toBeLessThanOrEqual(truth);
    const { lo, hi } = last(result.bounds);
    expect(hi - lo).toBeLessThanOrEqual(80);
  });

  it('is refused no more often than without holds after the API clock steps back (its window then ends later than it said)', () => {
    for (const stepAt of [3_300, 7_300, 12_000]) {
      for (const back of [30, 137, 400, 900]) {
        const api = { offsetAt: (at: number) => (at < T0 + stepAt ? 537 : 537 - back) };
        const held = walk(api, 200, true, 300);
        const unheld = walk(api, 200, false, 300);
        expect(held.refused).toBeLessThanOrEqual(unheld.refused);
        expect(held.refused).toBeLessThanOrEqual(1);
      }
    }
  });

  it('drops bounds a step back contradicts and learns the new edge without a lower bound above the truth', () => {
    const api = { offsetAt: (at: number) => (at < T0 + 7_300 ? 537 : 137) };
    const result = walk(api, 200, true, 300);
    const dropped = result.bounds.findIndex(
      (b, i) => i > 0 && b.lo < (result.bounds[i - 1] as { lo: number }).lo,
    );
    expect(dropped).toBeGreaterThan(0);
    for (const { lo, truth } of result.bounds.slice(dropped)) expect(lo).toBeLessThanOrEqual(truth);
    const { lo, hi } = last(result.bounds);
    expect(hi - lo).toBeLessThanOrEqual(80);
  });
});

describe('a request held for the second edge', () => {
  const wide: ClockOffset = { lo: -1000, loAt: T0, hi: 0, hiAt: T0 };
  const base = { offset: wide, now: T0 + 10, requestsLeft: 19, stepMs: 10, rttMs: 10 };

  it('is held to its share of the interval while the window has time to spare', () => {
    // The edge falls between T0 and T0 + 1000 ms; 19 requests share it: 50 ms each.
    expect(edgeProbeHoldMs({ ...base, resetAt: T0 + 2300 })).toBe(35);
  });

  it('is not held when the hold would push the window past the earliest its end may come', () => {
    expect(edgeProbeHoldMs({ ...base, resetAt: T0 + 1200 })).toBe(0);
  });

  it('is not held once the bounds are within a few round trips', () => {
    const tight: ClockOffset = { lo: 100, loAt: T0, hi: 118, hiAt: T0 };
    expect(edgeProbeHoldMs({ ...base, offset: tight, resetAt: T0 + 5000 })).toBe(0);
  });

  it('is not held most of a second for an edge beyond the interval at hand', () => {
    // The edge is known to within 100 ms and has just passed: the next is a second away.
    const narrow: ClockOffset = { lo: -160, loAt: T0, hi: -60, hiAt: T0 };
    expect(edgeProbeHoldMs({ ...base, offset: narrow, now: T0 + 200, resetAt: T0 + 9000 })).toBe(0);
  });
});
