import { CompiledQuery, type Kysely } from 'kysely';
import type { ApiClockReading, StorageKind } from '../../sync/ports.js';
import type { Database } from '../tables.js';
import { type UnchangedTest, unchangedRecords } from './sql/unchanged-records.js';

/** How each storage kind tells a record stored as it is (see sql/unchanged-records.ts). */
const TESTS: Readonly<Record<StorageKind, UnchangedTest>> = {
  json: 'json',
  tracking_links: 'tracking_links',
  job_boards: 'reference',
  sources: 'reference',
  referrers: 'reference',
};

const texts = new Map<string, string>();

function statementText(storage: StorageKind, table: string): string {
  const key = JSON.stringify([storage, table]);
  let text = texts.get(key);
  if (text === undefined) {
    text = unchangedRecords(TESTS[storage], table);
    texts.set(key, text);
  }
  return text;
}

/** A page of an incremental run, to compare with what its table holds. */
export interface PageToCompare {
  /** The account whose rows to compare with (bound in every filter). */
  account: string;
  storage: StorageKind;
  table: string;
  runId: string;
  pageNumber: number;
  /** The response body as received, and the property holding its records (null: the body is the array). */
  body: string;
  recordsKey: string | null;
  /** Positions of the records validation rejected. */
  rejected: readonly number[];
  /** The API's clock at the run's first response, to record with the page. */
  apiClock?: ApiClockReading | undefined;
}

/** What the comparison found. */
export interface UnchangedRecords {
  /** Positions of the records the table holds as they are: the page statement skips them. */
  positions: number[];
  /**
   * Every record is stored as it is and none was rejected: the statement has
   * added the page to its run's counts, and nothing is left to write.
   */
  nothingToWrite: boolean;
  /** Highest and lowest id of the page's records but the rejected (text). */
  maxId: string | null;
  minId: string | null;
}

/**
 * Finds the records of a page its table already holds as they are, in one
 * statement that reads and, when nothing is left to write, counts the page
 * in its run (see sql/unchanged-records.ts). It takes no lock: it writes no
 * row of the resource's tables.
 */
export async function findUnchanged(
  db: Kysely<Database>,
  page: PageToCompare,
): Promise<UnchangedRecords> {
  const { rows } = await db.executeQuery<{
    unchanged: number[];
    nothing_to_write: boolean;
    max_id: string | null;
    min_id: string | null;
  }>(
    CompiledQuery.raw(statementText(page.storage, page.table), [
      page.body,
      page.recordsKey,
      page.runId,
      page.rejected,
      page.pageNumber,
      page.apiClock?.date ?? null,
      page.apiClock === undefined ? null : Math.round(page.apiClock.skewMs),
      page.account,
    ]),
  );
  const row = rows[0];
  return {
    positions: row?.unchanged ?? [],
    nothingToWrite: row?.nothing_to_write === true,
    maxId: row?.max_id ?? null,
    minId: row?.min_id ?? null,
  };
}
