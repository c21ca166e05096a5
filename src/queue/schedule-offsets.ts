/**
 * Where in its period each schedule fires. Thousands of accounts on the same
 * interval and cron would otherwise all fire at the same moment (every
 * incremental run in the seconds after the worker's start, every full run at
 * 03:00); each (account, resource) instead gets an offset of its own, derived
 * from a hash of its run key, so every replica and every restart computes the
 * same one and the load on the database is flat over the period.
 */
import { createHash } from 'node:crypto';
import { defaultRepeatStrategy, type RepeatStrategy } from 'bullmq';
import { CronExpressionParser } from 'cron-parser';

/** The scheduler an offset is for: the two of an (account, resource) get unrelated offsets. */
export type ScheduleKind = 'incremental' | 'full';

/**
 * A stable offset in [0, `periodMs`) for the scheduler `kind` of the run key
 * `key` (runKey(account, resource)): the first 48 bits of SHA-256 of
 * `kind:key`, modulo the period. 0 when the period is 0 (no spread).
 */
export function scheduleOffsetMs(kind: ScheduleKind, key: string, periodMs: number): number {
  if (periodMs <= 0) return 0;
  const digest = createHash('sha256').update(`${kind}:${key}`).digest();
  return digest.readUIntBE(0, 6) % Math.floor(periodMs);
}

/**
 * BullMQ's `offset` of the incremental scheduler of `key` repeating every
 * `everyMs`: its runs fire at the epoch's multiples of `everyMs` plus this.
 * In (0, everyMs]: BullMQ reads an offset of 0 as none (and then aligns the
 * schedule on the moment it is upserted), so a hash landing on 0 is given as
 * `everyMs`, which fires at the same moments.
 */
export function incrementalOffsetMs(key: string, everyMs: number): number {
  return scheduleOffsetMs('incremental', key, everyMs) || everyMs;
}

/** How long after its cron's time the full run of `key` fires, within a window of `windowMs`. */
export function fullOffsetMs(key: string, windowMs: number): number {
  return scheduleOffsetMs('full', key, windowMs);
}

/**
 * BullMQ's repeat strategy of the sync queue (its `settings.repeatStrategy`,
 * given to the Queue that upserts the schedulers and to the Worker that
 * moves them on): a cron pattern fires at each of its times plus the full
 * offset of the job's name, which is the run key of its (account, resource)
 * (upsertSchedules names the jobs so). BullMQ's own cron strategy computes the
 * times; this shifts them. BullMQ has no offset for patterns (its `offset`
 * applies to `every` only), and this is the extension point it offers.
 */
export function fullWindowStrategy(windowMs: number): RepeatStrategy {
  return (millis, opts, name) => {
    const offset = name === undefined ? 0 : fullOffsetMs(name, windowMs);
    // The first of the pattern's times whose shifted moment is after `millis`.
    const next = defaultRepeatStrategy(millis - offset, opts);
    return next === undefined ? undefined : next + offset;
  };
}

/**
 * Does `pattern` fire at `millis` (in this process's time zone, as BullMQ's
 * cron strategy reads it)? `cache` keeps the answers of one comparison: most
 * schedulers share a pattern and a time.
 */
export function cronFiresAt(
  pattern: string,
  millis: number,
  cache: Map<string, boolean> = new Map(),
): boolean {
  const key = `${millis} ${pattern}`;
  let fires = cache.get(key);
  if (fires === undefined) {
    try {
      const after = CronExpressionParser.parse(pattern, { currentDate: new Date(millis - 1) });
      fires = after.next().getTime() === millis;
    } catch {
      fires = false;
    }
    cache.set(key, fires);
  }
  return fires;
}
