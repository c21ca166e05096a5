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
 * The statements a page of tracking links written alone sends, its
 * transaction's begin and commit included: the reference tables' locks with
 * the page's progress, then the page statement (issue 35: the locks and the
 * progress were a statement each).
 */
const PAGE_STATEMENTS = ['begin', 'locks and progress', 'page', 'commit'];

/**
 * A page written beside the page before it (a full run's pipelined walk):
 * its links first, then, once the page before it committed, the locks with
 * its progress, then its nested rows; on a pooled connection (the run's
 * session busy with the page before it), the run's lock checked first.
 */
const BESIDE_STATEMENTS = ['begin', 'links', 'locks and progress', 'nested rows', 'commit'];

/** A statement as sent: its text, whitespace folded, and the client (connection) that sent it. */
interface Sent {
  client: unknown;
  text: string;
}

/** Every statement the pg clients of this process send from now on (installed before the app is made). */
function recordStatements(): Sent[] {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  const sent: Sent[] = [];
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: unknown })?.text;
    sent.push({ client: this, text: String(text).replace(/\s+/g, ' ').trim() });
    return query.apply(this, args);
  };
  defer(() => {
    proto.query = query;
  });
  return sent;
}

/** The statements of each transaction that writes a page of tracking links, begin to commit, in the order they began. */
function pageTransactions(sent: readonly Sent[]): string[][] {
  const transactions: string[][] = [];
  const open = new Map<unknown, string[]>();
  for (const { client, text } of sent) {
    if (text === 'begin') {
      const started: string[] = [];
      open.set(client, started);
      transactions.push(started);
    }
    open.get(client)?.push(text);
    if (text === 'commit') open.delete(client);
  }
  return transactions.filter((statements) =>
    statements.some((t) => /^-- (A page|The links of a page) of tracking links/.test(t)),
  );
}

describe('a page of tracking links', () => {
  it(`is written in one transaction: alone, ${PAGE_STATEMENTS.length} statements; beside the page before it, its links before that page commits and its nested rows after, under the locks`, async () => {
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
    const [first, ...beside] = pages as [string[], ...string[][]];
    expect(first, first.join('\n')).toHaveLength(PAGE_STATEMENTS.length);
    // The locks are taken (with the progress) before the page statement takes its snapshot.
    expect(first[1]).toMatch(/pg_advisory_xact_lock/);
    expect(first[2]).toMatch(/^-- A page of tracking links/);
    for (const statements of beside) {
      const shape = statements.filter((s) => !s.includes('pg_catalog.pg_locks'));
      expect(shape, statements.join('\n')).toHaveLength(BESIDE_STATEMENTS.length);
      expect(shape[1]).toMatch(/^-- The links of a page of tracking links/);
      expect(shape[2]).toMatch(/pg_advisory_xact_lock/);
      expect(shape[3]).toMatch(/^-- The job boards, referrers and sources of a page/);
      // A pooled connection checks the run's lock after its turn, before the locks.
      const check = statements.findIndex((s) => s.includes('pg_catalog.pg_locks'));
      if (check !== -1) expect(check).toBe(2);
    }
    // The run's session and a pooled connection take turns: some page checks the lock.
    expect(beside.some((s) => s.some((t) => t.includes('pg_catalog.pg_locks')))).toBe(true);
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
    expect(sent.map((s) => s.text).filter((text) => text.includes('data_sync_runs'))).toEqual([
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
