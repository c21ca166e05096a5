import { describe, expect, it } from 'vitest';
import { VIEW_COLUMNS } from '../../support/analytics-reference/columns.js';
import { compareRows } from '../../support/analytics-reference/compare-rows.js';
import { bigintOf, timestampOf } from '../../support/analytics-reference/index.js';

describe('reading served values as the views read them', () => {
  it('reads timestamps as UTC, with offsets and microseconds, and anything else as null', () => {
    expect(timestampOf('2026-01-31T23:30:00-05:00')).toBe(Date.parse('2026-02-01T04:30:00Z'));
    expect(timestampOf('2026-01-02T03:04:05')).toBe(Date.parse('2026-01-02T03:04:05Z'));
    expect(timestampOf('2026-01-02')).toBe(Date.parse('2026-01-02T00:00:00Z'));
    expect(timestampOf('2026-01-02T03:04:05.123456Z')).toBeCloseTo(
      Date.parse('2026-01-02T03:04:05.123Z') + 0.456,
      6,
    );
    expect(timestampOf('soon')).toBeNull();
    expect(timestampOf(1_767_225_600_000)).toBeNull();
  });

  it('reads ids only from whole JSON numbers, as hiresync.try_bigint does', () => {
    expect(bigintOf(21_300_000_001)).toBe('21300000001');
    expect(bigintOf('42')).toBeNull();
    expect(bigintOf(1.5)).toBeNull();
    expect(bigintOf(null)).toBeNull();
  });
});

describe('comparing expected rows with the rows Postgres answers', () => {
  const columns = VIEW_COLUMNS.source_of_hire_by_job;
  const row = (jobId: string, applications: number, hireRate: number | null) => ({
    job_id: jobId,
    job_name: 'Engineer',
    applications,
    interviewed: 0,
    offers: 0,
    hires: 0,
    hire_rate: hireRate,
  });

  it('accepts the same rows in another order, rates within 1e-6', () => {
    expect(
      compareRows(
        'v',
        columns,
        [row('1', 3, 1 / 3), row('2', 1, 0)],
        [row('2', 1, 0), row('1', 3, 0.3333334)],
      ),
    ).toEqual([]);
  });

  it('names a missing row, an unexpected one and a rate off by more than the tolerance', () => {
    const lines = compareRows(
      'v',
      columns,
      [row('1', 3, 1 / 3), row('2', 1, 0)],
      [row('1', 3, 0.3334), row('3', 1, null)],
    );
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).toMatch(/hire_rate expected 0\.333\d* got 0\.3334/);
    expect(lines.join('\n')).toMatch(/missing .*"job_id":"2"/);
    expect(lines.join('\n')).toMatch(/unexpected .*"job_id":"3"/);
  });

  it('tells a null from a zero', () => {
    expect(compareRows('v', columns, [row('1', 0, null)], [row('1', 0, 0)])).toHaveLength(1);
  });
});
