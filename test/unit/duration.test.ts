import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/duration.js';

describe('parseDuration', () => {
  it('reads units and treats a bare number as seconds', () => {
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('45')).toBe(45_000);
  });

  it('rejects zero, negatives and nonsense', () => {
    expect(parseDuration('0s')).toBeUndefined();
    expect(parseDuration('-1m')).toBeUndefined();
    expect(parseDuration('soon')).toBeUndefined();
    expect(parseDuration('10 parsecs')).toBeUndefined();
  });
});
