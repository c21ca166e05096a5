// A run whose Postgres lock connection dies (a Postgres restart,
// pg_terminate_backend, idle_session_timeout, a proxy's idle cut) must stop
// writing, while a deployment on another Redis takes the lock and runs the
// same resource: two runs of one resource never write at once.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { runOnce } from '../../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { seenBefore } from '../support/seen-before.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

let h: SyncHarness | undefined;
afterAll(async () => {
  await h?.close();
});

describe('a run that lost its Postgres lock', () => {
  it('commits no page while another deployment runs the resource', async () => {
    h = await startSyncHarness({
      simulator: {
        dataset: { counts: { jobs: 1500, job_posts: 0, tracking_links: 0 } },
        latencyMs: 150,
      },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    const harness = h;
    const commitsAfterKill: number[] = [];
    let killed = false;
    const a = harness.app({
      onProgress: () => {
        if (killed) commitsAfterKill.push(Date.now());
      },
    });
    const runA = runOnce(a, ['jobs'], 'full');
    // Wait for A to hold its lock and write a few pages, then cut its lock connection.
    const wrote = await seenBefore(
      runA,
      async () => {
        const { rows } = await sql<{ pages: number }>`select pages from public.sync_runs`.execute(
          harness.database.db,
        );
        return (rows[0]?.pages ?? 0) >= 2;
      },
      100,
    );
    expect(wrote, 'A ended before it had written 2 pages').toBe(true);
    const { rows: cut } = await sql<{ terminated: number }>`
      select count(*)::int as terminated from (
        select distinct pid from pg_locks
        where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())
      ) holders where pg_terminate_backend(holders.pid)`.execute(harness.database.db);
    // A's lock connection, the one holder of an advisory lock, was cut.
    expect(cut[0]?.terminated).toBe(1);
    killed = true;
    // Another deployment: same database, another Redis (here: another prefix).
    const config = loadConfig(
      { ...harness.env, HIRESYNC_REDIS_PREFIX: `test-${randomUUID()}` },
      RESOURCE_NAMES,
    );
    const b = createApp(config, harness.log.logger, { defaultMetrics: false });
    const runB = runOnce(b, ['jobs'], 'full');
    await sleep(1500);
    const [outA, outB] = await Promise.all([runA, runB]);
    await a.close();
    await b.close();
    // B ran the resource to its end while A, its lock gone, waited: A commits
    // no page while B's run is under way (A resumes once B is done).
    expect(outB.map((o) => o.ok)).toEqual([true]);
    const bRun = await harness.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select(['started_at', 'finished_at'])
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    const bStart = Date.parse(String(bRun.started_at));
    const bEnd = Date.parse(String(bRun.finished_at));
    const during = commitsAfterKill.filter((at) => at > bStart + 50 && at < bEnd - 50);
    expect(during).toEqual([]);
    // A, its lock lost, stopped and later resumed its run from the checkpoint, to the end.
    expect(outA).toMatchObject([
      { ok: true, summary: { runId: '1', mode: 'full', resumed: true } },
    ]);
    expect(await harness.liveIds('jobs')).toEqual(harness.expectedIds('jobs'));
  }, 120_000);
});
