import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { deletePrefix } from '../../src/queue/redis.js';
import { RedisCheckpointStore } from '../../src/queue/redis-checkpoint-store.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';

const { defer, harness } = cleanupAfterEach();

describe('Redis loses the queue’s keys in the middle of a sync', () => {
  it('sync exits 1 and the run ends failed, saying the queue’s state was lost, instead of running for good', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { jobs: 300 } }, latencyMs: 150 },
      // A short lock TTL: its renewal finds the lock gone within a page or two.
      env: { HIRESYNC_PER_PAGE: '10', HIRESYNC_RUN_LOCK_TTL: '1s' },
    });
    const redis = new Redis(inject('redisUrl'));
    defer(() => redis.disconnect());
    const sync = runCli(['sync', '--resource', 'jobs'], h.env);
    const run = () =>
      h.database.db
        .withSchema('public')
        .selectFrom('sync_runs')
        .select(['id', 'outcome', 'pages', 'error', 'finished_at'])
        .where('resource', '=', 'jobs')
        .executeTakeFirst();
    await waitFor(async () => ((await run())?.pages ?? 0) >= 2);
    // A FLUSHALL of the prefix, or a failover to an empty replica.
    await deletePrefix(redis, h.env.HIRESYNC_REDIS_PREFIX as string);
    const result = await sync;
    expect(result.code).toBe(1);
    const row = await run();
    expect(row).toMatchObject({ outcome: 'failed' });
    expect(row?.finished_at).not.toBeNull();
    expect(row?.error).toMatch(/queue's state was lost/);
    expect(row?.pages).toBeLessThan(30);
    expect(result.stdout).toMatch(/^jobs\s.*failed: the queue's state was lost/m);
    expect(await new RedisCheckpointStore(redis, h.env.HIRESYNC_REDIS_PREFIX).load('jobs')).toBe(
      undefined,
    );
    // Nothing is left half-done: the next sync runs anew, to the end.
    expect((await runCli(['sync', '--resource', 'jobs'], h.env)).code).toBe(0);
    const runs = await h.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select(['outcome'])
      .where('resource', '=', 'jobs')
      .orderBy('id')
      .execute();
    expect(runs.map((r) => r.outcome)).toEqual(['failed', 'succeeded']);
  });
});
