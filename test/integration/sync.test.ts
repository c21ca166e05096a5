import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisCheckpointStore } from '../../src/queue/redis-checkpoint-store.js';
import { ALL, type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

let h: SyncHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(options: Parameters<typeof startSyncHarness>[0] = {}) {
  h = await startSyncHarness(options);
  return h;
}

describe('sync', () => {
  it('copies all three resources so the tables match the simulator exactly', async () => {
    const t = await start({
      simulator: {
        dataset: {
          counts: { jobs: 730, job_posts: 420, tracking_links: 1210 },
          malformedEvery: 97,
        },
      },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    const outcomes = await t.sync();
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, true]);
    for (const resource of ALL) expect(await t.liveIds(resource)).toEqual(t.expectedIds(resource));
    // Every record matches what the API sent, field for field.
    const links = await t.database.db
      .withSchema('public')
      .selectFrom('tracking_links')
      .select(['id', 'raw'])
      .execute();
    const ds = t.sim.dataset;
    for (const row of links) {
      const index = (Number(row.id) - ds.idOf('tracking_links', 0)) / 7;
      expect(row.raw).toEqual(ds.record('tracking_links', index));
    }
    // Every malformed record is in rejected_records, once.
    const rejected = await t.database.db
      .withSchema('public')
      .selectFrom('rejected_records')
      .select(['resource', (eb) => eb.fn.countAll<string>().as('n')])
      .groupBy('resource')
      .orderBy('resource')
      .execute();
    expect(rejected).toEqual(
      (['job_posts', 'jobs', 'tracking_links'] as const).map((resource) => ({
        resource,
        n: String(t.expectedRejected(resource)),
      })),
    );
    expect(t.expectedRejected('tracking_links')).toBe(Math.floor(1210 / 97));
    const runs = await t.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .selectAll()
      .orderBy('id')
      .execute();
    expect(runs.map((r) => [r.resource, r.mode, r.outcome])).toEqual(
      expect.arrayContaining([
        ['jobs', 'full', 'succeeded'],
        ['job_posts', 'full', 'succeeded'],
        ['tracking_links', 'full', 'succeeded'],
      ]),
    );
    const links_run = runs.find((r) => r.resource === 'tracking_links');
    expect(links_run).toMatchObject({ pages: 13, records: '1198', rejected: '12' });
  });

  it('runs incrementally once a full run has completed, reading only the new pages', async () => {
    const t = await start({
      simulator: { dataset: { counts: { jobs: 1000 } } },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    await t.sync(['jobs']);
    const before = t.sim.stats.listRequests;
    const added = t.sim.dataset.grow('jobs', 130);
    const [outcome] = await t.sync(['jobs']);
    expect(outcome).toMatchObject({ ok: true, summary: { mode: 'incremental', pages: 2 } });
    expect(t.sim.stats.listRequests - before).toBe(2);
    const live = await t.liveIds('jobs');
    for (const id of added) expect(live).toContain(String(id));
    expect(live).toEqual(t.expectedIds('jobs'));
  });

  it('catches a deletion and an update on the next full run, not on an incremental one', async () => {
    const t = await start({
      simulator: { dataset: { counts: { tracking_links: 300 } } },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    await t.sync(['tracking_links']);
    const removed = t.sim.dataset.remove('tracking_links', 10);
    const touched = t.sim.dataset.touch('tracking_links', 20);
    await t.sync(['tracking_links']);
    const row = () =>
      t.database.db
        .withSchema('public')
        .selectFrom('tracking_links')
        .select(['raw', 'deleted_at'])
        .where('id', '=', String(touched))
        .executeTakeFirstOrThrow();
    const gone = () =>
      t.database.db
        .withSchema('public')
        .selectFrom('tracking_links')
        .select('deleted_at')
        .where('id', '=', String(removed))
        .executeTakeFirstOrThrow();
    expect((await gone()).deleted_at).toBeNull();
    expect((await row()).raw).not.toEqual(t.sim.dataset.record('tracking_links', 20));
    const [outcome] = await t.sync(['tracking_links'], 'full');
    expect(outcome).toMatchObject({ ok: true, summary: { mode: 'full', deleted: 1 } });
    expect((await gone()).deleted_at).not.toBeNull();
    expect((await row()).raw).toEqual(t.sim.dataset.record('tracking_links', 20));
    expect(await t.liveIds('tracking_links')).toEqual(t.expectedIds('tracking_links'));
  });

  it('resumes an interrupted run from its checkpoint, keeping its run id', async () => {
    const t = await start({
      simulator: { dataset: { counts: { job_posts: 1000 } } },
      env: { HIRESYNC_PER_PAGE: '50' },
    });
    const [first] = await t.syncStoppedAfter('job_posts', 4);
    expect(first).toMatchObject({ ok: false, error: 'interrupted' });
    const redis = new Redis(t.env.REDIS_URL as string);
    const checkpoint = await new RedisCheckpointStore(redis, t.config.redisPrefix).load(
      'job_posts',
    );
    redis.disconnect();
    expect(checkpoint).toMatchObject({ pagesDone: 4, mode: 'full' });
    const requestsBefore = t.sim.stats.listRequests;
    const [second] = await t.sync(['job_posts']);
    expect(second).toMatchObject({
      ok: true,
      summary: { runId: checkpoint?.runId, resumed: true, pages: 20, records: 1000 },
    });
    // Pages 5..20 were read, and nothing committed before was read again.
    expect(t.sim.stats.listRequests - requestsBefore).toBe(16);
    const next = new URL(checkpoint?.nextUrl as string);
    expect(t.sim.stats.receivedTargets.at(-16)).toBe(`${next.pathname}${next.search}`);
    expect(await t.liveIds('job_posts')).toEqual(t.expectedIds('job_posts'));
  });

  it('drops a checkpointed cursor the API rejects and restarts the run from its first page', async () => {
    const t = await start({
      simulator: { dataset: { counts: { jobs: 600 } } },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    await t.syncStoppedAfter('jobs', 2);
    t.sim.rotateCursorKey();
    const [outcome] = await t.sync(['jobs']);
    expect(outcome).toMatchObject({ ok: true, summary: { pages: 6, records: 600 } });
    expect(t.sim.stats.byStatus['422']).toBe(1);
    expect(t.log.text()).toContain(
      'checkpointed cursor rejected by the API; restarting the run from its first page',
    );
    expect(await t.liveIds('jobs')).toEqual(t.expectedIds('jobs'));
  });

  it('fails a run at once on 403, recording the error, without retrying', async () => {
    const t = await start({ simulator: { nonAdminSubs: ['42'] }, env: { HIRESYNC_SUB: '42' } });
    const [outcome] = await t.sync(['jobs']);
    expect(outcome).toMatchObject({
      ok: false,
      error: expect.stringContaining('403 from /v3/jobs'),
    });
    expect(t.sim.stats.listRequests).toBe(1);
    const run = await t.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .selectAll()
      .executeTakeFirstOrThrow();
    expect(run).toMatchObject({
      outcome: 'failed',
      error: expect.stringContaining('site administrator'),
    });
  });

  it('retries a run through a burst of server errors and completes from its checkpoint', async () => {
    const t = await start({
      simulator: { dataset: { counts: { jobs: 500 } } },
      env: { HIRESYNC_PER_PAGE: '100', HIRESYNC_MAX_RETRIES: '1' },
    });
    t.sim.inject({ kind: 'delay', ms: 0 }, 2);
    t.sim.inject({ kind: 'status', status: 503 }, 2);
    const [outcome] = await t.sync(['jobs']);
    expect(outcome).toMatchObject({ ok: true, summary: { pages: 5, records: 500 } });
    expect(await t.liveIds('jobs')).toEqual(t.expectedIds('jobs'));
    const runs = await t.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select('id')
      .execute();
    expect(runs).toHaveLength(1);
  });

  it('never runs the same resource twice at once, across workers', async () => {
    const t = await start({
      simulator: { dataset: { counts: { tracking_links: 400 } }, latencyMs: 20 },
      env: { HIRESYNC_PER_PAGE: '50' },
    });
    await Promise.all([
      t.sync(['tracking_links']),
      t.sync(['tracking_links']),
      t.sync(['tracking_links']),
    ]);
    const runs = await t.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select([
        'id',
        sql<number>`extract(epoch from started_at)`.as('s'),
        sql<number>`extract(epoch from finished_at)`.as('f'),
        'outcome',
      ])
      .orderBy('started_at')
      .execute();
    expect(runs.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < runs.length; i += 1) {
      expect(Number(runs[i]?.s)).toBeGreaterThanOrEqual(Number(runs[i - 1]?.f));
    }
    expect(runs.every((r) => r.outcome === 'succeeded')).toBe(true);
    expect(await t.liveIds('tracking_links')).toEqual(t.expectedIds('tracking_links'));
  });
});
