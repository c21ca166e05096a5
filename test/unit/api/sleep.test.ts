import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, sleep } from '../../../src/api/sleep.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('sleep', () => {
  it('sleeps a wait longer than a timer can hold in pieces, not for 1 ms', async () => {
    vi.useFakeTimers();
    let done = false;
    const slept = sleep(MAX_TIMER_MS + 60_000).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(60_000);
    await slept;
    expect(done).toBe(true);
  });

  it('rejects with the abort reason as soon as the signal is aborted', async () => {
    const controller = new AbortController();
    const slept = sleep(3_600_000, controller.signal);
    controller.abort(new Error('shutdown'));
    await expect(slept).rejects.toThrow('shutdown');
  });
});
