import { describe, expect, it } from 'vitest';
import { Dataset, type DatasetOptions } from '../../../src/simulator/dataset.js';
import { simulatedAccounts } from '../../../src/simulator/simulated-accounts.js';

type Link = Record<string, unknown>;

/** Ids of a list the dataset serves. */
function served(ds: Dataset, list: 'job_boards' | 'referrers' | 'sources'): Set<number> {
  return new Set([...ds.presentIndexes(list)].map((index) => ds.idOf(list, index)));
}

/** The reference ids the dataset's tracking links name, nested or flat. */
function named(ds: Dataset): Record<'job_boards' | 'referrers' | 'sources', Set<number>> {
  const ids = {
    job_boards: new Set<number>(),
    referrers: new Set<number>(),
    sources: new Set<number>(),
  };
  const add = (set: Set<number>, id: unknown) => {
    if (typeof id === 'number') set.add(id);
  };
  for (const index of ds.presentIndexes('tracking_links')) {
    const link = ds.record('tracking_links', index) as Link;
    add(ids.job_boards, (link.job_board as Link | null)?.id ?? link.job_board_id);
    add(ids.referrers, (link.credited_to as Link | null)?.id ?? link.referrer_id);
    add(ids.sources, (link.source as Link | null)?.id ?? link.source_id);
  }
  return ids;
}

describe('simulated tracking links', () => {
  // A full run of a reference list soft-deletes the rows its list no longer
  // serves; a link naming a record its list never served would make that
  // sweep look like a mass deletion (and trip HIRESYNC_MAX_DELETE_FRACTION).
  it.each([
    ['the default dataset', new Dataset()],
    [
      'a registered account of 20 records a list',
      new Dataset(simulatedAccounts(2)[1]?.dataset as DatasetOptions),
    ],
    [
      'flat links of small lists',
      new Dataset({ counts: { referrers: 5, job_boards: 3, sources: 2 }, flatTrackingLinks: true }),
    ],
  ])('name only boards, referrers and sources their lists serve: %s', (_, ds) => {
    const ids = named(ds);
    for (const list of ['job_boards', 'referrers', 'sources'] as const) {
      expect(ids[list].size).toBeGreaterThan(0);
      expect([...ids[list]].filter((id) => !served(ds, list).has(id))).toEqual([]);
    }
  });
});
