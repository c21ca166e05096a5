import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runOnce } from '../../src/queue/run-once.js';
import { trackingLinks } from '../../src/resources/tracking-links.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { writePage } from '../../src/warehouse/pages/write-page.js';
import { createRun } from '../../src/warehouse/runs/sync-runs.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { useEmptyWarehouse } from '../support/warehouse-fixture.js';

const { harness, defer } = cleanupAfterEach();
const w = useEmptyWarehouse();

/**
 * The statements a written page of tracking links sends, its transaction's
 * begin and commit included: the reference tables' locks with the page's
 * progress, then the page statement (issue 35: the locks and the progress
 * were a statement each).
 */
const PAGE_STATEMENTS = ['begin', 'locks and progress', 'page', 'commit'];

/** Every statement text the pg clients of this process send from now on (installed before the app is made). */
function recordStatements(): string[] {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  const sent: string[] = [];
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: unknown })?.text;
    sent.push(String(text).replace(/\s+/g, ' ').trim());
    return query.apply(this, args);
  };
  defer(() => {
    proto.query = query;
  });
  return sent;
}

/** The statements of each transaction that holds a page statement, begin to commit. */
function pageTransactions(sent: readonly string[]): string[][] {
  const transactions: string[][] = [];
  let open: string[] | undefined;
  for (const text of sent) {
    if (text === 'begin') open = [];
    open?.push(text);
    if (text === 'commit' && open) {
      if (open.some((t) => t.startsWith('-- A page of tracking links'))) transactions.push(open);
      open = undefined;
    }
  }
  return transactions;
}

describe('a page of tracking links', () => {
  it(`is written in one transaction of ${PAGE_STATEMENTS.length} statements, its run's counts as before`, async () => {
    const t = await harness({
      simulator: { dataset: { counts: { tracking_links: 500 } } },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    const sent = recordStatements();
    const app = t.app();
    defer(() => app.close());

    const [outcome] = await runOnce(
      app,
      [{ account: 'default', resource: 'tracking_links' }],
      'full',
    );

    if (!outcome?.ok) throw new Error(`the run failed: ${outcome?.error}`);
    const pages = pageTransactions(sent);
    expect(pages).toHaveLength(5);
    for (const statements of pages) {
      expect(statements, statements.join('\n')).toHaveLength(PAGE_STATEMENTS.length);
      // The locks are taken (with the progress) before the page statement takes its snapshot.
      expect(statements[1]).toMatch(/pg_advisory_xact_lock/);
      expect(statements[2]).toMatch(/^-- A page of tracking links/);
    }
    const run = await t.database.db
      .selectFrom('hiresync.data_sync_runs')
      .select(['pages', 'records', 'rejected', 'max_id', 'api_started_at'])
      .where('account', '=', 'default')
      .where('id', '=', outcome.summary.runId)
      .executeTakeFirstOrThrow();
    expect(run).toMatchObject({ pages: 5, records: '500', rejected: '0' });
    expect(run.max_id).toBe(String(t.sim.dataset.idOf('tracking_links', 499)));
    expect(run.api_started_at).not.toBeNull();
  });
});

describe("a page's counts, added to its run before its statement runs", () => {
  /** The run's counts in sync_runs. */
  async function counts(runId: string) {
    return w.db
      .selectFrom('hiresync.data_sync_runs')
      .select(['pages', 'records', 'rejected', 'max_id'])
      .where('account', '=', 'default')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
  }

  function write(records: unknown[], runId: string, skipUnchanged = false, db = w.db) {
    return writePage(db, {
      account: 'default',
      resource: trackingLinks,
      runId,
      pageNumber: 1,
      body: JSON.stringify(records),
      records,
      skipUnchanged,
    });
  }

  it('are those the page statement counts, with rejected records and records left alone', async () => {
    const link = (id: number, token: string) => ({ id, token, job_board: { id: 9 } });
    const full = await createRun(w.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const sent = recordStatements();
    // Connections made after the recorder, so that it sees their statements.
    const recorded = createDatabase(w.url);
    defer(() => recorded.destroy());
    const page = [link(15, 'a'), { id: 'no id' }, link(13, 'b'), link(14, 'c')];
    const first = await write(page, full, false, recorded);
    // No statement of its own for the counts: they went with the locks.
    expect(sent.filter((text) => text.includes('data_sync_runs'))).toEqual([
      expect.stringMatching(/^with progress as \( update "hiresync"\."data_sync_runs"/),
    ]);
    expect(first).toMatchObject({ written: 3, maxId: '15', minId: '13' });
    expect(first.rejected.map((r) => r.index)).toEqual([1]);
    expect(await counts(full)).toEqual({ pages: 1, records: '3', rejected: '1', max_id: '15' });

    const incremental = await createRun(w.db, 'default', {
      resource: 'tracking_links',
      mode: 'incremental',
    });
    const second = await write(
      [link(15, 'a'), link(14, 'changed'), link(13, 'b')],
      incremental,
      true,
    );
    expect(second).toMatchObject({ written: 1, unchanged: 2, maxId: '15' });
    expect(await counts(incremental)).toEqual({
      pages: 1,
      records: '1',
      rejected: '0',
      max_id: '15',
    });

    // The same page again (read again after a crash): its counts are not added twice.
    await write([link(15, 'a'), link(14, 'changed'), link(13, 'b')], incremental, true);
    expect(await counts(incremental)).toMatchObject({ pages: 1, records: '1' });
  });
});
