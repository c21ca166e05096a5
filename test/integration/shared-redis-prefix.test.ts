import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { RedisCheckpointStore } from '../../src/queue/redis-checkpoint-store.js';
import { createTestDatabase } from '../support/databases.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';

const { defer, harness } = cleanupAfterEach();

describe('two deployments, two databases, one HIRESYNC_REDIS_PREFIX', () => {
  it("the second is refused at preflight, naming the variable and both databases, and never clears the first's checkpoint", async () => {
    const a = await harness({
      simulator: { dataset: { counts: { jobs: 120, job_posts: 10 } } },
      env: { HIRESYNC_PER_PAGE: '20' },
    });
    // Deployment A: a sync (which claims the prefix), then a run of jobs interrupted after 2 pages.
    expect((await runCli(['sync', '--resource', 'job_posts'], a.env)).code).toBe(0);
    await a.syncStoppedAfter('jobs', 2);
    const redis = new Redis(inject('redisUrl'));
    defer(() => redis.disconnect());
    const checkpoints = new RedisCheckpointStore(redis, a.env.HIRESYNC_REDIS_PREFIX);
    const pending = await checkpoints.load('jobs');
    expect(pending).toMatchObject({ pagesDone: 2 });

    // Deployment B: the same Redis and prefix, another database.
    const other = await createTestDatabase(inject('databaseUrl'));
    defer(() => other.drop());
    const b = { ...a.env, DATABASE_URL: other.url };
    for (const command of ['sync', 'worker', 'status']) {
      const result = await runCli([command], b, 20_000);
      expect(result.code, command).toBe(1);
      expect(result.stderr, command).toContain('HIRESYNC_REDIS_PREFIX');
      expect(result.stderr, command).toContain(a.database.name);
      expect(result.stderr, command).toContain(other.name);
      expect(result.stderr, command).not.toContain('postgres://');
    }
    expect(await checkpoints.load('jobs')).toEqual(pending);
    expect(
      await other.db.withSchema('public').selectFrom('sync_runs').selectAll().execute(),
    ).toEqual([]);

    // A resumes its run where it stopped: same run id, the remaining pages only.
    const resumed = await runCli(['sync', '--resource', 'jobs'], a.env);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('resuming run from checkpoint');
    const runs = await a.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select(['id', 'outcome', 'pages'])
      .where('resource', '=', 'jobs')
      .execute();
    expect(runs).toEqual([{ id: pending?.runId, outcome: 'succeeded', pages: 6 }]);
  });
});
