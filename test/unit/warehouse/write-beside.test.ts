import { describe, expect, it } from 'vitest';
import { jobBoards } from '../../../src/resources/reference-lists.js';
import { trackingLinks } from '../../../src/resources/tracking-links.js';
import { mayWriteBeside } from '../../../src/warehouse/pages/pipelined-page.js';
import type { PageToWrite } from '../../../src/warehouse/pages/write-page.js';
import { validatePage } from '../../../src/warehouse/pages/write-page.js';

const link = (id: unknown) => ({ id, token: `t${String(id)}` });

function pageOf(records: unknown[], resource = trackingLinks, skipUnchanged = false) {
  const page: PageToWrite = {
    account: 'default',
    resource,
    runId: '1',
    pageNumber: 2,
    body: JSON.stringify(records),
    records,
    skipUnchanged,
  };
  return { page, verdict: validatePage(resource, records) };
}

describe('which page may write its rows beside the page before it', () => {
  const earlier = validatePage(trackingLinks, [link(9), link(8), link(7)]);

  it('a page whose ids are distinct and none of the page before it', () => {
    const { page, verdict } = pageOf([link(6), link(5)]);
    expect(mayWriteBeside(page, verdict, earlier)).toBe(true);
  });

  it('not a page sharing an id with the page before it (two writers of one row, two open versions)', () => {
    const { page, verdict } = pageOf([link(6), link(7)]);
    expect(mayWriteBeside(page, verdict, earlier)).toBe(false);
  });

  it('not a page whose ids are not all known exactly and distinct', () => {
    for (const records of [
      [link(6), link(6)],
      [link(6), link(2 ** 53 + 2)],
    ]) {
      const { page, verdict } = pageOf(records);
      expect(mayWriteBeside(page, verdict, earlier)).toBe(false);
    }
    const { page, verdict } = pageOf([link(6)]);
    const unknown = validatePage(trackingLinks, [link(9), link(9)]);
    expect(mayWriteBeside(page, verdict, unknown)).toBe(false);
  });

  it('not after a page with rejected records (their rows are marked seen once its turn came)', () => {
    const rejecting = validatePage(trackingLinks, [link(9), { id: 'not an id' }]);
    expect(rejecting.rejected).toHaveLength(1);
    const { page, verdict } = pageOf([link(6)]);
    expect(mayWriteBeside(page, verdict, rejecting)).toBe(false);
  });

  it('a page with rejected records of its own (its turn comes before it marks them)', () => {
    const { page, verdict } = pageOf([link(6), { id: 'not an id' }]);
    expect(mayWriteBeside(page, verdict, earlier)).toBe(true);
  });

  it('not a page of a reference list, nor an incremental run’s, nor the first page', () => {
    const boards = pageOf([{ id: 6, name: 'b' }], jobBoards);
    const boardsBefore = validatePage(jobBoards, [{ id: 9, name: 'a' }]);
    expect(mayWriteBeside(boards.page, boards.verdict, boardsBefore)).toBe(false);
    const incremental = pageOf([link(6)], trackingLinks, true);
    expect(mayWriteBeside(incremental.page, incremental.verdict, earlier)).toBe(false);
    const first = pageOf([link(6)]);
    expect(mayWriteBeside(first.page, first.verdict, undefined)).toBe(false);
  });
});
