import type { Kysely } from 'kysely';
import { writePageAfter } from '../src/warehouse/pages/pipelined-page.js';
import {
  type PageToWrite,
  type PageVerdict,
  validatePage,
  writePage,
} from '../src/warehouse/pages/write-page.js';
import type { Database } from '../src/warehouse/tables.js';

/**
 * Writes `pages` in order as a full run's walk does (src/sync/read-walk.ts):
 * each started beside the one before it (writePageAfter) before that one
 * commits, two at most in hand. Used by the bench and the test that compare
 * it with one page at a time.
 */
export async function writeTwoAtATime(
  db: Kysely<Database>,
  pages: Iterable<PageToWrite>,
): Promise<void> {
  let before: { write: Promise<unknown>; verdict: PageVerdict } | undefined;
  for (const page of pages) {
    const verdict = validatePage(page.resource, page.records);
    const write = before
      ? writePageAfter(db, page, verdict, { committed: before.write, verdict: before.verdict })
      : writePage(db, page, verdict);
    write.catch(() => {});
    await before?.write;
    before = { write, verdict };
  }
  await before?.write;
}
