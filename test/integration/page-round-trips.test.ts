import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runOnce } from '../../src/queue/run-once.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { harness, defer } = cleanupAfterEach();

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
