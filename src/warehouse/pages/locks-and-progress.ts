import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { schemaOf } from '../../account-name.js';
import type { ApiClockReading, RejectedRecord, StorageKind } from '../../sync/ports.js';
import { sharedRelation } from '../shared-relation.js';
import type { Database } from '../tables.js';
import { accountReferenceLocksText, type ReferenceTable } from './sql/reference-locks.js';

/** The page being written, as its first statement needs it. */
interface PageInHand {
  account: string;
  store: { storage: StorageKind };
  runId: string;
  pageNumber: number;
  rejected: readonly RejectedRecord[];
  /** Positions of records left alone as stored (an incremental run). */
  unchanged?: readonly number[];
  distinctIds: boolean;
  apiClock?: ApiClockReading | undefined;
}

type Db = Kysely<Database> | Transaction<Database>;

/** The reference tables the page statement of each storage kind writes (none: no lock). */
const REFERENCE_TABLES_WRITTEN: Readonly<Record<StorageKind, readonly ReferenceTable[]>> = {
  tracking_links: ['job_boards', 'referrers', 'sources'],
  json: [],
  job_boards: ['job_boards'],
  referrers: ['referrers'],
  sources: ['sources'],
};

/**
 * Takes the account's write locks of the reference tables the page writes, as
 * a statement of its own before the page statement: see accountReferenceLocksText
 * for why (two open versions of one id otherwise). Pages of other resources
 * take none.
 */
export async function lockReferenceTables(db: Db, page: PageInHand): Promise<void> {
  const tables = REFERENCE_TABLES_WRITTEN[page.store.storage];
  if (tables.length === 0) return;
  await db.executeQuery(
    CompiledQuery.raw(accountReferenceLocksText(tables), [schemaOf(page.account)]),
  );
}

/**
 * The page's first statement after its lock check: the reference tables'
 * locks (see lockReferenceTables), with the page's progress when that is
 * known before its statement (see progressBeforeWrite), in one round trip.
 * `maxId`: the highest id of the whole page when some of it was left alone
 * (an incremental run counts those too). Returns the progress recorded, or
 * undefined: then recordProgress records it after the page statement.
 */
export async function lockAndCount(
  db: Db,
  page: PageInHand,
  records: readonly unknown[],
  kept?: { maxId: string | null },
): Promise<PageProgress | undefined> {
  const tables = REFERENCE_TABLES_WRITTEN[page.store.storage];
  const early =
    tables.length === 0
      ? undefined
      : progressBeforeWrite({
          storage: page.store.storage,
          records,
          rejected: page.rejected,
          unchanged: page.unchanged ?? [],
          distinctIds: page.distinctIds,
        });
  if (early === undefined) {
    await lockReferenceTables(db, page);
    return undefined;
  }
  const progress = kept ? { ...early, maxId: kept.maxId } : early;
  await db.executeQuery(
    CompiledQuery.raw(locksAndProgressText(tables), [
      schemaOf(page.account),
      ...progressParameters(page, { ...progress, rejected: page.rejected.length }),
    ]),
  );
  return progress;
}

/** What a page adds to its run's row in sync_runs (see recordProgress in write-page.ts). */
export interface PageProgress {
  written: number;
  maxId: string | null;
}

/** What is known of a page before its statement runs. */
export interface PageBeforeWrite {
  storage: StorageKind;
  records: readonly unknown[];
  rejected: readonly RejectedRecord[];
  unchanged: readonly number[];
  distinctIds: boolean;
}

/**
 * The page's progress as its page statement will count it, when that is
 * known before the statement runs; undefined otherwise. It is for tracking
 * links whose good records carry distinct, exact ids: their statement then
 * upserts every good record it is not told to leave alone, unconditionally
 * (sql/tracking-links-page.ts, `links`), and counts them, with the highest
 * and lowest of their ids. Reference lists upsert under a condition (a row
 * may be left as it is), so their count is the statement's.
 */
export function progressBeforeWrite(page: PageBeforeWrite): PageProgress | undefined {
  if (page.storage !== 'tracking_links' || !page.distinctIds) return undefined;
  const skipped = new Set([...page.rejected.map((r) => r.index), ...page.unchanged]);
  let written = 0;
  let max: number | undefined;
  page.records.forEach((record, index) => {
    if (skipped.has(index)) return;
    const id = (record as { id: number }).id;
    written += 1;
    max = max === undefined || id > max ? id : max;
  });
  return { written, maxId: max === undefined ? null : String(max) };
}

const texts = new Map<string, string>();

/**
 * The update that adds a page to its run's counts in sync_runs, its
 * parameters numbered from `$first`: the account, the run, the page's number,
 * records written, records rejected, the highest id (text, or null), and the
 * API's clock at the run's first response (or null: a run keeps its first).
 * Pages are written in order, so a page number not above the run's count is a
 * page read again after a crash: its counts are not added. The one text of
 * that rule, whether it goes alone (recordProgress) or with the locks.
 */
export function progressUpdateText(first: number): string {
  const $ = (n: number) => `$${first + n}`;
  return `update ${sharedRelation('sync_runs')} set pages = ${$(2)}::int, records = records + ${$(3)}::bigint,
    rejected = rejected + ${$(4)}::bigint, max_id = greatest(max_id, ${$(5)}::bigint),
    api_started_at = coalesce(api_started_at, ${$(6)}::timestamptz),
    api_clock_skew_ms = coalesce(api_clock_skew_ms, ${$(7)}::bigint)
  where account = ${$(0)}::text and id = ${$(1)}::bigint and pages < ${$(2)}::int`;
}

/**
 * One statement that takes the account's write locks of the reference
 * `tables` (see accountReferenceLocksText: it runs before the page statement,
 * so the locks are held before that statement's snapshot) and adds the page
 * to its run's counts ({@link progressUpdateText}), in the page's transaction:
 * one round trip for both. Its parameters: `$1` the account's schema (the
 * locks' key), then those of the update from `$2`.
 */
function locksAndProgressText(tables: readonly ReferenceTable[]): string {
  const key = tables.join(',');
  let text = texts.get(key);
  if (text === undefined) {
    const locks = accountReferenceLocksText(tables).replace(/^select /, '');
    text = `with progress as (
  ${progressUpdateText(2)}
)
select ${locks}`;
    texts.set(key, text);
  }
  return text;
}

/** The parameters of {@link progressUpdateText}: the page, and what it adds to its run. */
export function progressParameters(
  page: {
    account: string;
    runId: string;
    pageNumber: number;
    apiClock?: ApiClockReading | undefined;
  },
  progress: PageProgress & { rejected: number },
): unknown[] {
  return [
    page.account,
    page.runId,
    page.pageNumber,
    progress.written,
    progress.rejected,
    progress.maxId,
    page.apiClock?.date ?? null,
    page.apiClock ? Math.round(page.apiClock.skewMs) : null,
  ];
}
