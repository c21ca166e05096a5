/**
 * Benchmark: how the schedules of many accounts spread over their period.
 * On a fresh Redis prefix, ACCOUNTS accounts (default 5,000) × 3 resources:
 *
 *   1. the job schedulers as the version before the spread made them (BullMQ's
 *      `every` aligned on the moment of each upsert, full runs at the cron's
 *      time), as a deployment upgrading has them;
 *   2. a worker's start: upsertSchedules replaces them with spread ones
 *      (HIRESYNC_INCREMENTAL_EVERY 15m, HIRESYNC_FULL_CRON `0 3 * * *`,
 *      HIRESYNC_FULL_WINDOW 1h), then a second start, which replaces nothing.
 *
 * For both, the runs per second over one incremental period and over the
 * full window, computed from the schedulers' next times (BullMQ's own, read
 * back from Redis; nothing waits for them): the busiest second against the
 * mean, and the busiest minute. Also the time of each start's upserts and
 * the CPU time of the schedule keeper's comparison (changedSchedules) over
 * every scheduler, which it makes every minute.
 *
 *   npm run build && node dist/bench/schedule-spread.js [ACCOUNTS]
 */
import { randomUUID } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import { Redis } from 'ioredis';
import { runKey } from '../src/account-name.js';
import { deletePrefix } from '../src/queue/redis.js';
import { createSyncQueue } from '../src/queue/sync-job.js';
import {
  changedSchedules,
  type ScheduleConfig,
  type ScheduleTarget,
  upsertSchedules,
} from '../src/queue/upsert-schedules.js';
import { fmt, REDIS_URL } from './support.js';

const RESOURCES = ['jobs', 'job_posts', 'tracking_links'];
const CONFIG: ScheduleConfig = {
  incrementalEveryMs: 15 * 60_000,
  fullCron: '0 3 * * *',
  fullWindowMs: 3_600_000,
  runAttempts: 5,
  runBackoffMs: 30_000,
};

/** Runs per second and per minute over a span: the busiest against the mean. */
export interface Spread {
  runs: number;
  spanS: number;
  meanPerS: number;
  peakPerS: number;
  peakPerMinute: number;
  /** Seconds of the span in which at least one run starts. */
  busySeconds: number;
}

export interface ScheduleSpreadResult {
  accounts: number;
  schedulers: number;
  before: { incremental: Spread; full: Spread; upsertS: number };
  after: { incremental: Spread; full: Spread; upsertS: number; replaced: number };
  restart: { upsertS: number; replaced: number };
  /** CPU time of one changedSchedules over every scheduler listed (the keeper's minute check). */
  compareMs: number;
}

/** The spread of `times` (ms) over [start, start + spanMs). */
function spreadOf(times: number[], start: number, spanMs: number): Spread {
  const perS = new Map<number, number>();
  const perMinute = new Map<number, number>();
  for (const t of times) {
    const s = Math.floor((t - start) / 1000);
    perS.set(s, (perS.get(s) ?? 0) + 1);
    const m = Math.floor(s / 60);
    perMinute.set(m, (perMinute.get(m) ?? 0) + 1);
  }
  return {
    runs: times.length,
    spanS: spanMs / 1000,
    meanPerS: times.length / (spanMs / 1000),
    peakPerS: Math.max(...perS.values()),
    peakPerMinute: Math.max(...perMinute.values()),
    busySeconds: perS.size,
  };
}

/**
 * The incremental runs of one period from `start` (each scheduler fires once
 * in it, at its next time modulo the period) and the full runs of one window
 * (each as long after its cron's time as its next time is).
 */
function spreads(next: Map<string, number>, start: number) {
  const every = CONFIG.incrementalEveryMs;
  const incremental: number[] = [];
  const afterCron: number[] = [];
  for (const [key, at] of next) {
    if (key.startsWith('incremental:')) {
      incremental.push(start + ((((at - start) % every) + every) % every));
    } else {
      const cron = CronExpressionParser.parse(CONFIG.fullCron, { currentDate: new Date(at + 1) });
      afterCron.push(at - cron.prev().getTime());
    }
  }
  return {
    incremental: spreadOf(incremental, start, every),
    full: spreadOf(afterCron, 0, CONFIG.fullWindowMs),
  };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = performance.now();
  const value = await work();
  return { value, seconds: (performance.now() - started) / 1000 };
}

export async function scheduleSpread(accounts = 5000): Promise<ScheduleSpreadResult> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const prefix = `bench-schedules-${randomUUID().slice(0, 8)}`;
  const targets: ScheduleTarget[] = Array.from(
    { length: accounts },
    (_, i) => `account_${String(i).padStart(4, '0')}`,
  ).flatMap((account) => RESOURCES.map((resource) => ({ account, resource })));
  const nextTimes = async (queue: ReturnType<typeof createSyncQueue>) =>
    new Map((await queue.getJobSchedulers()).map((s) => [s.key, Number(s.next)]));
  try {
    // 1. As the version before the spread upserted them, one after the other.
    const old = createSyncQueue(redis, prefix);
    const start = Date.now();
    const made = await timed(async () => {
      for (const { account, resource } of targets) {
        const name = runKey(account, resource);
        const data = { account, resource, origin: 'schedule' as const };
        await old.upsertJobScheduler(
          `incremental:${name}`,
          { every: CONFIG.incrementalEveryMs },
          { name, data: { ...data, requested: 'auto' } },
        );
        await old.upsertJobScheduler(
          `full:${name}`,
          { pattern: CONFIG.fullCron },
          { name, data: { ...data, requested: 'full' } },
        );
      }
    });
    const before = spreads(await nextTimes(old), start);
    await old.close();

    // 2. The first start of this version, then a restart.
    const queue = createSyncQueue(redis, prefix, undefined, { fullWindowMs: CONFIG.fullWindowMs });
    const upgrade = await timed(() => upsertSchedules(queue, CONFIG, targets));
    const after = spreads(await nextTimes(queue), Date.now());
    const restart = await timed(() => upsertSchedules(queue, CONFIG, targets));
    const listed = await queue.getJobSchedulers();
    const cpu = process.cpuUsage();
    changedSchedules(CONFIG, targets, listed);
    const used = process.cpuUsage(cpu);
    await queue.close();
    return {
      accounts,
      schedulers: listed.length,
      before: { ...before, upsertS: made.seconds },
      after: { ...after, upsertS: upgrade.seconds, replaced: upgrade.value.replaced.length },
      restart: { upsertS: restart.seconds, replaced: restart.value.replaced.length },
      compareMs: (used.user + used.system) / 1000,
    };
  } finally {
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}

function describeSpread(s: Spread): string {
  return `peak ${fmt(s.peakPerS)} runs/s vs mean ${s.meanPerS.toFixed(1)} (${(s.peakPerS / s.meanPerS).toFixed(1)} ×), busiest minute ${fmt(s.peakPerMinute)}, runs start in ${fmt(s.busySeconds)} of its ${fmt(s.spanS)} s`;
}

/** The figures as lines of text. */
export function describeScheduleSpread(r: ScheduleSpreadResult): string[] {
  return [
    `${fmt(r.accounts)} accounts × 3 resources: ${fmt(r.schedulers)} job schedulers`,
    `before the spread (made in ${r.before.upsertS.toFixed(1)} s):`,
    `  incremental, one 15-min period: ${describeSpread(r.before.incremental)}`,
    `  full, the hour after 03:00:     ${describeSpread(r.before.full)}`,
    `spread (first start: ${fmt(r.after.replaced)} replaced in ${r.after.upsertS.toFixed(1)} s):`,
    `  incremental, one 15-min period: ${describeSpread(r.after.incremental)}`,
    `  full, the hour after 03:00:     ${describeSpread(r.after.full)}`,
    `restart: ${fmt(r.restart.replaced)} replaced, upserts ${r.restart.upsertS.toFixed(1)} s; the keeper's comparison of every scheduler: ${r.compareMs.toFixed(0)} ms CPU`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await scheduleSpread(Number(process.argv[2]) || 5000);
  process.stdout.write(`${describeScheduleSpread(result).join('\n')}\n`);
}
