import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUILT_IN_RESOURCES } from '../../src/resources/index.js';
import type { Page } from '../../src/sync/ports.js';
import { KyselyRunStore } from '../../src/warehouse/runs/run-store.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
});
afterAll(async () => {
  await t?.drop();
});

/** The hash partition (of 8) of `data_jobs` that holds `account`'s rows. */
async function partitionOf(account: string): Promise<number> {
  for (let remainder = 0; remainder < 8; remainder += 1) {
    const { rows } = await sql<{ ok: boolean }>`
      select satisfies_hash_partition('hiresync.data_jobs'::regclass, 8, ${remainder}::int, ${account}::text) as ok`.execute(
      t.db,
    );
    if (rows[0]?.ok) return remainder;
  }
  throw new Error(`no partition for ${account}`);
}

function pageOf(number: number, records: unknown[]): Page {
  const body = JSON.stringify(records);
  return { number, url: 'https://api.example/v3/list', nextUrl: undefined, body, records };
}

/** Every row (and its row version) of `account` in the shared tables a run of jobs and tracking links writes. */
async function rowsOf(account: string) {
  const { rows } = await sql<{ v: string }>`
    select 'jobs ' || id || ' ' || xmin || ' ' || data::text as v from hiresync.data_jobs where account = ${account}
    union all select 'jobs_history ' || id || ' ' || xmin from hiresync.data_jobs_history where account = ${account}
    union all select 'links ' || id || ' ' || xmin from hiresync.data_tracking_links where account = ${account}
    union all select 'boards ' || id || ' ' || xmin from hiresync.data_job_boards where account = ${account}
    union all select 'runs ' || id || ' ' || xmin from hiresync.data_sync_runs where account = ${account}
    union all select 'rejected ' || id || ' ' || xmin from hiresync.data_rejected_records where account = ${account}
    order by 1`.execute(t.db);
  return rows.map((r) => r.v);
}

describe('two accounts whose rows share a partition', () => {
  it("never touch each other's rows: the same ids written, changed, rejected and swept for one leave the other's as they were", async () => {
    const home = await partitionOf('default');
    let neighbour: string | undefined;
    for (let i = 0; neighbour === undefined; i += 1) {
      if ((await partitionOf(`n${i}`)) === home) neighbour = `n${i}`;
    }
    const stores = ['default', neighbour].map(
      (account) => new KyselyRunStore(t.db, { resources: BUILT_IN_RESOURCES, account }),
    );
    const [mine, theirs] = stores as [KyselyRunStore, KyselyRunStore];
    const write = async (store: KyselyRunStore, title: string) => {
      const jobsRun = await store.createRun({ resource: 'jobs', mode: 'full' });
      await store.writePage(
        'jobs',
        jobsRun,
        pageOf(1, [{ id: 1, title }, { id: 2, title }, { id: 3, title }, { id: 'bad' }]),
      );
      await store.sweepDeletions('jobs', jobsRun, { allowMassDelete: true });
      await store.completeRun('jobs', jobsRun);
      const linksRun = await store.createRun({ resource: 'tracking_links', mode: 'full' });
      await store.writePage(
        'tracking_links',
        linksRun,
        pageOf(1, [{ id: 1, token: title, job_board: { id: 5, company_name: title } }]),
      );
      await store.completeRun('tracking_links', linksRun);
    };
    await write(theirs, 'theirs');
    const before = await rowsOf(neighbour as string);
    expect(before.length).toBeGreaterThan(8);

    // The same ids for the other account: written, rejected, changed, incremental, swept.
    await write(mine, 'mine');
    const run = await mine.createRun({ resource: 'jobs', mode: 'full' });
    await mine.writePage('jobs', run, pageOf(1, [{ id: 1, title: 'changed' }]), undefined, {
      skipUnchanged: true,
    });
    expect(await mine.sweepDeletions('jobs', run, { allowMassDelete: true })).toBe(2);
    await mine.completeRun('jobs', run);

    expect(await rowsOf(neighbour as string)).toEqual(before);
    const { rows } = await sql<{ live: string }>`
      select count(*) filter (where deleted_at is null) as live from hiresync.data_jobs
      where account = 'default'`.execute(t.db);
    expect(rows[0]?.live).toBe('1');
  });
});
