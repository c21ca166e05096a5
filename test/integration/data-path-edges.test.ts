import { describe, expect, it } from 'vitest';
import { runOnce } from '../../src/queue/run-once.js';
import { BUILT_IN_RESOURCES } from '../../src/resources/index.js';
import { jobs } from '../../src/resources/jobs.js';
import { trackingLinks } from '../../src/resources/tracking-links.js';
import {
  createRun,
  finishRun,
  getRun,
  sweepDeletions,
} from '../../src/warehouse/runs/sync-runs.js';
import { startSyncHarness } from '../support/sync-harness.js';
import { useEmptyWarehouse } from '../support/warehouse-fixture.js';

const fx = useEmptyWarehouse();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function writeJobs(body: string, runId: string, pageNumber = 1, recordsKey?: string) {
  return fx.writeBody(jobs, body, runId, pageNumber, recordsKey);
}

function writeLinks(body: string, runId: string, pageNumber = 1) {
  return fx.writeBody(trackingLinks, body, runId, pageNumber);
}

const deleted = (table: 'jobs' | 'tracking_links') => fx.deletedIds(table);

const jobsPage = (extra: string) =>
  `[${Array.from({ length: 9 }, (_, i) => `{"id": ${i + 1}, "title": "job ${i + 1}"}`).join(',')}, ${extra}]`;

describe('a record only Postgres refuses, still listed by the API', () => {
  for (const [name, later] of [
    ['a \\u0000 in a text field', '{"id": 10, "title": "nul \\u0000 here"}'],
    ['an integral id written 10.0', '{"id": 10.0, "title": "job 10"}'],
  ] as const) {
    it(`keeps its row out of the sweep (jobs: ${name})`, async () => {
      const seed = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
      await writeJobs(jobsPage('{"id": 10, "title": "job 10"}'), seed);
      await finishRun(fx.db, 'default', seed, { outcome: 'succeeded' }, BUILT_IN_RESOURCES);
      await sleep(5);
      const run = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
      const result = await writeJobs(jobsPage(later), run);
      expect(result.rejected.map((r) => r.index)).toEqual([9]);
      await sweepDeletions(fx.db, 'default', run, { table: 'jobs' });
      expect(await deleted('jobs')).toEqual([]);
    });
  }

  it('keeps its row out of the sweep (tracking links: a nested id written 90.0, an offset +99:00)', async () => {
    const body = (boardId: string, updated: string) =>
      `[{"id": 1, "token": "a"}, {"id": 2, "token": "b"}, {"id": 3, "token": "c"},
        {"id": 4, "token": "d", "job_board": {"id": ${boardId}, "company_name": "Acme"}, "updated_at": "${updated}"}]`;
    const seed = await createRun(fx.db, 'default', { resource: 'tracking_links', mode: 'full' });
    await writeLinks(body('90', '2024-01-01T00:00:00Z'), seed);
    await finishRun(fx.db, 'default', seed, { outcome: 'succeeded' }, BUILT_IN_RESOURCES);
    await sleep(5);
    const run = await createRun(fx.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const result = await writeLinks(body('90.0', '2024-01-01T00:00:00+99:00'), run);
    expect(result.rejected.map((r) => r.index)).toEqual([3]);
    await sweepDeletions(fx.db, 'default', run, { table: 'tracking_links' });
    expect(await deleted('tracking_links')).toEqual([]);
  });
});

describe('nested rows across runs', () => {
  const link = (id: number, board: number, name: string, updated: string) =>
    `{"id": ${id}, "token": "t${id}", "job_board": {"id": ${board}, "company_name": "${name}", "url_token": "x"}, "updated_at": "${updated}"}`;

  it("take a later run's copy even when the newest link of an earlier run is gone", async () => {
    // Run 1: board 90 seen on link 1 (updated in May) and link 2 (January).
    const r1 = await createRun(fx.db, 'default', { resource: 'tracking_links', mode: 'full' });
    await writeLinks(
      `[${link(1, 90, 'Acme', '2024-05-01T00:00:00Z')}, ${link(2, 90, 'Acme', '2024-01-01T00:00:00Z')}]`,
      r1,
    );
    await finishRun(fx.db, 'default', r1, { outcome: 'succeeded' }, BUILT_IN_RESOURCES);
    // Link 1 is deleted (or moved to another board); later the board is renamed.
    // Every copy the API now sends says "Acme Corp", on links older than May.
    const r2 = await createRun(fx.db, 'default', { resource: 'tracking_links', mode: 'full' });
    await writeLinks(`[${link(2, 90, 'Acme Corp', '2024-01-01T00:00:00Z')}]`, r2);
    const board = await fx.db
      .withSchema('public')
      .selectFrom('job_boards')
      .select('company_name')
      .where('id', '=', '90')
      .executeTakeFirstOrThrow();
    expect(board.company_name).toBe('Acme Corp');
  });
});

describe('a records key present twice in a body', () => {
  it('is read as JSON.parse and Postgres read it (the last one), also record by record', async () => {
    const run = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
    const body = `{"data": [{"id": 1}, {"id": 2}], "data": [{"id": 3}, {"id": 4, "t": "\\u0000"}]}`;
    await writeJobs(body, run, 1, 'data');
    const rows = await fx.db
      .withSchema('public')
      .selectFrom('jobs')
      .select('id')
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.id)).toEqual(['3']);
  });
});

describe('run bookkeeping', () => {
  it('keeps the deleted count when a run sweeps again after a crash between its sweep and its end', async () => {
    const seed = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
    await writeJobs('[{"id": 1}, {"id": 2}, {"id": 3}]', seed);
    await finishRun(fx.db, 'default', seed, { outcome: 'succeeded' }, BUILT_IN_RESOURCES);
    await sleep(5);
    const run = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
    await writeJobs('[{"id": 1}, {"id": 2}]', run);
    expect(await sweepDeletions(fx.db, 'default', run, { table: 'jobs' })).toBe(1);
    // crash here; the resumed run re-reads its last page and sweeps again
    await writeJobs('[{"id": 1}, {"id": 2}]', run);
    const again = await sweepDeletions(fx.db, 'default', run, { table: 'jobs' });
    expect(again).toBe(0);
    await finishRun(fx.db, 'default', run, { outcome: 'succeeded' }, BUILT_IN_RESOURCES);
    expect((await getRun(fx.db, 'default', run))?.deleted).toBe('1');
  });

  it('never turn a succeeded run into a failed one when a failure is reported late', async () => {
    const run = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
    await finishRun(fx.db, 'default', run, { outcome: 'succeeded' }, BUILT_IN_RESOURCES);
    // the processor's final-attempt path calls this for the checkpoint's run id
    await finishRun(fx.db, 'default', run, {
      outcome: 'failed',
      error: 'redis blip after success',
    });
    expect((await getRun(fx.db, 'default', run))?.outcome).toBe('succeeded');
  });
});

describe('a confirmed mass deletion', () => {
  it('stays confirmed when its run is interrupted and resumed by a plain sync', async () => {
    const h = await startSyncHarness({
      simulator: { dataset: { counts: { jobs: 300 } } },
      env: { HIRESYNC_PER_PAGE: '50' },
    });
    try {
      await h.sync(['jobs']);
      for (let i = 0; i < 200; i += 1) h.sim.dataset.remove('jobs', i);
      const app = h.app({
        onProgress: (p) => {
          if (p.pages === 1) app.shutdown.abort(new Error('test stop'));
        },
      });
      try {
        const [stopped] = await runOnce(app, ['jobs'], 'full', { allowMassDelete: true });
        expect(stopped?.ok).toBe(false);
      } finally {
        await app.close();
      }
      const [resumed] = await h.sync(['jobs']);
      expect(resumed).toMatchObject({ ok: true, summary: { mode: 'full', resumed: true } });
      expect(await h.liveIds('jobs')).toEqual(h.expectedIds('jobs'));
    } finally {
      await h.close();
    }
  });
});
