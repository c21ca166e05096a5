import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { PrivatePostgres, PrivateRedis } from '../../bench/private-servers.js';
import { POSTGRES_SERVER, presentUnlessCi, REDIS_SERVER } from '../../bench/required-binaries.js';
import { RedisCheckpointStore } from '../../src/queue/redis-checkpoint-store.js';
import type { Checkpoint } from '../../src/sync/ports.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { liveIdsIn } from '../support/live-ids.js';
import type { SyncHarness } from '../support/sync-harness.js';

const { defer, harness, cli } = cleanupAfterEach();
// The restarts need servers of the test's own: skipped without them, failed under CI.
const privateRedis = presentUnlessCi(PrivateRedis.available(), REDIS_SERVER);
const privatePostgres = presentUnlessCi(PrivatePostgres.available(), POSTGRES_SERVER);

async function pagesCommitted(h: SyncHarness, resource: string): Promise<number> {
  const run = await h.database.db
    .withSchema('public')
    .selectFrom('sync_runs')
    .select('pages')
    .where('resource', '=', resource)
    .executeTakeFirst();
  return run?.pages ?? 0;
}

async function loadCheckpoint(
  h: SyncHarness,
  resource: 'jobs' | 'job_posts' | 'tracking_links',
): Promise<Checkpoint | undefined> {
  const redis = new Redis(h.env.REDIS_URL as string);
  try {
    return await new RedisCheckpointStore(redis, h.config.redisPrefix).load(resource);
  } finally {
    redis.disconnect();
  }
}

describe('crash recovery', () => {
  it('resumes after kill -9 mid-walk, reading at most one committed page again, and ends exact', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { job_posts: 1500 } }, latencyMs: 25 },
      env: { HIRESYNC_PER_PAGE: '50', HIRESYNC_RUN_LOCK_TTL: '1s' },
    });
    const { child, exit } = cli(['sync', '--resource', 'job_posts'], h.env);
    await waitFor(async () => (await pagesCommitted(h, 'job_posts')) >= 6);
    child.kill('SIGKILL');
    await exit;
    const checkpoint = await loadCheckpoint(h, 'job_posts');
    // The kill may fall between a page's commit and its checkpoint: that page is read again.
    expect(checkpoint?.pagesDone).toBeGreaterThanOrEqual(5);
    const requestsBefore = h.sim.stats.listRequests;
    const [outcome] = await h.sync(['job_posts']);
    expect(outcome).toMatchObject({
      ok: true,
      summary: { runId: checkpoint?.runId, resumed: true, records: 1500, pages: 30 },
    });
    const reread = h.sim.stats.listRequests - requestsBefore - (30 - (checkpoint?.pagesDone ?? 0));
    expect(reread).toBeGreaterThanOrEqual(0);
    expect(reread).toBeLessThanOrEqual(1);
    expect(await h.liveIds('job_posts')).toEqual(h.expectedIds('job_posts'));
  });

  it('stops the worker cleanly on SIGTERM with a checkpoint, exit 0, and the next start resumes', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { tracking_links: 1500 } }, latencyMs: 25 },
      env: {
        HIRESYNC_PER_PAGE: '50',
        HIRESYNC_RESOURCES: 'tracking_links',
        HIRESYNC_INCREMENTAL_EVERY: '1h',
      },
    });
    const worker = cli(['worker'], h.env);
    // The schedule (or a queued run) starts a first, full run.
    const app = h.app();
    defer(() => app.close());
    const { enqueueRun } = await import('../../src/queue/sync-job.js');
    await enqueueRun(
      app.queue,
      { resource: 'tracking_links', requested: 'auto', origin: 'cli' },
      h.config,
    );
    await waitFor(async () => (await pagesCommitted(h, 'tracking_links')) >= 4);
    const port = await waitFor(async () => /"port":(\d+)/.exec(worker.stdout())?.[1]);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok' });
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(
      /hiresync_pages_total\{account="default",resource="tracking_links"\} \d+/,
    );
    expect(metrics).toContain('hiresync_http_requests_total{account="default",status="200"}');
    worker.child.kill('SIGTERM');
    expect(await worker.exit).toBe(0);
    const checkpoint = await loadCheckpoint(h, 'tracking_links');
    expect(checkpoint).toBeDefined();
    const run = await h.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .selectAll()
      .executeTakeFirstOrThrow();
    expect(run.outcome).toBe('running');
    expect(run.pages).toBe(checkpoint?.pagesDone);
    expect(worker.stdout()).toContain('run interrupted; checkpoint kept');
    // The next start resumes run 1: the job the worker put back in the queue,
    // or this sync's own job, whichever a worker takes first.
    const [outcome] = await h.sync(['tracking_links']);
    expect(outcome).toMatchObject({ ok: true });
    const resumed = await h.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .selectAll()
      .where('id', '=', run.id)
      .executeTakeFirstOrThrow();
    expect(resumed).toMatchObject({
      outcome: 'succeeded',
      pages: 30,
      records: '1500',
      mode: 'full',
    });
    expect(await h.liveIds('tracking_links')).toEqual(h.expectedIds('tracking_links'));
  });
});

describe('infrastructure restarts', () => {
  it.runIf(privateRedis)(
    'completes a sync across a Redis restart mid-run, printing no raw connection errors',
    async () => {
      const redis = await PrivateRedis.start();
      defer(() => redis.close());
      // The outage is the log's to tell (once per connection), never raw stacks on stderr.
      const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
      defer(() => printed.mockRestore());
      const h = await harness({
        simulator: { dataset: { counts: { jobs: 1000 } }, latencyMs: 20 },
        env: {
          HIRESYNC_PER_PAGE: '50',
          REDIS_URL: redis.url,
          HIRESYNC_RUN_ATTEMPTS: '10',
          HIRESYNC_RUN_BACKOFF: '300ms',
        },
      });
      let restarted: Promise<void> | undefined;
      const [outcome] = await h.sync(['jobs'], 'auto', {
        onProgress: (p) => {
          if (p.pages === 3 && !restarted) restarted = redis.restart(500);
        },
      });
      await restarted;
      expect(restarted).toBeDefined();
      expect(outcome).toMatchObject({ ok: true });
      expect(printed).not.toHaveBeenCalled();
      expect(await h.liveIds('jobs')).toEqual(h.expectedIds('jobs'));
    },
  );

  it.runIf(privatePostgres)('completes a sync across a Postgres restart mid-run', async () => {
    const pg = await PrivatePostgres.start();
    defer(() => pg.close());
    const db = createDatabase(pg.url);
    defer(() => db.destroy());
    await migrateAll(db);
    const h = await harness({
      simulator: { dataset: { counts: { job_posts: 1000 } }, latencyMs: 20 },
      env: {
        HIRESYNC_PER_PAGE: '50',
        DATABASE_URL: pg.url,
        HIRESYNC_RUN_ATTEMPTS: '10',
        HIRESYNC_RUN_BACKOFF: '300ms',
      },
    });
    let restarted = false;
    const [outcome] = await h.sync(['job_posts'], 'auto', {
      onProgress: (p) => {
        if (p.pages === 3 && !restarted) {
          restarted = true;
          pg.restart();
        }
      },
    });
    expect(restarted).toBe(true);
    expect(outcome).toMatchObject({ ok: true });
    // Read again at most: the page whose checkpoint the restart may have
    // beaten, the page whose write it failed, and the one fetched ahead.
    const targets = h.sim.stats.receivedTargets;
    expect(targets.length - new Set(targets).size).toBeLessThanOrEqual(3);
    expect(await liveIdsIn(db, 'job_posts')).toEqual(h.expectedIds('job_posts'));
    const runs = await db.withSchema('public').selectFrom('sync_runs').selectAll().execute();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ outcome: 'succeeded', records: '1000' });
  });
});
