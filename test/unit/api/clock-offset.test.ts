import { describe, expect, it } from 'vitest';
import {
  type ClockOffset,
  clockOffsetOf,
  type DatedResponse,
  DRIFT_PER_MS,
  localInstantOf,
  lowerBoundAt,
  nextClockOffset,
} from '../../../src/api/clock-offset.js';

/** Our clock's start; the API's clock runs `offset` ms ahead of ours. */
const T0 = Date.parse('2026-11-26T12:00:00Z');

/**
 * A response answered by the API at our time `answeredAt` (ms after T0), sent
 * `rtt / 2` before and received `rtt / 2` after: its Date is the API's whole second.
 */
function response(answeredAt: number, offset: number, rtt = 10): DatedResponse {
  const apiNow = T0 + answeredAt + offset;
  return {
    dateMs: apiNow - (apiNow % 1000),
    sentAt: T0 + answeredAt - rtt / 2,
    receivedAt: T0 + answeredAt + rtt / 2,
  };
}

describe('the clock offset estimated from Date headers', () => {
  it.each([
    { offset: 0, answeredAt: [400], lo: -405, hi: 605 },
    { offset: 0, answeredAt: [400, 1_003], lo: -8, hi: 605 },
    { offset: 250, answeredAt: [100, 745, 1_760], lo: 235, hi: 260 },
    { offset: -3_600_000, answeredAt: [10, 2_995], lo: -3_600_015, hi: -3_599_990 },
  ])(
    'bounds an offset of $offset ms between the tightest bounds of answers at $answeredAt',
    ({ offset, answeredAt, lo, hi }) => {
      const estimate = clockOffsetOf(answeredAt.map((at) => response(at, offset))) as ClockOffset;
      expect(estimate.lo).toBe(lo);
      expect(estimate.hi).toBe(hi);
      expect(estimate.lo).toBeLessThanOrEqual(offset);
      expect(estimate.hi).toBeGreaterThanOrEqual(offset);
    },
  );

  it('never has a lower bound above the true offset, whatever the moments of the answers', () => {
    for (const offset of [-1_234, -1, 0, 1, 499, 500, 999, 7_000]) {
      const answers = Array.from({ length: 50 }, (_, i) =>
        response(i * 137 + (i % 7), offset, 2 + (i % 5)),
      );
      const estimate = clockOffsetOf(answers) as ClockOffset;
      expect(estimate.lo).toBeLessThanOrEqual(offset);
      expect(estimate.hi).toBeGreaterThanOrEqual(offset);
      // Answers at many moments of the second bound it to within a few hundredths of a second.
      expect(estimate.hi - estimate.lo).toBeLessThanOrEqual(50);
    }
  });

  it('converts an epoch Reset to our clock never before the API reaches it', () => {
    const offset = 700;
    const estimate = clockOffsetOf([response(50, offset), response(380, offset)]);
    const resetApi = T0 + 2_000 + offset;
    const local = localInstantOf(resetApi, estimate, T0 + 400);
    expect(local).toBeGreaterThanOrEqual(T0 + 2_000);
    // Without any estimate the clocks are taken to agree.
    expect(localInstantOf(resetApi, undefined, T0)).toBe(resetApi);
  });

  it('widens an old bound with its age, so that a drifting clock does not make waits end early', () => {
    const estimate = clockOffsetOf([response(0, 0), response(1_000, 0)]) as ClockOffset;
    expect(estimate).toMatchObject({ lo: -5, loAt: T0 + 5 });
    const hourLater = estimate.loAt + 3_600_000;
    expect(lowerBoundAt(estimate, hourLater)).toBe(-5 - 3_600_000 * DRIFT_PER_MS);
    // A newer answer's bound above the widened one replaces it, though below the old one.
    const next = nextClockOffset(estimate, response(3_600_003, 0));
    expect(next).toMatchObject({ lo: -8, loAt: T0 + 3_600_008 });
  });

  it('starts over from the newest answer when a clock was set by over a second', () => {
    const before = clockOffsetOf([response(0, 0), response(1_002, 0)]) as ClockOffset;
    const after = nextClockOffset(before, response(5_000, 60_000));
    expect(after.lo).toBeGreaterThan(59_000);
    expect(after.lo).toBeLessThanOrEqual(60_000);
    expect(after.hi).toBeGreaterThanOrEqual(60_000);
  });

  it('starts over from the first answer that contradicts the bounds by less than a second (Redis steps forward 300 ms)', () => {
    // Answers at every moment of the second: the bounds are tight around 0.
    const before = clockOffsetOf(
      Array.from({ length: 20 }, (_, i) => response(i * 137, 0)),
    ) as ClockOffset;
    // Our clock steps forward 300 ms: the offset is now -300; the first answer
    // whose upper bound falls below the stored lower bound replaces them all.
    const answers = Array.from({ length: 20 }, (_, i) => response(3_000 + i * 137, -300));
    let estimate = before;
    for (const answer of answers) {
      const contradicts =
        answer.dateMs + 1000 - answer.sentAt < lowerBoundAt(estimate, answer.receivedAt);
      const next = nextClockOffset(estimate, answer);
      if (contradicts) {
        expect(next).toEqual({
          lo: answer.dateMs - answer.receivedAt,
          loAt: answer.receivedAt,
          hi: answer.dateMs + 1000 - answer.sentAt,
          hiAt: answer.receivedAt,
        });
      }
      estimate = next;
    }
    expect(estimate.lo).toBeLessThanOrEqual(-300);
    expect(estimate.hi).toBeGreaterThanOrEqual(-300);
    expect(estimate.hi).toBeGreaterThanOrEqual(estimate.lo);
  });
});
