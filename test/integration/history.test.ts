import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResourceName } from '../../src/config/load-config.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

const harnesses: SyncHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

async function start(env: Record<string, string> = {}) {
  const t = await startSyncHarness({
    simulator: { dataset: { counts: { jobs: 120, job_posts: 60, tracking_links: 120 } } },
    env: { HIRESYNC_PER_PAGE: '50', ...env },
  });
  harnesses.push(t);
  return t;
}

interface Version {
  valid_from: Date;
  valid_to: Date | null;
  deleted: boolean;
  record: unknown;
  run_id: string | null;
}

/** Every version of record `id`, oldest first. */
async function versionsOf(t: SyncHarness, resource: ResourceName, id: number): Promise<Version[]> {
  const column = resource === 'tracking_links' ? 'raw' : 'data';
  const { rows } = await sql<Version>`
    select valid_from, valid_to, deleted, ${sql.ref(column)} as record, run_id
    from ${sql.id('public', `${resource}_history`)} where id = ${id}
    order by valid_from`.execute(t.database.db);
  return rows;
}

async function count(t: SyncHarness, table: string, where = sql`true`): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from ${sql.id('public', table)} where ${where}`.execute(t.database.db);
  return Number(rows[0]?.n);
}

describe('history', () => {
  it('keeps one open version per record after the first sync, equal to the row', async () => {
    const t = await start();
    await t.sync();
    for (const [resource, column] of [
      ['jobs', 'data'],
      ['job_posts', 'data'],
      ['tracking_links', 'raw'],
    ] as const) {
      const live = await count(t, resource);
      expect(await count(t, `${resource}_history`)).toBe(live);
      const { rows } = await sql<{ n: string }>`
        select count(*) as n from ${sql.id('public', resource)} r
        join ${sql.id('public', `${resource}_history`)} h
          on h.id = r.id and h.valid_to is null and not h.deleted
          and h.${sql.ref(column)} = r.${sql.ref(column)} and h.valid_from = r.changed_at`.execute(
        t.database.db,
      );
      expect(Number(rows[0]?.n), resource).toBe(live);
    }
  });

  it('adds no version when a run changes nothing, incremental or full', async () => {
    const t = await start();
    await t.sync();
    const before = await count(t, 'jobs_history');
    await t.sync(['jobs']);
    await t.sync(['jobs'], 'full');
    expect(await count(t, 'jobs_history')).toBe(before);
  });

  it('records an update as a new version, closing the old one at the same instant', async () => {
    const t = await start();
    await t.sync(['tracking_links']);
    const id = t.sim.dataset.touch('tracking_links', 30);
    await t.sync(['tracking_links'], 'full');
    const versions = await versionsOf(t, 'tracking_links', id);
    expect(versions).toHaveLength(2);
    const [old, current] = versions as [Version, Version];
    expect(old.valid_to).toEqual(current.valid_from);
    expect(current).toMatchObject({ valid_to: null, deleted: false });
    expect(current.record).toEqual(t.sim.dataset.record('tracking_links', 30));
    expect(old.record).not.toEqual(current.record);
    const runs = await t.database.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select('id')
      .orderBy('id')
      .execute();
    expect(current.run_id).toBe(runs.at(-1)?.id);
  });

  it('records a deletion as a version of its own, and a return from it as a new live version', async () => {
    const t = await start();
    await t.sync(['jobs']);
    const id = t.sim.dataset.remove('jobs', 7);
    await t.sync(['jobs'], 'full');
    let versions = await versionsOf(t, 'jobs', id);
    expect(versions.map((v) => [v.deleted, v.valid_to === null])).toEqual([
      [false, false],
      [true, true],
    ]);
    // The deletion version holds the last record seen.
    expect(versions[1]?.record).toEqual(versions[0]?.record);

    t.sim.dataset.restore('jobs', 7);
    await t.sync(['jobs'], 'full');
    versions = await versionsOf(t, 'jobs', id);
    expect(versions.map((v) => [v.deleted, v.valid_to === null])).toEqual([
      [false, false],
      [true, false],
      [false, true],
    ]);
    expect(versions[2]?.record).toEqual(t.sim.dataset.record('jobs', 7));
    // Exactly one open version per id, whatever happened.
    expect(await count(t, 'jobs_history', sql`valid_to is null`)).toBe(await count(t, 'jobs'));
  });

  it('answers "the table as of a date" with the records live then', async () => {
    const t = await start();
    await t.sync(['job_posts']);
    const { rows: at } = await sql<{ t: Date }>`select now() as t`.execute(t.database.db);
    const asOf = at[0]?.t as Date;
    const removed = t.sim.dataset.remove('job_posts', 3);
    const touched = t.sim.dataset.touch('job_posts', 4);
    const before = t.sim.dataset.record('job_posts', 4);
    await t.sync(['job_posts'], 'full');
    const { rows } = await sql<{ id: string; data: unknown }>`
      select distinct on (id) id, data from public.job_posts_history
      where valid_from <= ${asOf} and (valid_to is null or valid_to > ${asOf}) and not deleted
      order by id, valid_from desc`.execute(t.database.db);
    expect(rows.map((r) => r.id)).toContain(String(removed));
    expect(rows).toHaveLength(60);
    expect(rows.find((r) => r.id === String(touched))?.data).not.toEqual(before);
  });

  it('keeps no versions with HIRESYNC_HISTORY=off, and the rows are the same', async () => {
    const t = await start({ HIRESYNC_HISTORY: 'off' });
    await t.sync(['jobs', 'tracking_links']);
    t.sim.dataset.touch('jobs', 1);
    t.sim.dataset.remove('jobs', 2);
    await t.sync(['jobs'], 'full');
    expect(await count(t, 'jobs_history')).toBe(0);
    expect(await count(t, 'tracking_links_history')).toBe(0);
    expect(await t.liveIds('jobs')).toEqual(t.expectedIds('jobs'));
  });

  it('keeps versions exact when a page falls back to record-by-record writes', async () => {
    // Every tenth record (index 8, 18, …) holds \u0000, which jsonb refuses: its page is
    // written record by record.
    const t = await startSyncHarness({
      simulator: { dataset: { counts: { jobs: 40 }, nulEvery: 10 } },
      env: { HIRESYNC_PER_PAGE: '20' },
    });
    harnesses.push(t);
    await t.sync(['jobs']);
    const id = t.sim.dataset.touch('jobs', 6);
    await t.sync(['jobs'], 'full');
    expect((await versionsOf(t, 'jobs', id)).map((v) => v.valid_to === null)).toEqual([
      false,
      true,
    ]);
    expect(await count(t, 'jobs_history', sql`valid_to is null`)).toBe(await count(t, 'jobs'));
  });
});
