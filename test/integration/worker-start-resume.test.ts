import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { RedisCheckpointStore } from '../../src/queue/redis-checkpoint-store.js';
import { createSyncQueue } from '../../src/queue/sync-job.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import type { SyncHarness } from '../support/sync-harness.js';

const { defer, harness, cli } = cleanupAfterEach();

async function runsOf(h: SyncHarness, resource: string) {
  return h.database.db
    .withSchema('public')
    .selectFrom('sync_runs')
    .select(['id', 'outcome', 'mode'])
    .where('resource', '=', resource)
    .orderBy('id')
    .execute();
}

describe('worker start-up', () => {
  it('resumes only the run a killed process left, never a run it has just started itself, and runs each once', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { jobs: 400, job_posts: 400 } }, latencyMs: 20 },
      env: {
        HIRESYNC_PER_PAGE: '20',
        HIRESYNC_RESOURCES: 'jobs,job_posts',
        HIRESYNC_RUN_LOCK_TTL: '1s',
      },
    });
    const redis = new Redis(inject('redisUrl'));
    defer(() => redis.disconnect());
    const prefix = h.env.HIRESYNC_REDIS_PREFIX as string;

    // A sync of job_posts killed outright: its checkpoint stays, its lock expires.
    const killed = cli(['sync', '--resource', 'job_posts'], h.env);
    await waitFor(async () => {
      const [run] = await h.database.db
        .withSchema('public')
        .selectFrom('sync_runs')
        .select('pages')
        .execute();
      return (run?.pages ?? 0) >= 3;
    });
    killed.child.kill('SIGKILL');
    await killed.exit;
    const left = await new RedisCheckpointStore(redis, prefix).load('job_posts');
    expect(left).toBeDefined();
    await waitFor(async () => (await redis.exists(`${prefix}:run-lock:job_posts`)) === 0);

    // The worker's incremental schedules fire at once: jobs starts its first run.
    const worker = cli(['worker'], h.env);
    const queueRedis = redis.duplicate({ maxRetriesPerRequest: null });
    const queue = createSyncQueue(queueRedis, prefix);
    defer(async () => {
      await queue.close();
      queueRedis.disconnect();
    });
    // Settled: no run running, and nothing queued but the schedules' next runs.
    await waitFor(
      async () => {
        const done = (await runsOf(h, 'jobs')).concat(await runsOf(h, 'job_posts'));
        if (done.length < 2 || done.some((r) => r.outcome === 'running')) return false;
        // (The spread puts a schedule's next run anywhere in its period: not due at once.)
        const jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized']);
        return jobs.every(
          (j) => j.data.origin === 'schedule' && j.timestamp + j.delay > Date.now() + 5_000,
        );
      },
      30_000,
      200,
    );
    worker.child.kill('SIGTERM');
    expect(await worker.exit).toBe(0);

    // Each resource's full read ran once: job_posts' interrupted run to its end,
    // jobs' first run. A schedule's slot may fall in the seconds the test waits
    // (its offset is fixed, the wall clock is not): only an incremental run follows.
    const [postsRun, ...laterPosts] = await runsOf(h, 'job_posts');
    expect(postsRun).toEqual({ id: left?.runId, outcome: 'succeeded', mode: 'full' });
    const [jobsRun, ...laterJobs] = await runsOf(h, 'jobs');
    expect(jobsRun).toEqual({ id: expect.any(String), outcome: 'succeeded', mode: 'full' });
    for (const later of [...laterPosts, ...laterJobs]) {
      expect(later).toEqual({ id: expect.any(String), outcome: 'succeeded', mode: 'incremental' });
    }
    const resumes = worker
      .stdout()
      .split('\n')
      .filter((l) => l.includes('queued the interrupted run to resume'))
      .map((l) => JSON.parse(l) as { resource: string; runId: string });
    expect(resumes.map((r) => [r.resource, r.runId])).toEqual([['job_posts', left?.runId]]);
  });

  it("leaves a live run's checkpoint to its process: no resume message, and the resume job runs nothing once that run has finished", async () => {
    const h = await harness({
      simulator: { dataset: { counts: { jobs: 400 } }, latencyMs: 100 },
      env: { HIRESYNC_PER_PAGE: '10', HIRESYNC_RESOURCES: 'jobs' },
    });
    // A sync of another process, live and holding its run lock.
    const live = cli(['sync', '--resource', 'jobs'], h.env);
    await waitFor(async () => {
      const [run] = await h.database.db
        .withSchema('public')
        .selectFrom('sync_runs')
        .select('pages')
        .execute();
      return (run?.pages ?? 0) >= 2;
    });
    const worker = cli(['worker'], h.env);
    expect(await live.exit).toBe(0);
    await waitFor(async () => worker.stdout().includes('nothing to resume'), 40_000, 100);
    worker.child.kill('SIGTERM');
    expect(await worker.exit).toBe(0);
    expect(worker.stdout()).not.toContain('queued the interrupted run to resume');
    const [first, ...later] = await h.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select(['outcome', 'mode', 'records'])
      .orderBy('id')
      .execute();
    expect(first).toEqual({ outcome: 'succeeded', mode: 'full', records: '400' });
    // Only a scheduled incremental run may follow, never a second full read.
    expect(later.every((r) => r.mode === 'incremental' && r.outcome !== 'running')).toBe(true);
  });
});
