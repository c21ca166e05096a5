import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobBoards } from '../../src/resources/reference-lists.js';
import { trackingLinks } from '../../src/resources/tracking-links.js';
import { pageStatementText } from '../../src/warehouse/pages/page-statement.js';
import { accountReferenceLocksText } from '../../src/warehouse/pages/sql/reference-locks.js';
import { writePage } from '../../src/warehouse/pages/write-page.js';
import { createRun } from '../../src/warehouse/runs/sync-runs.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
});
afterAll(async () => {
  await t?.drop();
});

const BOARD_ID = 3_000_000_001;

function linkBody(companyName: string): string {
  return JSON.stringify([
    {
      id: 5_000_000_001,
      token: 'tok1',
      job_id: 1,
      job_post_id: 2,
      job_board: { id: BOARD_ID, company_name: companyName, url_token: 'acme' },
      credited_to: null,
      source: null,
      related_post_id: 12,
      related_post_type: 'SocialMediaPost',
      created_at: '2024-01-01T00:00:00Z',
      updated_at: '2024-05-01T00:00:00Z',
    },
  ]);
}

function listBody(companyName: string): string {
  return JSON.stringify([{ id: BOARD_ID, company_name: companyName, url_token: 'acme' }]);
}

describe('job_boards history under concurrent writers', () => {
  it('keeps one open version per board when a tracking-links page and a job_boards page write the same board at the same time', async () => {
    const linksSql = pageStatementText(trackingLinks as never);
    const boardsSql = pageStatementText(jobBoards as never);
    const a = new pg.Client({ connectionString: t.url });
    const b = new pg.Client({ connectionString: t.url });
    await a.connect();
    await b.connect();
    try {
      // Runs 1 (job_boards) and 2 (tracking_links) and 3 (job_boards) exist.
      for (const r of ['job_boards', 'tracking_links', 'job_boards'])
        await a.query(`insert into sync_runs (resource, mode) values ($1, 'full')`, [r]);
      const ids = (await a.query('select id from sync_runs order by id')).rows.map((r) => r.id);
      // The list's first version.
      await a.query(boardsSql, [listBody('Acme v1'), null, ids[0], [], true, 'default']);
      // A tracking-links page (nested copy) and a later job_boards page race.
      // Each takes its locks first, as writePage does, in a statement of its own.
      await a.query('begin');
      await a.query(accountReferenceLocksText(['job_boards', 'referrers', 'sources']), ['public']);
      await a.query(linksSql, [linkBody('Acme v2'), null, ids[1], [], true, 'default', true]);
      await b.query('begin');
      const racing = b
        .query(accountReferenceLocksText(['job_boards']), ['public'])
        .then(() => b.query(boardsSql, [listBody('Acme v3'), null, ids[2], [], true, 'default']))
        .then(() => b.query('commit'));
      await new Promise((r) => setTimeout(r, 300));
      await a.query('commit');
      await racing;
      const open = await a.query(
        'select id, raw ->> $2 as name from job_boards_history where id = $1 and valid_to is null',
        [BOARD_ID, 'company_name'],
      );
      const row = await a.query('select company_name from job_boards where id = $1', [BOARD_ID]);
      expect(row.rows[0].company_name).toBe('Acme v3');
      expect(open.rows).toHaveLength(1);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('writes a job_boards page or a tracking-links page only once no other writer of the same account holds job_boards', async () => {
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    try {
      // Another page of this account is writing job_boards: its lock is held.
      await holder.query('begin');
      await holder.query(accountReferenceLocksText(['job_boards']), ['public']);
      const order: string[] = [];
      const pages = [
        { resource: jobBoards, body: listBody('Acme v4') },
        { resource: trackingLinks, body: linkBody('Acme v5') },
      ].map(async ({ resource, body }) => {
        const runId = await createRun(t.db, 'default', { resource: resource.name, mode: 'full' });
        await writePage(t.db, {
          account: 'default',
          resource,
          runId,
          pageNumber: 1,
          body,
          records: JSON.parse(body) as unknown[],
        });
        order.push(resource.name);
      });
      // Both wait for the lock: neither has written while it is held.
      await new Promise((r) => setTimeout(r, 300));
      order.push('released');
      await holder.query('commit');
      await Promise.all(pages);
      expect(order[0]).toBe('released');
      expect(order.slice(1).sort()).toEqual(['job_boards', 'tracking_links']);
    } finally {
      await holder.end();
    }
  });
});
