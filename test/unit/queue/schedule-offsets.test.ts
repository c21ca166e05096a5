import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { runKey } from '../../../src/account-name.js';
import {
  cronFiresAt,
  fullOffsetMs,
  fullWindowStrategy,
  incrementalOffsetMs,
  scheduleOffsetMs,
} from '../../../src/queue/schedule-offsets.js';
import { changedSchedules, type ScheduleTarget } from '../../../src/queue/upsert-schedules.js';

const QUARTER_HOUR = 15 * 60_000;
const HOUR = 3_600_000;
const RESOURCES = ['jobs', 'job_posts', 'tracking_links'];
/** The incremental offset of acme's jobs every 15 minutes. */
const PINNED = 209_337;

/** The run keys of `accounts` accounts × the three resources. */
function runKeys(accounts: number): string[] {
  return Array.from({ length: accounts }, (_, i) => `account_${i}`).flatMap((account) =>
    RESOURCES.map((resource) => runKey(account, resource)),
  );
}

/** How many of `offsets` fall in each `bucketMs` of `periodMs`: the most, the fewest, the mean. */
function histogram(offsets: number[], periodMs: number, bucketMs: number) {
  const counts = new Array<number>(Math.ceil(periodMs / bucketMs)).fill(0);
  for (const offset of offsets) {
    const i = Math.floor(offset / bucketMs);
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return {
    max: Math.max(...counts),
    min: Math.min(...counts),
    mean: offsets.length / counts.length,
  };
}

/** The first time `pattern` fires after `millis`, in this process's time zone. */
function cronNext(pattern: string, millis: number): number {
  return CronExpressionParser.parse(pattern, { currentDate: new Date(millis) })
    .next()
    .getTime();
}

describe('schedule offsets', () => {
  it('are stable: the same (account, resource) and period give the same offset, within the period', () => {
    const key = runKey('acme', 'jobs');
    const first = scheduleOffsetMs('incremental', key, QUARTER_HOUR);
    expect(scheduleOffsetMs('incremental', key, QUARTER_HOUR)).toBe(first);
    expect(first).toBeGreaterThanOrEqual(0);
    expect(first).toBeLessThan(QUARTER_HOUR);
    // Pinned: a change of the hash would move every deployment's schedules at its next start.
    expect(scheduleOffsetMs('incremental', 'acme:jobs', QUARTER_HOUR)).toBe(PINNED);
    expect(fullOffsetMs(key, HOUR)).toBe(scheduleOffsetMs('full', key, HOUR));
  });

  it('differ between accounts, resources and the two schedulers of one resource', () => {
    const offsets = new Set([
      scheduleOffsetMs('incremental', runKey('acme', 'jobs'), QUARTER_HOUR),
      scheduleOffsetMs('incremental', runKey('acme', 'job_posts'), QUARTER_HOUR),
      scheduleOffsetMs('incremental', runKey('globex', 'jobs'), QUARTER_HOUR),
      scheduleOffsetMs('full', runKey('acme', 'jobs'), QUARTER_HOUR),
    ]);
    expect(offsets.size).toBe(4);
  });

  it('are 0 without a window, and BullMQ is never given an incremental offset of 0 (it reads 0 as none)', () => {
    expect(fullOffsetMs(runKey('acme', 'jobs'), 0)).toBe(0);
    // A period of 1 ms puts every hash on 0: given as the period, the same moments.
    expect(incrementalOffsetMs(runKey('acme', 'jobs'), 1)).toBe(1);
    for (const key of runKeys(200)) {
      const offset = incrementalOffsetMs(key, QUARTER_HOUR);
      expect(offset).toBeGreaterThan(0);
      expect(offset).toBeLessThanOrEqual(QUARTER_HOUR);
    }
  });

  it('spread 5,000 accounts × 3 resources near flat over a 15-minute period', () => {
    const offsets = runKeys(5000).map((key) => scheduleOffsetMs('incremental', key, QUARTER_HOUR));
    // 15,000 runs: 1,000 a minute, 16.7 a second on average. A hash spreads
    // them as uniformly random moments would; none is bunched.
    const minutes = histogram(offsets, QUARTER_HOUR, 60_000);
    expect(minutes.max).toBeLessThanOrEqual(1.1 * minutes.mean);
    expect(minutes.min).toBeGreaterThanOrEqual(0.9 * minutes.mean);
    const tenSeconds = histogram(offsets, QUARTER_HOUR, 10_000);
    expect(tenSeconds.max).toBeLessThanOrEqual(1.25 * tenSeconds.mean);
    expect(tenSeconds.min).toBeGreaterThanOrEqual(0.75 * tenSeconds.mean);
    const seconds = histogram(offsets, QUARTER_HOUR, 1000);
    expect(seconds.max).toBeLessThanOrEqual(2.5 * seconds.mean);
  });

  it('spread the full runs of 5,000 accounts × 3 resources near flat over a one-hour window', () => {
    const offsets = runKeys(5000).map((key) => fullOffsetMs(key, HOUR));
    const minutes = histogram(offsets, HOUR, 60_000);
    expect(minutes.max).toBeLessThanOrEqual(1.2 * minutes.mean);
    expect(minutes.min).toBeGreaterThanOrEqual(0.8 * minutes.mean);
    const seconds = histogram(offsets, HOUR, 1000);
    expect(seconds.max).toBeLessThanOrEqual(4 * seconds.mean);
  });
});

describe('fullWindowStrategy', () => {
  const pattern = '0 3 * * *';
  const now = Date.parse('2026-03-10T12:00:00Z');
  const three = cronNext(pattern, now);

  it("fires at the cron's time plus the offset of the job's run key, and so on each day", () => {
    const strategy = fullWindowStrategy(HOUR);
    const key = runKey('acme', 'jobs');
    const offset = fullOffsetMs(key, HOUR);
    expect(strategy(now, { pattern }, key)).toBe(three + offset);
    // Moved on from that run (BullMQ passes its time), the next day's.
    const after = strategy(three + offset, { pattern }, key);
    expect(after).toBe(cronNext(pattern, three) + offset);
    // Between the cron's time and the offset, that day's run is still to come.
    expect(strategy(three + offset - 1, { pattern }, key)).toBe(three + offset);
  });

  it("fires at the cron's time with a window of 0, as BullMQ's own strategy", () => {
    expect(fullWindowStrategy(0)(now, { pattern }, runKey('acme', 'jobs'))).toBe(three);
  });
});

describe('cronFiresAt', () => {
  it("tells a pattern's times from other moments", () => {
    const three = cronNext('0 3 * * *', Date.parse('2026-03-10T12:00:00Z'));
    expect(cronFiresAt('0 3 * * *', three)).toBe(true);
    expect(cronFiresAt('0 3 * * *', three + 1000)).toBe(false);
    expect(cronFiresAt('not a pattern', three)).toBe(false);
  });
});

describe('changedSchedules', () => {
  const config = {
    incrementalEveryMs: QUARTER_HOUR,
    fullCron: '0 3 * * *',
    fullWindowMs: HOUR,
    runAttempts: 3,
    runBackoffMs: 1000,
  };
  const targets: ScheduleTarget[] = [{ account: 'acme', resource: 'jobs' }];
  const key = runKey('acme', 'jobs');
  const three = cronNext('0 3 * * *', Date.parse('2026-03-10T12:00:00Z'));
  const incremental = (offset: number) => ({
    key: `incremental:${key}`,
    every: QUARTER_HOUR,
    offset,
  });
  const full = (next: number) => ({ key: `full:${key}`, pattern: '0 3 * * *', next });
  const spread = [
    incremental(incrementalOffsetMs(key, QUARTER_HOUR)),
    full(three + fullOffsetMs(key, HOUR)),
  ];

  it('leave schedulers at their offsets as they are', () => {
    expect(changedSchedules(config, targets, spread)).toEqual([]);
    // The next day's run, once the worker moved the scheduler on.
    const tomorrow = cronNext('0 3 * * *', three) + fullOffsetMs(key, HOUR);
    expect(changedSchedules(config, targets, [spread[0] ?? {}, full(tomorrow)])).toEqual([]);
  });

  it('replace the schedulers made before the spread: every one aligned, full runs at the cron time', () => {
    // BullMQ gave the old incremental scheduler the moment it was made as its offset.
    const before = [incremental(123_456), full(three)];
    expect(changedSchedules(config, targets, before)).toEqual([
      `incremental:${key}`,
      `full:${key}`,
    ]);
  });

  it('replace the full scheduler when HIRESYNC_FULL_WINDOW moves its offset, to 0 included', () => {
    const halfHour = { ...config, fullWindowMs: HOUR / 2 };
    expect(fullOffsetMs(key, HOUR / 2)).not.toBe(fullOffsetMs(key, HOUR));
    expect(changedSchedules(halfHour, targets, spread)).toEqual([`full:${key}`]);
    expect(changedSchedules({ ...config, fullWindowMs: 0 }, targets, spread)).toEqual([
      `full:${key}`,
    ]);
    expect(changedSchedules({ ...config, fullWindowMs: 0 }, targets, [full(three)])).toEqual([]);
  });

  it("replace the incremental scheduler when the interval changes, with the new interval's offset", () => {
    const fiveMinutes = [{ account: 'acme', resource: 'jobs', incrementalEveryMs: 300_000 }];
    expect(changedSchedules(config, fiveMinutes, spread)).toEqual([`incremental:${key}`]);
    const held = [
      { key: `incremental:${key}`, every: 300_000, offset: incrementalOffsetMs(key, 300_000) },
    ];
    expect(changedSchedules(config, fiveMinutes, held)).toEqual([]);
  });
});
