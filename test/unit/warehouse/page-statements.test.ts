import { describe, expect, it } from 'vitest';
import { jobs } from '../../../src/resources/jobs.js';
import { jobBoards, referrers, sources } from '../../../src/resources/reference-lists.js';
import { trackingLinks } from '../../../src/resources/tracking-links.js';
import { pageParameters, pageStatementText } from '../../../src/warehouse/pages/page-statement.js';
import { rejectedRecords } from '../../../src/warehouse/pages/sql/rejected-records.js';
import { quoteIdentifier } from '../../../src/warehouse/quote-identifier.js';

// The statements as Postgres receives them: a change to the SQL shows here as
// a diff of these files.
describe('page statements', () => {
  it('store tracking links with their job boards, referrers, sources and history in one statement', async () => {
    await expect(pageStatementText(trackingLinks)).toMatchFileSnapshot(
      '__snapshots__/tracking-links-page.sql',
    );
  });

  it('store records as sent, with their history, in one statement', async () => {
    await expect(pageStatementText(jobs)).toMatchFileSnapshot(
      '__snapshots__/json-records-page.sql',
    );
  });

  it('store each reference list in the table the nested objects of tracking links fill, with its history', async () => {
    await expect(pageStatementText(jobBoards)).toMatchFileSnapshot(
      '__snapshots__/job-boards-page.sql',
    );
    // The same shape: only the table, its columns and the keys that fill them differ.
    await expect(pageStatementText(sources)).toMatchFileSnapshot('__snapshots__/sources-page.sql');
    await expect(pageStatementText(referrers)).toMatchFileSnapshot(
      '__snapshots__/referrers-page.sql',
    );
  });

  it('store rejected records and mark the rows of their ids as seen, in a statement of their own', async () => {
    await expect(
      rejectedRecords({
        table: 'tracking_links',
        history: 'tracking_links_history',
        record: 'raw',
      }),
    ).toMatchFileSnapshot('__snapshots__/rejected-records.sql');
  });

  it('vary only in the quoted identifiers of their tables', () => {
    const scorecards = pageStatementText({
      storage: 'json',
      table: 'scorecards',
      historyTable: 'scorecards_history',
    });
    expect(scorecards).toBe(
      pageStatementText(jobs)
        .replaceAll('"data_jobs_history"', '"data_scorecards_history"')
        .replaceAll('"data_jobs"', '"data_scorecards"'),
    );
    expect(quoteIdentifier('we"ird')).toBe('"we""ird"');
  });

  it('take their optional parts as parameters: an empty array, a boolean', () => {
    const input = {
      account: 'acme',
      resource: 'jobs',
      runId: '7',
      pageNumber: 3,
      body: '[]',
      recordsKey: null,
      rejected: [],
      distinctIds: true,
      history: false,
    };
    expect(pageParameters(input, 'json')).toEqual(['[]', null, '7', [], false, 'acme']);
    expect(pageParameters(input, 'tracking_links')).toEqual([
      '[]',
      null,
      '7',
      [],
      false,
      'acme',
      true,
    ]);
    const used = (text: string) =>
      [...new Set([...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
    expect(used(pageStatementText(jobs))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(used(pageStatementText(trackingLinks))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(pageParameters(input, 'sources')).toEqual(['[]', null, '7', [], false, 'acme']);
    expect(used(pageStatementText(sources))).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
