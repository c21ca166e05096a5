import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { runOnce } from '../../src/queue/run-once.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { harness } = cleanupAfterEach();
const FILTER = 'updated_at=gte|{since}';

describe('incremental runs with HIRESYNC_UPDATED_FILTER', () => {
  it('send the filter verbatim with since = the last success start less the lookback, and land updates and new records', async () => {
    const t = await harness({
      simulator: { dataset: { counts: { tracking_links: 1000 } } },
      env: {
        HIRESYNC_PER_PAGE: '100',
        HIRESYNC_UPDATED_FILTER: FILTER,
        HIRESYNC_UPDATED_LOOKBACK: '2m',
      },
    });
    await t.sync(['tracking_links']);
    const { rows } = await sql<{ since: string }>`
      select to_char((started_at - interval '2 minutes') at time zone 'UTC',
        'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as since
      from sync_runs where outcome = 'succeeded' order by id desc limit 1`.execute(t.database.db);
    const since = rows[0]?.since as string;
    // Old records change (an incremental run by id would miss them), new ones arrive.
    const touched = [5, 250, 600].map((i) => t.sim.dataset.touch('tracking_links', i));
    const added = t.sim.dataset.grow('tracking_links', 150);
    const before = t.sim.stats.receivedTargets.length;

    const [outcome] = await t.sync(['tracking_links']);
    expect(outcome).toMatchObject({ ok: true, summary: { mode: 'incremental', pages: 2 } });
    const targets = t.sim.stats.receivedTargets.slice(before);
    const sent = `updated_at=gte|${encodeURIComponent(since)}`;
    expect(targets[0]).toBe(`/v3/tracking_links?per_page=100&${sent}`);
    // Follow-ups are the next links as given: a cursor and nothing else.
    for (const target of targets.slice(1))
      expect(target).toMatch(/^\/v3\/tracking_links\?cursor=[\w-]+$/);
    const run = await t.database.db
      .selectFrom('sync_runs')
      .select(['filter', 'records'])
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(run).toEqual({ filter: sent, records: '153' });

    expect(await t.liveIds('tracking_links')).toEqual(t.expectedIds('tracking_links'));
    for (const id of [...touched, ...added]) {
      const row = await t.database.db
        .selectFrom('tracking_links')
        .select('raw')
        .where('id', '=', String(id))
        .executeTakeFirstOrThrow();
      const index = (id - t.sim.dataset.idOf('tracking_links', 0)) / 7;
      expect(row.raw).toEqual(t.sim.dataset.record('tracking_links', index));
    }
  });

  it('starts from the last run that saw every update, not from a run that stopped by id', async () => {
    const t = await harness({
      simulator: { dataset: { counts: { jobs: 500 } } },
      env: { HIRESYNC_PER_PAGE: '100', HIRESYNC_UPDATED_LOOKBACK: '1ms' },
    });
    await t.sync(['jobs']);
    // An old job changes; an incremental run by id (the filter not yet set) misses it.
    const touched = t.sim.dataset.touch('jobs', 3);
    await t.sync(['jobs']);
    // The filter is set: the next incremental run must still catch the change.
    const config = loadConfig({ ...t.env, HIRESYNC_UPDATED_FILTER: FILTER });
    const app = createApp(config, t.log.logger, { defaultMetrics: false });
    try {
      const [outcome] = await runOnce(app, ['jobs'], 'auto');
      expect(outcome).toMatchObject({ ok: true, summary: { mode: 'incremental' } });
    } finally {
      await app.close();
    }
    const row = await t.database.db
      .selectFrom('jobs')
      .select('data')
      .where('id', '=', String(touched))
      .executeTakeFirstOrThrow();
    expect(row.data).toEqual(t.sim.dataset.record('jobs', 3));
  });

  it('is never sent by a full run, and a full run still sweeps', async () => {
    const t = await harness({
      simulator: { dataset: { counts: { jobs: 300 } } },
      env: { HIRESYNC_PER_PAGE: '100', HIRESYNC_UPDATED_FILTER: FILTER },
    });
    await t.sync(['jobs']);
    t.sim.dataset.remove('jobs', 3);
    await t.sync(['jobs'], 'full');
    expect(t.sim.stats.receivedTargets.some((target) => target.includes('updated_at'))).toBe(false);
    expect(await t.liveIds('jobs')).toEqual(t.expectedIds('jobs'));
    const filters = await t.database.db.selectFrom('sync_runs').select('filter').execute();
    expect(filters.map((f) => f.filter)).toEqual([null, null]);
  });

  it('keeps the filter and status together on the first request of a filtered list', async () => {
    const t = await harness({
      simulator: { dataset: { counts: { jobs: 300 } } },
      env: {
        HIRESYNC_PER_PAGE: '100',
        HIRESYNC_UPDATED_FILTER: FILTER,
        HIRESYNC_JOBS_STATUS: 'open',
      },
    });
    await t.sync(['jobs']);
    const before = t.sim.stats.receivedTargets.length;
    t.sim.dataset.touch('jobs', 7);
    await t.sync(['jobs']);
    const first = t.sim.stats.receivedTargets[before] as string;
    expect(first).toMatch(/^\/v3\/jobs\?status=open&per_page=100&updated_at=gte\|\d{4}-/);
    const run = await t.database.db
      .selectFrom('sync_runs')
      .select('filter')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(run.filter).toMatch(/^status=open&updated_at=gte\|/);
  });
});
