import { describe, expect, it } from 'vitest';
import { isoTimestamp, isoTimestampOrNull } from '../../src/iso-timestamp.js';

describe('isoTimestamp', () => {
  it('turns what Postgres prints in a UTC session into ISO 8601 UTC, microseconds kept', () => {
    expect(isoTimestamp('2026-05-01 12:00:00.123456+00')).toBe('2026-05-01T12:00:00.123456Z');
    expect(isoTimestamp('2026-05-01 12:00:00+00')).toBe('2026-05-01T12:00:00Z');
    expect(isoTimestamp('2026-05-01T12:00:00.5Z')).toBe('2026-05-01T12:00:00.5Z');
  });

  it('converts another session time zone to UTC', () => {
    expect(isoTimestamp('2026-05-01 12:00:00.25+02')).toBe('2026-05-01T10:00:00.250Z');
    expect(isoTimestamp('2026-05-01 12:00:00-07:30')).toBe('2026-05-01T19:30:00.000Z');
  });

  it('refuses text that is not a timestamp, and keeps null null', () => {
    expect(() => isoTimestamp('yesterday')).toThrow(/not a timestamp: yesterday/);
    expect(isoTimestampOrNull(null)).toBeNull();
    expect(isoTimestampOrNull(undefined)).toBeNull();
  });
});
