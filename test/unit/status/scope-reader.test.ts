import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ScopedSeries } from '../../../src/status/account-series-scope.js';
import { ScopeReader, SERVE_UP_TO_MS } from '../../../src/status/scope-reader.js';

/** A read's result: per account or not, and which read it was. */
function scopeOf(perAccount: boolean, read: number): ScopedSeries {
  return {
    perAccount,
    lastSuccesses: [],
    lastRuns: [],
    partners: [],
    credentialed: [{ account: `read${read}`, credentialsRefused: true }],
    accounts: { enabled: read, needs_reauthorization: 0, credentials_refused: 0 },
    pairs: [],
    oldest: [],
    needingAction: [{ reason: 'credentials_refused', count: 1, leftOut: 0 }],
  };
}

/** A reader over a fake Postgres whose reads answer only when told, and a clock set by hand. */
function harness(perAccount: boolean) {
  const pending: Array<() => void> = [];
  let reads = 0;
  let nowMs = 0;
  let down = false;
  const reader = new ScopeReader(
    () =>
      new Promise<ScopedSeries>((resolve, reject) => {
        reads += 1;
        const read = reads;
        pending.push(() =>
          down ? reject(new Error('connection refused')) : resolve(scopeOf(perAccount, read)),
        );
      }),
    () => nowMs,
  );
  const answer = async () => {
    for (const resolve of pending.splice(0)) resolve();
    await nextTurn();
  };
  /** One scrape whose read is answered at once (when it waits for one). */
  const scrape = async () => {
    const scope = reader.forScrape();
    await answer();
    const got = await scope;
    await nextTurn();
    return got?.accounts.enabled;
  };
  return {
    reader,
    scrape,
    answer,
    reads: () => reads,
    postgresDown: () => {
      down = true;
    },
    at: (ms: number) => {
      nowMs = ms;
    },
  };
}

describe('the Postgres read a scrape serves', () => {
  it('up to the threshold is made anew at every scrape', async () => {
    const h = harness(true);
    expect(await h.scrape()).toBe(1);
    h.at(1000);
    expect(await h.scrape()).toBe(2);
    expect(h.reads()).toBe(2);
  });

  it('past the threshold is the last one for 10 s, then served while a new one is made in the background', async () => {
    const h = harness(false);
    expect(await h.scrape()).toBe(1);
    h.at(5_000);
    expect(await h.scrape()).toBe(1);
    expect(h.reads()).toBe(1);
    // Over 10 s old: served at once, and read again behind it.
    h.at(15_000);
    const scope = await h.reader.forScrape();
    expect(scope?.accounts.enabled).toBe(1);
    expect(h.reads()).toBe(2);
    await h.answer();
    await nextTurn();
    h.at(16_000);
    expect(await h.scrape()).toBe(2);
  });

  it('past the threshold waits for a new read once the last is over 2 minutes old', async () => {
    const h = harness(false);
    expect(await h.scrape()).toBe(1);
    h.at(130_000);
    expect(await h.scrape()).toBe(2);
  });
});

describe('the Postgres read a scrape serves while Postgres cannot be read', () => {
  for (const perAccount of [true, false])
    it(`is the last one up to 2 minutes old, then none (${perAccount ? 'up to' : 'past'} the threshold)`, async () => {
      const h = harness(perAccount);
      expect(await h.scrape()).toBe(1);
      h.postgresDown();
      h.at(60_000);
      expect(await h.scrape()).toBe(1);
      h.at(SERVE_UP_TO_MS + 1);
      expect(await h.scrape()).toBeUndefined();
      expect(h.reader.lastReadAtMs).toBe(0);
    });
});
