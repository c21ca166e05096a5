import { describe, expect, it } from 'vitest';
import { readApiClock } from '../../../src/api/api-clock.js';

describe('readApiClock', () => {
  const received = Date.parse('2025-03-01T12:10:00.200Z');

  it("reads an HTTP-date as the API's clock, its second taken at the middle", () => {
    expect(readApiClock('Sat, 01 Mar 2025 12:00:00 GMT', received)).toEqual({
      date: '2025-03-01T12:00:00.000Z',
      skewMs: -599_700,
    });
    expect(readApiClock(['Sat, 01 Mar 2025 12:10:05 GMT'], received)?.skewMs).toBe(5_300);
  });

  it('gives nothing for a missing, empty or unreadable Date, or one Postgres could not store', () => {
    for (const header of [undefined, '', '  ', 'yesterday', [], 'Fri, 01 Jan 12000 00:00:00 GMT']) {
      expect(readApiClock(header, received), String(header)).toBeUndefined();
    }
  });
});
