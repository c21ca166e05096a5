import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { runOnce } from '../../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';

const { harness } = cleanupAfterEach();
const FILTER = 'updated_at=gte|{since}';

describe('incremental runs with HIRESYNC_UPDATED_FILTER', () => {
  it("send the filter verbatim with since = the API's Date at the last success's first response less the lookback, and land updates and new records", async () => {
    const t = await harness({
      simulator: { dataset: { counts: { tracking_links: 1000 } } },
      env: {
        HIRESYNC_PER_PAGE: '100',
        HIRESYNC_UPDATED_FILTER: FILTER,
        HIRESYNC_UPDATED_LOOKBACK: '2m',
      },
    });
    await t.sync(['tracking_links']);
    // The simulator's clock is the worker's: its Date or the run's start,
    // whichever is earlier (a Date is whole seconds, and never trusted past the start).
    const { rows } = await sql<{ since: string }>`
      select to_char((least(api_started_at, started_at) - interval '2 minutes') at time zone 'UTC',
        'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as since
      from public.sync_runs where outcome = 'succeeded' and api_started_at is not null
      order by id desc limit 1`.execute(t.database.db);
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
      .withSchema('public')
      .selectFrom('sync_runs')
      .select(['filter', 'records'])
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(run).toEqual({ filter: sent, records: '153' });

    expect(await t.liveIds('tracking_links')).toEqual(t.expectedIds('tracking_links'));
    for (const id of [...touched, ...added]) {
      const row = await t.database.db
        .withSchema('public')
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
    const config = loadConfig({ ...t.env, HIRESYNC_UPDATED_FILTER: FILTER }, RESOURCE_NAMES);
    const app = createApp(config, t.log.logger, { defaultMetrics: false });
    try {
      const [outcome] = await runOnce(app, ['jobs'], 'auto');
      expect(outcome).toMatchObject({ ok: true, summary: { mode: 'incremental' } });
    } finally {
      await app.close();
    }
    const row = await t.database.db
      .withSchema('public')
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
    const filters = await t.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select('filter')
      .execute();
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
      .withSchema('public')
      .selectFrom('sync_runs')
      .select('filter')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(run.filter).toMatch(/^status=open&updated_at=gte\|/);
  });

  it('catches an update made between runs when the API clock is 10 minutes behind the worker and the lookback is 5', async () => {
    const t = await harness({
      simulator: { clockSkewMs: -10 * 60_000, dataset: { counts: { jobs: 300 } } },
      env: {
        HIRESYNC_PER_PAGE: '100',
        HIRESYNC_UPDATED_FILTER: FILTER,
        HIRESYNC_UPDATED_LOOKBACK: '5m',
      },
    });
    await t.sync(['jobs']);
    // Changed after the full run, at 10 minutes behind on the API's clock.
    const touched = t.sim.dataset.touch('jobs', 42);
    const [outcome] = await t.sync(['jobs']);
    expect(outcome).toMatchObject({ ok: true, summary: { mode: 'incremental' } });
    const row = await t.database.db
      .withSchema('public')
      .selectFrom('jobs')
      .select('data')
      .where('id', '=', String(touched))
      .executeTakeFirstOrThrow();
    expect(row.data).toEqual(t.sim.dataset.record('jobs', 42));

    // {since} is the API's Date at the full run's first response, less 5 minutes.
    const runs = await t.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select([
        'id',
        'filter',
        sql<string>`to_char((api_started_at - interval '5 minutes') at time zone 'UTC',
          'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('since'),
        sql<number>`extract(epoch from started_at - api_started_at)::float8`.as('behindSeconds'),
      ])
      .orderBy('id')
      .execute();
    expect(runs).toHaveLength(2);
    const [full, incremental] = runs;
    expect(full?.behindSeconds).toBeGreaterThan(590);
    expect(incremental?.filter).toBe(`updated_at=gte|${encodeURIComponent(full?.since ?? '')}`);

    // Each run's first response showed the skew: a warning naming the account, resource, run and skew.
    const warnings = t.log
      .lines()
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.level === 40 && typeof line.skewSeconds === 'number');
    expect(warnings.map((w) => w.runId)).toEqual(runs.map((r) => r.id));
    for (const warning of warnings) {
      expect(warning).toMatchObject({ account: 'default', resource: 'jobs', lookbackSeconds: 300 });
      expect(warning.skewSeconds).toBeGreaterThanOrEqual(-601);
      expect(warning.skewSeconds).toBeLessThanOrEqual(-599);
      expect(warning.msg).toMatch(/HIRESYNC_UPDATED_LOOKBACK/);
    }

    // status names the resource, the skew and the run.
    const status = await runCli(['status'], t.env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(
        `^jobs: the API's clock was 10\\.0 min behind this worker's at the first response of run ${incremental?.id}, more than HIRESYNC_UPDATED_LOOKBACK \\(5\\.0 min\\)`,
        'm',
      ),
    );
    expect(status.stdout).not.toMatch(/^(job_posts|tracking_links): the API's clock/m);
  });

  it('shows no clock skew in the log or in status when the clocks agree', async () => {
    const t = await harness({
      simulator: { dataset: { counts: { jobs: 50 } } },
      env: { HIRESYNC_UPDATED_FILTER: FILTER, HIRESYNC_UPDATED_LOOKBACK: '5m' },
    });
    await t.sync(['jobs']);
    expect(t.log.text()).not.toContain('skewSeconds');
    const status = await runCli(['status'], t.env);
    expect(status.stdout).not.toContain("the API's clock");
  });

  it('falls back to the start of the last success less the lookback when its API date is unknown (a run from before 0008)', async () => {
    const t = await harness({
      simulator: { dataset: { counts: { jobs: 300 } } },
      env: {
        HIRESYNC_PER_PAGE: '100',
        HIRESYNC_UPDATED_FILTER: FILTER,
        HIRESYNC_UPDATED_LOOKBACK: '2m',
      },
    });
    await t.sync(['jobs']);
    await t.database.db
      .withSchema('public')
      .updateTable('sync_runs')
      .set({ api_started_at: null })
      .execute();
    const { rows } = await sql<{ since: string }>`
      select to_char((started_at - interval '2 minutes') at time zone 'UTC',
        'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as since
      from public.sync_runs order by id desc limit 1`.execute(t.database.db);
    const touched = t.sim.dataset.touch('jobs', 9);
    await t.sync(['jobs']);
    const run = await t.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select('filter')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(run.filter).toBe(`updated_at=gte|${encodeURIComponent(rows[0]?.since ?? '')}`);
    const row = await t.database.db
      .withSchema('public')
      .selectFrom('jobs')
      .select('data')
      .where('id', '=', String(touched))
      .executeTakeFirstOrThrow();
    expect(row.data).toEqual(t.sim.dataset.record('jobs', 9));
  });

  it("never starts later than the last success's own start when the API's Date runs ahead", async () => {
    const t = await harness({
      simulator: { clockSkewMs: 10 * 60_000, dataset: { counts: { jobs: 100 } } },
      env: { HIRESYNC_UPDATED_FILTER: FILTER, HIRESYNC_UPDATED_LOOKBACK: '5m' },
    });
    await t.sync(['jobs']);
    const { rows } = await sql<{ since: string }>`
      select to_char((started_at - interval '5 minutes') at time zone 'UTC',
        'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as since
      from public.sync_runs where api_started_at > started_at`.execute(t.database.db);
    expect(rows).toHaveLength(1);
    await t.sync(['jobs']);
    const run = await t.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select('filter')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(run.filter).toBe(`updated_at=gte|${encodeURIComponent(rows[0]?.since ?? '')}`);
  });
});
