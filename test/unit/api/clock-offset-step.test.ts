import { describe, expect, it } from 'vitest';
import {
  type DatedResponse,
  localInstantOf,
  nextClockOffset,
} from '../../../src/api/clock-offset.js';

const T0 = Date.parse('2026-11-26T12:00:00Z');

/** A response the API answered at our time T0 + at, its clock `offset` ms ahead of ours. */
function response(at: number, offset: number, rtt = 10): DatedResponse {
  const apiNow = T0 + at + offset;
  return {
    dateMs: apiNow - (apiNow % 1000),
    sentAt: T0 + at - rtt / 2,
    receivedAt: T0 + at + rtt / 2,
  };
}

describe('an epoch Reset waited for after a clock step of less than a second', () => {
  it('never waits less than the API window actually lasts after the API clock steps back 800 ms (an NTP step)', () => {
    // A minute of responses at every phase of the second, API clock agreeing with ours.
    let offset: ReturnType<typeof nextClockOffset> | undefined;
    for (let at = 0; at < 60_000; at += 137) offset = nextClockOffset(offset, response(at, 0));
    // The API's clock steps back 800 ms; a few minutes of responses follow.
    const stepped = -800;
    for (let at = 60_000; at < 240_000; at += 137)
      offset = nextClockOffset(offset, response(at, stepped));
    const now = T0 + 240_000;
    // The API says its window resets at its instant R (epoch); on our clock that is R - offset.
    const resetApi = T0 + 270_000 + stepped; // a whole API second
    const apiResetOnOurClock = resetApi - stepped;
    const waitedUntil = localInstantOf(resetApi, offset, now);
    // A request sent at waitedUntil reaches the API before its window reset: a 429.
    expect(waitedUntil).toBeGreaterThanOrEqual(apiResetOnOurClock);
  });
});
