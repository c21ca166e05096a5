import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import { CronExpressionParser } from 'cron-parser';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { runKey } from '../../src/account-name.js';
import { AccountUnavailableError } from '../../src/accounts/account.js';
import { deletePrefix } from '../../src/queue/redis.js';
import type { RunLock } from '../../src/queue/run-lock.js';
import {
  cronFiresAt,
  fullOffsetMs,
  incrementalOffsetMs,
} from '../../src/queue/schedule-offsets.js';
import { createSyncQueue, type SyncJobData } from '../../src/queue/sync-job.js';
import { createSyncWorker } from '../../src/queue/sync-worker.js';
import {
  type ScheduleConfig,
  type ScheduleTarget,
  upsertSchedules,
} from '../../src/queue/upsert-schedules.js';
import { captureLogger } from '../support/capture-logger.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

const QUARTER_HOUR = 15 * 60_000;
const HOUR = 3_600_000;
const config: ScheduleConfig = {
  incrementalEveryMs: QUARTER_HOUR,
  fullCron: '0 3 * * *',
  fullWindowMs: HOUR,
  runAttempts: 3,
  runBackoffMs: 1000,
};
const ACCOUNTS = ['default', 'acme', 'globex', 'initech', 'umbrella', 'hooli'];
const targets: ScheduleTarget[] = ACCOUNTS.flatMap((account) =>
  ['jobs', 'job_posts', 'tracking_links'].map((resource) => ({ account, resource })),
);

/** A Redis connection and a prefix of this test's own, emptied afterwards. */
function deployment() {
  const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
  const prefix = `test-${randomUUID()}`;
  defer(async () => {
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });
  /** The sync queue as a worker with `fullWindowMs` makes it (closed after the test). */
  const queue = (fullWindowMs = config.fullWindowMs) => {
    const made = createSyncQueue(redis, prefix, undefined, { fullWindowMs });
    defer(() => made.close());
    return made;
  };
  return { redis, prefix, queue };
}

/** Next run time of each scheduler, by key. */
async function nextTimes(queue: Queue<SyncJobData>): Promise<Map<string, number>> {
  return new Map((await queue.getJobSchedulers()).map((s) => [s.key, Number(s.next)]));
}

describe('schedules spread over their period', () => {
  it('give each (account, resource) its own stable next run within the period and the full window, kept by a restart', async () => {
    const { queue } = deployment();
    const first = queue();
    const before = Date.now();
    const made = await upsertSchedules(first, config, targets);
    expect(made.replaced).toEqual([]);
    const next = await nextTimes(first);
    expect(next.size).toBe(2 * targets.length);

    const incremental = targets.map(({ account, resource }) => {
      const key = runKey(account, resource);
      const at = next.get(`incremental:${key}`) ?? Number.NaN;
      // Within the coming period, at the offset of its own (account, resource).
      expect(at).toBeGreaterThan(before);
      expect(at).toBeLessThanOrEqual(Date.now() + QUARTER_HOUR);
      expect(at % QUARTER_HOUR).toBe(incrementalOffsetMs(key, QUARTER_HOUR) % QUARTER_HOUR);
      return at;
    });
    expect(new Set(incremental).size).toBe(targets.length);

    const upcoming = CronExpressionParser.parse('0 3 * * *', { currentDate: new Date(before) })
      .next()
      .getTime();
    const full = targets.map(({ account, resource }) => {
      const key = runKey(account, resource);
      const at = next.get(`full:${key}`) ?? Number.NaN;
      // One of the cron's times (today's, while its window is open) plus its offset in the window.
      const base = at - fullOffsetMs(key, HOUR);
      expect(cronFiresAt('0 3 * * *', base)).toBe(true);
      expect(at).toBeGreaterThan(before);
      expect(base).toBeLessThanOrEqual(upcoming);
      return at - base;
    });
    expect(new Set(full).size).toBe(targets.length);

    // A restart (a new connection's queue, or another replica) changes nothing.
    await first.close();
    const again = queue();
    const kept = await upsertSchedules(again, config, targets);
    expect(kept.replaced).toEqual([]);
    expect(kept.started).toEqual([]);
    expect(await nextTimes(again)).toEqual(next);
  });

  it('queue the first run of a new incremental schedule at once, once, then leave it to its offset', async () => {
    const { queue } = deployment();
    const q = queue();
    // Two replicas starting at once, both finding the schedulers missing.
    const [one, other] = await Promise.all([
      upsertSchedules(q, config, targets.slice(0, 2)),
      upsertSchedules(queue(), config, targets.slice(0, 2)),
    ]);
    expect([...one.started, ...other.started]).toContain(
      `incremental:${runKey('default', 'jobs')}`,
    );
    const waiting = async () =>
      (await q.getJobs(['waiting'])).map((job) => [job.name, job.data]).sort();
    // One run of each, and none of the full schedules (those wait for their cron).
    expect(await waiting()).toEqual([
      ['job_posts', { resource: 'job_posts', requested: 'auto', origin: 'schedule' }],
      ['jobs', { resource: 'jobs', requested: 'auto', origin: 'schedule' }],
    ]);
    // Then the schedulers fire at their offsets.
    const next = await nextTimes(q);
    expect((next.get('incremental:jobs') ?? 0) % QUARTER_HOUR).toBe(
      incrementalOffsetMs('jobs', QUARTER_HOUR) % QUARTER_HOUR,
    );
  });

  it("replace a running deployment's aligned schedulers with spread ones at the worker's start, and only once", async () => {
    const { queue } = deployment();
    // As the version before the spread made them: BullMQ's `every` aligned on
    // the moment of the upsert, full runs at the cron's time.
    const old = queue(0);
    const key = (account: string, resource: string) => runKey(account, resource);
    for (const { account, resource } of targets) {
      const name = key(account, resource);
      await old.upsertJobScheduler(`incremental:${name}`, { every: QUARTER_HOUR }, { name });
      await old.upsertJobScheduler(`full:${name}`, { pattern: '0 3 * * *' }, { name });
    }
    const aligned = await nextTimes(old);
    const incrementalBefore = targets.map(({ account, resource }) =>
      aligned.get(`incremental:${key(account, resource)}`),
    );
    // All within the second or two the upserts took.
    expect(
      Math.max(...(incrementalBefore as number[])) - Math.min(...(incrementalBefore as number[])),
    ).toBeLessThan(5000);
    await old.close();

    const upgraded = queue();
    const changes = await upsertSchedules(upgraded, config, targets);
    expect(changes.replaced.sort()).toEqual(
      targets
        .flatMap(({ account, resource }) => [
          `full:${key(account, resource)}`,
          `incremental:${key(account, resource)}`,
        ])
        .sort(),
    );
    // Replaced, not new: no run is queued at once for them.
    expect(changes.started).toEqual([]);
    const spread = await nextTimes(upgraded);
    for (const { account, resource } of targets) {
      const name = key(account, resource);
      expect((spread.get(`incremental:${name}`) ?? 0) % QUARTER_HOUR).toBe(
        incrementalOffsetMs(name, QUARTER_HOUR) % QUARTER_HOUR,
      );
    }
    // The next start finds them as wanted.
    expect((await upsertSchedules(upgraded, config, targets)).replaced).toEqual([]);
    expect(await nextTimes(upgraded)).toEqual(spread);
  });

  it("has the worker move a full scheduler on to its cron's next time plus the same offset", async () => {
    const { redis, prefix, queue } = deployment();
    // Every 10 s, within a 5-second window: the worker moves it on within seconds.
    const every10s = { ...config, fullCron: '*/10 * * * * *', fullWindowMs: 5000 };
    const target = { account: 'acme', resource: 'jobs' };
    const name = runKey('acme', 'jobs');
    const offset = fullOffsetMs(name, 5000);
    const q = queue(5000);
    await upsertSchedules(q, every10s, [target]);
    const first = (await nextTimes(q)).get(`full:${name}`) ?? 0;
    expect((first - offset) % 10_000).toBe(0);

    const log = captureLogger();
    const worker = createSyncWorker(
      redis,
      prefix,
      {
        accounts: async () => {
          throw new AccountUnavailableError('acme is disabled');
        },
        runLock: undefined as unknown as RunLock,
        logger: log.logger,
        shutdown: new AbortController().signal,
      },
      { concurrency: 1, fullWindowMs: 5000 },
    );
    defer(() => worker.close());
    const moved = await waitFor(async () => {
      const at = (await nextTimes(q)).get(`full:${name}`) ?? 0;
      return at > first ? at : undefined;
    }, 30_000);
    expect(moved - first).toBe(10_000);
  }, 40_000);
});
