import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { jobs } from '../../src/resources/jobs.js';
import { jobBoards } from '../../src/resources/reference-lists.js';
import { trackingLinks } from '../../src/resources/tracking-links.js';
import type { StoredResource } from '../../src/warehouse/pages/page-statement.js';
import { writePage } from '../../src/warehouse/pages/write-page.js';
import { createRun } from '../../src/warehouse/runs/sync-runs.js';
import { useEmptyWarehouse } from '../support/warehouse-fixture.js';

const w = useEmptyWarehouse();

/** Writes `records` as page `pageNumber` of run `runId`, as an incremental run does when `skipUnchanged`. */
function write(
  resource: StoredResource,
  records: unknown[],
  runId: string,
  options: { skipUnchanged?: boolean; pageNumber?: number } = {},
) {
  return writePage(w.db, {
    account: 'default',
    resource,
    runId,
    pageNumber: options.pageNumber ?? 1,
    body: JSON.stringify(records),
    records,
    skipUnchanged: options.skipUnchanged,
  });
}

/**
 * `id:xmin` of every row of `table` (default's rows of the shared table behind
 * its view, which has no xmin): any update of a row changes its xmin.
 */
async function versions(table: string): Promise<string[]> {
  const { rows } = await sql<{ v: string }>`
    select concat_ws(':', id, xmin) as v from ${sql.id('hiresync', `data_${table}`)}
    where account = 'default' order by 1`.execute(w.db);
  return rows.map((r) => r.v);
}

async function run(mode: 'full' | 'incremental', resource = 'jobs'): Promise<string> {
  return createRun(w.db, 'default', { resource, mode });
}

describe('a page written with skipUnchanged (an incremental run)', () => {
  it('of records stored as they are writes no row, and counts the page in its run', async () => {
    const page = [
      { id: 3, title: 'c' },
      { id: 2, title: 'b' },
      { id: 1, title: 'a' },
    ];
    await write(jobs, page, await run('full'));
    const before = [...(await versions('jobs')), ...(await versions('jobs_history'))];
    const incremental = await run('incremental');

    const result = await write(jobs, page, incremental, { skipUnchanged: true });

    expect(result).toEqual({ written: 0, rejected: [], maxId: '3', minId: '1', unchanged: 3 });
    expect([...(await versions('jobs')), ...(await versions('jobs_history'))]).toEqual(before);
    const counted = await w.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select(['pages', 'records', 'max_id'])
      .where('id', '=', incremental)
      .executeTakeFirstOrThrow();
    expect(counted).toEqual({ pages: 1, records: '0', max_id: '3' });
  });

  it('decides by the last record of an id, as the page statement stores it', async () => {
    await write(jobs, [{ id: 1, title: 'now' }], await run('full'));
    const before = await versions('jobs');
    // An older copy first, the stored one last: nothing to write.
    const kept = await write(
      jobs,
      [
        { id: 1, title: 'before' },
        { id: 1, title: 'now' },
      ],
      await run('incremental'),
      { skipUnchanged: true },
    );
    expect(kept).toMatchObject({ written: 0, unchanged: 2 });
    expect(await versions('jobs')).toEqual(before);
    // The stored copy first, a new one last: the new one is stored.
    const changed = await write(
      jobs,
      [
        { id: 1, title: 'now' },
        { id: 1, title: 'later' },
      ],
      await run('incremental'),
      { skipUnchanged: true },
    );
    expect(changed).toMatchObject({ written: 1, unchanged: 0 });
    const row = await w.db
      .withSchema('public')
      .selectFrom('jobs')
      .select('data')
      .executeTakeFirstOrThrow();
    expect(row.data).toEqual({ id: 1, title: 'later' });
  });

  it('still stores its rejected records, and leaves the stored ones alone', async () => {
    await write(jobs, [{ id: 2 }, { id: 1 }], await run('full'));
    const before = await versions('jobs');
    const incremental = await run('incremental');

    const result = await write(jobs, [{ id: 2 }, { title: 'no id' }, { id: 1 }], incremental, {
      skipUnchanged: true,
    });

    expect(result).toMatchObject({ written: 0, maxId: '2', minId: '1', unchanged: 2 });
    expect(result.rejected.map((r) => r.index)).toEqual([1]);
    expect(await versions('jobs')).toEqual(before);
    const rejected = await w.db
      .withSchema('public')
      .selectFrom('rejected_records')
      .select(['run_id', 'page'])
      .execute();
    expect(rejected).toEqual([{ run_id: incremental, page: 1 }]);
  });

  it('writes every record when Postgres refuses a value of the page, rejecting that one', async () => {
    await write(jobs, [{ id: 2 }, { id: 1 }], await run('full'));
    // A \u0000 in a string: the validator passes it, jsonb cannot hold it.
    const body = '[{"id": 2}, {"id": 3, "title": "a\\u0000b"}, {"id": 1}]';
    const result = await writePage(w.db, {
      account: 'default',
      resource: jobs,
      runId: await run('incremental'),
      pageNumber: 1,
      body,
      records: JSON.parse(body) as unknown[],
      skipUnchanged: true,
    });
    expect(result.rejected.map((r) => r.index)).toEqual([1]);
    expect(result.written).toBe(2);
  });

  it('writes a tracking link whose nested copies differ from their rows, and no other', async () => {
    const board = { id: 50, company_name: 'Acme', url_token: 'acme' };
    const links = [1, 2].map((id) => ({
      id,
      token: `t${id}`,
      job_board: board,
      updated_at: '2024-03-02T10:00:00.000000Z',
    }));
    await write(trackingLinks, links, await run('full', 'tracking_links'));
    const kept = await write(trackingLinks, links, await run('incremental', 'tracking_links'), {
      skipUnchanged: true,
    });
    expect(kept).toMatchObject({ written: 0, unchanged: 2 });
    const before = await versions('tracking_links');
    // The board's row changed since (a list's copy, say): the links carry the other copy.
    await sql`update public.job_boards set raw = raw || '{"company_name": "Other"}' where id = 50`.execute(
      w.db,
    );
    const changed = await write(trackingLinks, links, await run('incremental', 'tracking_links'), {
      skipUnchanged: true,
    });
    expect(changed).toMatchObject({ written: 2, unchanged: 0 });
    expect(await versions('tracking_links')).not.toEqual(before);
    const row = await w.db
      .withSchema('public')
      .selectFrom('job_boards')
      .select('raw')
      .where('id', '=', '50')
      .executeTakeFirstOrThrow();
    expect(row.raw).toEqual(board);
  });

  it("of a reference list leaves alone a row holding the list's copy, and replaces a nested one", async () => {
    const listed = [
      { id: 60, company_name: 'Listed', url_token: 'listed' },
      { id: 61, company_name: 'Nested', url_token: 'nested' },
    ];
    await write(jobBoards, listed, await run('full', 'job_boards'));
    // Board 61 then holds a tracking link's copy (as sql/tracking-links-page.ts writes it).
    const links = await run('full', 'tracking_links');
    await sql`update public.job_boards set source_run_id = ${links}::bigint where id = 61`.execute(
      w.db,
    );
    const before = await versions('job_boards');

    const result = await write(jobBoards, listed, await run('incremental', 'job_boards'), {
      skipUnchanged: true,
    });

    expect(result).toMatchObject({ written: 1, unchanged: 1 });
    const after = await versions('job_boards');
    expect(after[0]).toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
  });
});
