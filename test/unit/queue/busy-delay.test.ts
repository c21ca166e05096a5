import { describe, expect, it } from 'vitest';
import { busyDelayMs } from '../../../src/queue/busy-delay.js';

describe('busyDelayMs', () => {
  it('doubles from 2 s on each wait and stays at 60 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20, 2000].map(busyDelayMs)).toEqual([
      2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000, 60_000,
    ]);
  });
});
