import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { PageWriteResult } from '../../sync/ports.js';
import type { Database } from '../tables.js';
import { lockAndCount } from './locks-and-progress.js';
import { besideStatementTexts, pageParameters, type WrittenRow } from './page-statement.js';
import {
  isRecordLevelError,
  type PageToWrite,
  type PageVerdict,
  type PageWrite,
  pageWriteOf,
  recordProgress,
  storeRejected,
  writePage,
} from './write-page.js';

// A page written beside the page before it (pipelined): its rows go in while
// the page before it commits, on another connection, so that both of the
// machine's cores work on one run. Every guarantee of writePage holds:
//
// - Commits stay in page order. A page's transaction writes its own rows
//   first (the links or records, and their versions); then it waits until
//   every earlier page has committed, and only then takes the reference
//   tables' locks, writes the nested rows, the rejected records and the
//   run's progress, and commits. A checkpoint is saved only after its page
//   and every page before it committed (src/sync/read-walk.ts).
// - No row is written by two pages at once: a page goes beside the one
//   before it only when the ids of both are known exactly, distinct and
//   disjoint, and the one before it rejected nothing (its rejected records
//   mark their rows seen after its turn came). Otherwise it waits for the
//   earlier page's commit first and is written as writePage writes it.
// - History stays one open version per id: the rows written before the turn
//   are ids no earlier page in flight touches, and the nested rows (shared by
//   many pages) are written after it, under their locks, in a statement
//   whose snapshot sees every earlier page.
// - A wait that never ends cannot happen: should the earlier page not commit
//   within BESIDE_WAIT_MS (it waits, say, on another writer that waits on a
//   row this page holds), this page gives its rows up (rolls back), waits
//   for the earlier commit, and is written on its own.

/** The pages of the run written before this one: what a page written beside them waits for. */
export interface EarlierPages {
  /** Settles once every earlier page of the run has committed; rejects when one failed. */
  readonly committed: Promise<unknown>;
  /** What validation found in the page just before this one, if known. */
  readonly verdict: PageVerdict | undefined;
}

/** How long a page written beside the one before it holds its rows while it waits for that page's commit. */
export const BESIDE_WAIT_MS = 5000;

/**
 * Whether `page` may write its rows while the page before it (`earlier`) is
 * still being written: a full run's page of tracking links or of records
 * stored as sent, both pages' ids known, distinct and disjoint, and the page
 * before it without rejected records. Reference lists write the tables
 * whose locks order their writers (sql/reference-locks.ts); an incremental
 * run's page is compared with the table first.
 */
export function mayWriteBeside(
  page: PageToWrite,
  verdict: PageVerdict,
  earlier: PageVerdict | undefined,
): boolean {
  const { storage } = page.resource;
  if (storage !== 'tracking_links' && storage !== 'json') return false;
  if (page.skipUnchanged || earlier === undefined || earlier.rejected.length > 0) return false;
  const mine = verdict.ids;
  const theirs = earlier.ids;
  if (mine === undefined || theirs === undefined) return false;
  for (const id of mine) if (theirs.has(id)) return false;
  return true;
}

/** What the statement before the turn returns: the page's counts, and (tracking links) its nested copies. */
interface RowsWritten extends WrittenRow {
  boards?: string;
  people?: string;
  origins?: string;
}

/** The page's own rows and their versions: the statement before its turn. */
async function writeRows(trx: Transaction<Database>, input: PageWrite): Promise<RowsWritten> {
  const texts = besideStatementTexts(input.store);
  const { rows } = await trx.executeQuery<RowsWritten>(
    CompiledQuery.raw(texts.rows, pageParameters(input, input.store.storage)),
  );
  return rows[0] ?? { written: 0, max_id: null, min_id: null };
}

/** The nested rows the page's links carry, upserted and versioned under the reference locks (tracking links). */
async function writeNested(
  trx: Transaction<Database>,
  input: PageWrite,
  rows: RowsWritten,
): Promise<void> {
  const { nested } = besideStatementTexts(input.store);
  if (nested === undefined) return;
  await trx.executeQuery(
    CompiledQuery.raw(nested, [
      rows.boards ?? '[]',
      rows.people ?? '[]',
      input.runId,
      rows.origins ?? '[]',
      input.history,
      input.account,
    ]),
  );
}

/** Resolves 'turn' once the earlier pages committed, 'timeout' after `ms`; rejects when one of them failed. */
async function turnOf(committed: Promise<unknown>, ms: number): Promise<'turn' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([committed.then(() => 'turn' as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function rollback(trx: { rollback(): { execute(): Promise<void> } }): Promise<void> {
  await trx
    .rollback()
    .execute()
    .catch(() => {});
}

/**
 * Writes `page` after the `earlier` pages of its run, in one transaction on
 * `db`, committing only after they all have: beside the page before it when
 * {@link mayWriteBeside} allows it (see the rules above), else once it has
 * committed, as writePage writes a page. Rejects, committing nothing, when an
 * earlier page failed.
 */
export async function writePageAfter(
  db: Kysely<Database>,
  page: PageToWrite,
  verdict: PageVerdict,
  earlier: EarlierPages,
  waitMs = BESIDE_WAIT_MS,
): Promise<PageWriteResult> {
  const alone = async () => {
    await earlier.committed;
    return writePage(db, page, verdict);
  };
  if (!mayWriteBeside(page, verdict, earlier.verdict)) return alone();
  const input = pageWriteOf(page, verdict);
  const trx = await db.startTransaction().execute();
  let rows: RowsWritten;
  try {
    rows = await writeRows(trx, input);
  } catch (error) {
    await rollback(trx);
    // A value Postgres refused: the page is written on its own, record by record.
    if (isRecordLevelError(error)) return alone();
    throw error;
  }
  let turn: 'turn' | 'timeout';
  try {
    turn = await turnOf(earlier.committed, waitMs);
  } catch (error) {
    await rollback(trx);
    throw error;
  }
  if (turn === 'timeout') {
    await rollback(trx);
    return alone();
  }
  try {
    await page.assertLocked?.(trx);
    const counted = await lockAndCount(trx, input, page.records);
    await writeNested(trx, input, rows);
    const { rejected } = input;
    await storeRejected(trx, input, {
      positions: rejected.map((r) => r.index),
      reasons: rejected.map((r) => r.reason),
      ids: [],
    });
    const result = { written: rows.written, maxId: rows.max_id, minId: rows.min_id };
    if (!counted) await recordProgress(trx, input, { ...result, rejected });
    await trx.commit().execute();
    return { ...result, rejected };
  } catch (error) {
    await rollback(trx);
    if (isRecordLevelError(error)) return writePage(db, page, verdict);
    throw error;
  }
}
