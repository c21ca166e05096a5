import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { PrivateRedis } from '../../bench/private-servers.js';
import { presentUnlessCi, REDIS_SERVER } from '../../bench/required-binaries.js';
import { createApp } from '../../src/app.js';
import { APP_MAX_RETRIES_PER_REQUEST } from '../../src/queue/redis.js';
import { RunLock } from '../../src/queue/run-lock.js';
import { ONCE_QUEUE_PREFIX, runOnce } from '../../src/queue/run-once.js';
import { createSyncQueue, enqueueRun } from '../../src/queue/sync-job.js';
import { createJobWorker } from '../../src/queue/sync-worker.js';
import { LockLostError } from '../../src/redis/redis-lock.js';
import { registerSecret } from '../../src/secret.js';
import { captureLogger } from '../support/capture-logger.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { clearRedisPrefix, newRedisPrefix } from '../support/test-env.js';

const { defer, harness } = cleanupAfterEach();
// Outages need a Redis of the test's own: skipped without redis-server, failed under CI.
const redisServer = presentUnlessCi(PrivateRedis.available(), REDIS_SERVER);

async function privateRedis(): Promise<PrivateRedis> {
  const server = await PrivateRedis.start();
  defer(() => server.close());
  return server;
}

/** The data of the first job hash under `pattern` (a sync command's own queue). */
async function jobData(
  redis: Redis,
  pattern: string,
): Promise<Record<string, unknown> | undefined> {
  for (const key of await redis.keys(pattern)) {
    const data = (await redis.type(key)) === 'hash' ? await redis.hget(key, 'data') : null;
    if (data) return JSON.parse(data) as Record<string, unknown>;
  }
  return undefined;
}

function connect(url: string, options: { maxRetriesPerRequest?: number | null } = {}): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, ...options });
  redis.on('error', () => {});
  defer(() => redis.disconnect());
  return redis;
}

/** Calls per command since the server started, from INFO commandstats. */
async function commandCalls(redis: Redis): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  for (const match of (await redis.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
    calls[match[1] as string] = Number(match[2]);
  }
  return calls;
}

describe('run lock scripts', () => {
  it.runIf(redisServer)('are sent once per connection, then run by their SHA', async () => {
    const server = await privateRedis();
    const redis = connect(server.url);
    const observer = connect(server.url);
    const lock = new RunLock(redis, 'test', 1000);
    const held = await lock.acquire('jobs');
    expect(held).toBeDefined();
    // Renewals at a third of the TTL, however long the machine takes to make five.
    await waitFor(async () => ((await commandCalls(observer)).evalsha ?? 0) >= 5);
    await held?.release();
    const calls = await commandCalls(observer);
    // One EVAL per script (renew, release) on this socket; every other call by SHA.
    expect(calls.eval ?? 0).toBeLessThanOrEqual(2);
    expect(calls.evalsha ?? 0).toBeGreaterThanOrEqual(5);
    expect(await redis.exists('test:run-lock:jobs')).toBe(0);
  });
});

describe('a lost run lock', () => {
  it('stops the run after the page in hand when another owner takes its lock, and the job resumes it once the lock is free', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { jobs: 1000 } }, latencyMs: 100 },
      env: { HIRESYNC_PER_PAGE: '50', HIRESYNC_RUN_LOCK_TTL: '1200ms' },
    });
    const redis = connect(inject('redisUrl'));
    const key = `${h.config.redisPrefix}:run-lock:jobs`;
    const lost = () => h.log.text().includes('run lock lost');
    // What happened, in order: commits (marked once the loss was logged), the
    // takeover, the job finding the resource busy, the other owner's release.
    const events: string[] = [];
    let released: Promise<void> | undefined;
    let interrupted: Record<string, unknown> | undefined;
    const [outcome] = await h.sync(['jobs'], 'auto', {
      onProgress: (p) => {
        events.push(lost() ? 'commit after loss' : 'commit');
        if (p.pages === 2 && released === undefined) {
          // As a second worker would once the key expired: the key now holds another owner,
          // until the job has found the resource busy.
          events.push('taken');
          void redis.set(key, 'another-worker');
          released = (async () => {
            await waitFor(async () => h.log.text().includes('already running elsewhere; waiting'));
            events.push('busy');
            interrupted = await jobData(redis, `${h.config.redisPrefix}:${ONCE_QUEUE_PREFIX}*`);
            await redis.del(key);
            events.push('released');
          })();
        }
      },
    });
    await released;
    const taken = events.indexOf('taken');
    const freed = events.indexOf('released');
    expect(taken).toBeGreaterThan(0);
    expect(events.indexOf('busy')).toBe(freed - 1);
    // Between the takeover and the release: commits until the renewal noticed, then
    // at most the page in hand.
    const heldElsewhere = events.slice(taken + 1, freed - 1);
    expect(heldElsewhere.filter((e) => e === 'commit after loss').length).toBeLessThanOrEqual(1);
    expect(heldElsewhere.every((e) => e === 'commit' || e === 'commit after loss')).toBe(true);
    // The rest of the run came after the release.
    expect(events.slice(freed + 1).length).toBeGreaterThan(0);
    expect(outcome).toMatchObject({ ok: true, summary: { resumed: true, pages: 20 } });
    expect(h.log.lines().filter((l) => l.includes('run lock lost'))).toHaveLength(1);
    expect(await h.liveIds('jobs')).toEqual(h.expectedIds('jobs'));
    const runs = await h.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select('outcome')
      .execute();
    expect(runs).toEqual([{ outcome: 'succeeded' }]);
    // Its job, put back, said which run was interrupted and why (status reads it).
    expect(interrupted).toMatchObject({
      interruptedRun: '1',
      interruptions: 1,
      lastInterruption: expect.stringContaining('run-lock:jobs was lost'),
    });
  });

  it.runIf(redisServer)(
    'is lost once Redis has been unreachable for longer than its TTL, and not after a shorter outage',
    async () => {
      const server = await privateRedis();
      const redis = connect(server.url);
      const observer = connect(server.url);
      // Long enough that a restart of the server plus a reconnection fit well within it.
      const ttlMs = 6000;
      const key = 'test:run-lock:jobs';
      const held = await new RunLock(redis, 'test', ttlMs).acquire('jobs');
      expect(held).toBeDefined();
      await server.restart(300);
      // The key outlived the outage (AOF), and a renewal after it succeeded.
      const leftAfterOutage = await observer.pttl(key);
      expect(leftAfterOutage).toBeGreaterThan(0);
      await waitFor(async () => (await observer.pttl(key)) > leftAfterOutage);
      expect(held?.lost.aborted).toBe(false);

      await server.stop();
      await new Promise((resolve) => held?.lost.addEventListener('abort', resolve));
      // Lost by its TTL, not by a renewal finding another owner. That it is
      // given up no later than the key expires is proved with fake timers in
      // test/unit/redis/redis-lock.test.ts.
      expect(held?.lost.reason).toBeInstanceOf(LockLostError);
      expect(String(held?.lost.reason)).toContain('could not be renewed within');
      await server.startProcess();
      await held?.release();
    },
  );
});

describe("the application's Redis connection", () => {
  it.runIf(redisServer)(
    'fails a checkpoint save within seconds while Redis is down, instead of hanging (BullMQ keeps waiting on its own)',
    async () => {
      const server = await privateRedis();
      const h = await harness({ env: { REDIS_URL: server.url } });
      const app = h.app();
      defer(() => app.close());
      defer(() => server.startProcess());
      await app.redis.ping();
      await app.queueRedis.ping();
      await server.stop();
      const saved = app.checkpointsOf('default').save({
        runId: '1',
        resource: 'jobs',
        mode: 'full',
        nextUrl: `${h.sim.url}/v3/jobs`,
        pagesDone: 0,
        stopAtId: null,
        updatedAt: new Date().toISOString(),
      });
      // No deadline here: a save that hangs fails the test by its timeout.
      const outcome = await saved.then(
        () => 'saved',
        (error: unknown) => error,
      );
      // It gave up after a fixed number of reconnection attempts (seconds), not at some deadline.
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toContain(
        `max retries per request limit (which is ${APP_MAX_RETRIES_PER_REQUEST})`,
      );
      expect((app.redis as Redis).options.maxRetriesPerRequest).toBe(APP_MAX_RETRIES_PER_REQUEST);
      // BullMQ's connection still waits for the reconnection.
      expect((app.queueRedis as Redis).options.maxRetriesPerRequest).toBeNull();
    },
  );
});

describe('queue errors', () => {
  it('are logged at warn, once however many come in a burst', async () => {
    const h = await harness({});
    const app = h.app();
    defer(() => app.close());
    for (let i = 0; i < 50; i += 1) app.queue.emit('error', new Error('Connection is closed.'));
    const worker = app.startWorker();
    for (let i = 0; i < 50; i += 1) worker.emit('error', new Error('Connection is closed.'));
    const lines = h.log
      .lines()
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => /^queue (worker )?error$/.test(l.msg));
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: 'queue error' }),
      expect.objectContaining({ level: 40, msg: 'queue worker error' }),
    ]);
  });
});

describe('a job whose resource is busy', () => {
  it('waits longer each time (2 s, 4 s, 8 s, … 60 s) and says so once at info, then at debug', async () => {
    const h = await harness({ simulator: { dataset: { counts: { jobs: 100 } } } });
    const log = captureLogger('debug');
    const app = createApp(h.config, log.logger, { defaultMetrics: false });
    defer(() => app.close());
    const redis = connect(inject('redisUrl'));
    const key = `${h.config.redisPrefix}:run-lock:jobs`;
    const waits = () =>
      log
        .lines()
        .map((l) => JSON.parse(l) as { level: number; msg: string; delayMs?: number })
        .filter((l) => / elsewhere; waiting$/.test(l.msg));
    // Another worker's run of jobs holds the lock until the job has found it busy three times.
    await redis.set(key, 'another-worker');
    const released = (async () => {
      await waitFor(async () => waits().length >= 3, 60_000);
      await redis.del(key);
    })();
    const [outcome] = await runOnce(app, ['jobs'], 'auto');
    await released;
    expect(outcome).toMatchObject({ ok: true, summary: { records: 100 } });
    expect(waits().map((l) => [l.level, l.delayMs])).toEqual([
      [30, 2000],
      [20, 4000],
      [20, 8000],
    ]);
  });
});

describe('hiresync sync', () => {
  it("runs only the runs it queued, never a deployment's job waiting in the shared queue, and removes its own queue", async () => {
    const h = await harness({ simulator: { dataset: { counts: { jobs: 200, job_posts: 200 } } } });
    const queueRedis = connect(inject('redisUrl'), { maxRetriesPerRequest: null });
    const shared = createSyncQueue(queueRedis, h.config.redisPrefix);
    defer(() => shared.close());
    // A scheduled run of the deployment, waiting for one of the deployment's workers.
    const scheduled = await enqueueRun(
      shared,
      { resource: 'jobs', requested: 'auto', origin: 'schedule' },
      h.config,
    );
    const outcomes = await h.sync(['job_posts']);
    expect(outcomes).toMatchObject([{ resource: 'job_posts', ok: true }]);
    expect(await shared.getJobState(scheduled.id as string)).toBe('waiting');
    const runs = await h.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select('resource')
      .execute();
    expect(runs).toEqual([{ resource: 'job_posts' }]);
    const [, left] = await queueRedis.scan(
      '0',
      'MATCH',
      `${h.config.redisPrefix}:sync-once-*`,
      'COUNT',
      10_000,
    );
    expect(left).toEqual([]);
  });
});

describe('the shared queue', () => {
  it("keeps a worker's failed run with its reason and stack, secrets redacted (sync's own queue is removed instead)", async () => {
    const h = await harness({
      simulator: { nonAdminSubs: ['42'] },
      env: { HIRESYNC_SUB: '42' },
    });
    // Stands for a credential the API echoes in its 403 message.
    const echoed = 'must be a site administrator';
    registerSecret(echoed);
    const app = h.app();
    defer(() => app.close());
    app.startWorker();
    const job = await enqueueRun(
      app.queue,
      { resource: 'jobs', requested: 'auto', origin: 'schedule' },
      h.config,
    );
    let failed: Awaited<ReturnType<typeof app.queue.getJob>>;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      failed = await app.queue.getJob(job.id as string);
      if (failed?.failedReason) break;
      await sleep(100);
    }
    expect(failed?.failedReason).toMatch(/^403 from \/v3\/jobs.*\[redacted\]/);
    expect(JSON.stringify([failed?.failedReason, failed?.stacktrace])).not.toContain(echoed);
  });
});

describe('a job whose lock lapsed while its attempt was in hand (Redis away for longer than the lock)', () => {
  it('is taken again by the same worker, and the new attempt keeps its lock after the old one ends: the job completes, stalled once', async () => {
    const prefix = newRedisPrefix();
    defer(() => clearRedisPrefix({ HIRESYNC_REDIS_PREFIX: prefix }));
    const queueRedis = connect(inject('redisUrl'), { maxRetriesPerRequest: null });
    const observer = connect(inject('redisUrl'));
    const queueName = `${ONCE_QUEUE_PREFIX}lapse`;
    const queue = createSyncQueue(queueRedis, prefix, queueName);
    defer(() => queue.close());
    const stalled: string[] = [];
    const failed: string[] = [];
    let attempts = 0;
    let secondStarted = () => {};
    const second = new Promise<void>((resolve) => {
      secondStarted = resolve;
    });
    let firstEnded = false;
    let seenWhileSecond: unknown;
    // The first attempt ends (its run stopped, as after its run lock was lost)
    // only once the job has been handed out again; the second runs until its
    // lock has been renewed after that, or until the job stalled again.
    const worker = createJobWorker(
      queueRedis,
      prefix,
      async (job) => {
        attempts += 1;
        const lock = `${prefix}:${queueName}:${job.id}:lock`;
        if (attempts === 1) {
          // Redis came back without the lock: it outlived its TTL during the outage.
          await observer.del(lock);
          await second;
          throw new Error('run stopped: its run lock was lost');
        }
        secondStarted();
        await waitFor(async () => firstEnded);
        // What `sync` reads of the job should Redis lose it: the attempt in hand, not the one that ended.
        seenWhileSecond = worker.settlements.get(job.id as string);
        // Renewed twice since (a renewal BullMQ sent before it stopped accounts for one at most).
        let left = await observer.pttl(lock);
        let renewals = 0;
        await waitFor(async () => {
          const now = await observer.pttl(lock);
          if (now > left) renewals += 1;
          left = now;
          return renewals >= 2 || stalled.length > 1 || failed.length > 0;
        });
        return { skipped: 'second attempt done' };
      },
      { concurrency: 2, queueName, jobLockMs: 1000 },
    );
    defer(() => worker.close());
    worker.on('error', (error) => {
      // The first attempt's end, refused by Redis as the job is no longer its
      // own; BullMQ stops renewing the job's lock right after.
      if (/^(Lock mismatch|Missing lock) for job/.test(error.message)) firstEnded = true;
    });
    worker.on('stalled', (id) => stalled.push(id));
    worker.on('failed', (job) => failed.push(String(job?.id)));
    const job = await enqueueRun(
      queue,
      { resource: 'jobs', requested: 'full', origin: 'cli' },
      { runAttempts: 3, runBackoffMs: 100 },
    );
    const id = job.id as string;
    const state = await waitFor(async () => {
      const now = await queue.getJobState(id);
      return now === 'completed' || now === 'failed' ? now : undefined;
    });
    expect({ state, failedReason: (await queue.getJob(id))?.failedReason }).toEqual({
      state: 'completed',
      failedReason: undefined,
    });
    expect((await queue.getJob(id))?.returnvalue).toEqual({ skipped: 'second attempt done' });
    expect(stalled).toEqual([id]);
    expect(attempts).toBe(2);
    expect(seenWhileSecond).toEqual({ state: 'active' });
    expect(worker.settlements.get(id)).toEqual({
      state: 'completed',
      result: { skipped: 'second attempt done' },
    });
  });
});
