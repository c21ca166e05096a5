import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { RedisCheckpointStore } from '../../src/queue/redis-checkpoint-store.js';
import { runOnce } from '../../src/queue/run-once.js';
import type { Checkpoint } from '../../src/sync/ports.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';
import type { SyncHarness } from '../support/sync-harness.js';

const { harness, cli } = cleanupAfterEach();

const EXTRA_WALK = { HIRESYNC_EXTRA_WALKS: 'job_posts?active=false' };

/** Ids (as text) of the simulator's job posts that v3 hides from a plain walk, newest first. */
function inactiveIds(h: SyncHarness): string[] {
  const ds = h.sim.dataset;
  return [...ds.presentIndexes('job_posts')]
    .filter((i) => ds.isInactive('job_posts', i))
    .map((i) => String(ds.idOf('job_posts', i)));
}

async function runsOf(h: SyncHarness) {
  return h.database.db
    .withSchema('public')
    .selectFrom('sync_runs')
    .select(['id', 'mode', 'outcome', 'pages', 'records', 'deleted'])
    .where('resource', '=', 'job_posts')
    .orderBy('id')
    .execute();
}

async function loadCheckpoint(h: SyncHarness): Promise<Checkpoint | undefined> {
  const redis = new Redis(h.env.REDIS_URL as string);
  try {
    return await new RedisCheckpointStore(redis, h.config.redisPrefix).load('job_posts');
  } finally {
    redis.disconnect();
  }
}

describe('extra walks for rows hidden by default', () => {
  it('a full run without the extra walk soft-deletes the job posts the API hides; with it they stay live, in one run', async () => {
    const h = await harness({
      simulator: { dataset: { hideInactiveJobPosts: true, counts: { job_posts: 70 } } },
      env: { HIRESYNC_PER_PAGE: '10' },
    });
    const hidden = inactiveIds(h);
    expect(hidden).toHaveLength(10);
    // With the extra walk (as HIRESYNC_EXTRA_WALKS=job_posts?active=false sets it).
    const withWalk = createApp(
      { ...h.config, extraWalks: { job_posts: ['active=false'] } },
      h.log.logger,
      {
        defaultMetrics: false,
      },
    );
    try {
      const [first] = await runOnce(withWalk, ['job_posts'], 'full');
      // 60 active posts on 6 pages, then the 10 inactive ones on 1 page: one run.
      expect(first).toMatchObject({ ok: true, summary: { pages: 7, records: 70 } });
    } finally {
      await withWalk.close();
    }
    expect(await h.liveIds('job_posts')).toEqual(h.expectedIds('job_posts'));
    expect(await runsOf(h)).toHaveLength(1);
    // Without it: a plain walk does not list them, and the sweep takes them for deleted.
    const [plain] = await h.sync(['job_posts'], 'full');
    expect(plain).toMatchObject({ ok: true, summary: { pages: 6, records: 60, deleted: 10 } });
    const live = await h.liveIds('job_posts');
    expect(live).toHaveLength(60);
    expect(live.filter((id) => hidden.includes(id))).toEqual([]);
  });

  it('with HIRESYNC_EXTRA_WALKS=job_posts?active=false a full run keeps the inactive posts live, in one sync_runs row', async () => {
    const h = await harness({
      simulator: { dataset: { hideInactiveJobPosts: true, counts: { job_posts: 70 } } },
      env: { HIRESYNC_PER_PAGE: '10', ...EXTRA_WALK },
    });
    const [first] = await h.sync(['job_posts'], 'full');
    expect(first).toMatchObject({ ok: true, summary: { pages: 7, records: 70, deleted: 0 } });
    const [second] = await h.sync(['job_posts'], 'full');
    expect(second).toMatchObject({ ok: true, summary: { pages: 7, records: 70, deleted: 0 } });
    expect(await h.liveIds('job_posts')).toEqual(h.expectedIds('job_posts'));
    const runs = await runsOf(h);
    expect(runs.map((r) => [r.mode, r.outcome, r.pages, Number(r.records)])).toEqual([
      ['full', 'succeeded', 7, 70],
      ['full', 'succeeded', 7, 70],
    ]);
    // The extra walk's first request carried active=false beside per_page.
    expect(h.sim.stats.receivedTargets).toContain('/v3/job_posts?per_page=10&active=false');
    const stored = await h.database.db
      .withSchema('public')
      .selectFrom('job_posts')
      .select(['id', 'data'])
      .where('id', 'in', inactiveIds(h))
      .execute();
    expect(stored.map((r) => (r.data as { active?: boolean }).active)).toEqual(
      Array(10).fill(false),
    );
  });

  it('resumes a sync killed in the middle of its second walk in that walk, ending exact in one run', async () => {
    const h = await harness({
      simulator: {
        dataset: { hideInactiveJobPosts: true, counts: { job_posts: 140 } },
        latencyMs: 150,
      },
      env: { HIRESYNC_PER_PAGE: '5', HIRESYNC_RUN_LOCK_TTL: '1s', ...EXTRA_WALK },
    });
    // 120 active posts on 24 pages, then 20 inactive ones on 4 pages.
    const { child, exit } = cli(['sync', '--resource', 'job_posts'], h.env);
    const pages = async () => (await runsOf(h))[0]?.pages ?? 0;
    await waitFor(async () => (await pages()) >= 25, 60_000);
    child.kill('SIGKILL');
    await exit;
    const checkpoint = await loadCheckpoint(h);
    expect(checkpoint).toMatchObject({ walk: 1, walkQuery: 'active=false' });
    expect(checkpoint?.pagesDone).toBeGreaterThanOrEqual(25);
    expect(checkpoint?.pagesDone).toBeLessThan(28);
    const requestsBefore = h.sim.stats.listRequests;
    const [outcome] = await h.sync(['job_posts']);
    expect(outcome).toMatchObject({
      ok: true,
      summary: { runId: checkpoint?.runId, resumed: true, pages: 28, records: 140, deleted: 0 },
    });
    // Only the second walk's remaining pages were read (and at most the one in flight again).
    const reread = h.sim.stats.listRequests - requestsBefore - (28 - (checkpoint?.pagesDone ?? 0));
    expect(reread).toBeGreaterThanOrEqual(0);
    expect(reread).toBeLessThanOrEqual(1);
    expect(await h.liveIds('job_posts')).toEqual(h.expectedIds('job_posts'));
    expect(await runsOf(h)).toHaveLength(1);
  });

  it('resumes a checkpoint saved before extra walks existed (no walk field) in the default walk, then reads the extra walk', async () => {
    const h = await harness({
      simulator: { dataset: { hideInactiveJobPosts: true, counts: { job_posts: 70 } } },
      env: { HIRESYNC_PER_PAGE: '10', ...EXTRA_WALK },
    });
    await h.syncStoppedAfter('job_posts', 2);
    const saved = await loadCheckpoint(h);
    expect(saved).toMatchObject({ walk: 0, pagesDone: 2 });
    // As the code before extra walks wrote it: no walk, no walk query, no updated query.
    const { walk: _w, walkQuery: _q, updatedQuery: _u, ...old } = saved as Checkpoint;
    const redis = new Redis(h.env.REDIS_URL as string);
    try {
      const key = `${h.config.redisPrefix}:checkpoint:job_posts`;
      expect(await redis.exists(key)).toBe(1);
      await redis.set(key, JSON.stringify(old));
    } finally {
      redis.disconnect();
    }
    expect(await loadCheckpoint(h)).toMatchObject({ walk: 0, runId: saved?.runId });
    const [outcome] = await h.sync(['job_posts']);
    expect(outcome).toMatchObject({
      ok: true,
      summary: { runId: saved?.runId, resumed: true, pages: 7, records: 70, deleted: 0 },
    });
    expect(await h.liveIds('job_posts')).toEqual(h.expectedIds('job_posts'));
  });

  it('refuses a malformed HIRESYNC_EXTRA_WALKS at start with exit 2, naming the item', async () => {
    const result = await runCli(['sync'], {
      HIRESYNC_BASE_URL: 'https://harvest.example.com',
      HIRESYNC_AUTH_URL: 'https://auth.example.com',
      HIRESYNC_CLIENT_ID: 'client-1',
      HIRESYNC_CLIENT_SECRET: 'secret-1',
      DATABASE_URL: 'postgres://u@db.invalid/hiresync',
      REDIS_URL: 'redis://cache.invalid:6379',
      HIRESYNC_EXTRA_WALKS: 'job_posts?active=false,users',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('HIRESYNC_EXTRA_WALKS');
    expect(result.stderr).toContain('"users" is not NAME?QUERY');
  });
});
