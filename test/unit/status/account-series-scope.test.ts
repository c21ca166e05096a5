import { describe, expect, it } from 'vitest';
import type { AccountSeries } from '../../../src/status/account-series.js';
import { NEEDS_ACTION_MAX, scopeAccountSeries } from '../../../src/status/account-series-scope.js';
import { Metrics } from '../../../src/status/metrics.js';

const NOW = 1_800_000_000;
const HOUR = 3600;

/** `count` client-credentials accounts with jobs and job_posts succeeded a minute ago, but those `change` alters. */
function accounts(
  count: number,
  change: (name: string, read: AccountSeries) => void = () => {},
): AccountSeries {
  const read: AccountSeries = { lastSuccesses: [], lastRuns: [], partners: [], credentialed: [] };
  for (let i = 1; i <= count; i += 1) {
    const account = `acct${String(i).padStart(5, '0')}`;
    for (const resource of ['jobs', 'job_posts']) {
      read.lastSuccesses.push({ account, resource, at: NOW - 60 });
      read.lastRuns.push({ account, resource, failed: false });
    }
    read.credentialed.push({ account, credentialsRefused: false });
    change(account, read);
  }
  return read;
}

const options = (accountSeries: number) => ({
  isSynced: () => true,
  withDefault: false,
  accountSeries,
  nowSeconds: NOW,
  staleAfterSeconds: HOUR,
});

/** acct00003's jobs fail, acct00005's job_posts last succeeded 5 h ago, acct00007's credentials were refused. */
function troubled(name: string, read: AccountSeries): void {
  const run = (resource: string) =>
    read.lastRuns.find((r) => r.account === name && r.resource === resource);
  if (name === 'acct00003') Object.assign(run('jobs') ?? {}, { failed: true });
  if (name === 'acct00005') {
    const s = read.lastSuccesses.find((r) => r.account === name && r.resource === 'job_posts');
    Object.assign(s ?? {}, { at: NOW - 5 * HOUR });
  }
  if (name === 'acct00007')
    Object.assign(read.credentialed.at(-1) ?? {}, { credentialsRefused: true });
}

describe('the account series a scrape holds', () => {
  it('holds every account as read up to the threshold', () => {
    const read = accounts(10, troubled);
    const scope = scopeAccountSeries(read, options(10));
    expect(scope.perAccount).toBe(true);
    expect(scope.lastRuns).toEqual(read.lastRuns);
    expect(scope.lastSuccesses).toEqual(read.lastSuccesses);
    expect(scope.credentialed).toEqual(read.credentialed);
  });

  it('above it holds only the pairs and accounts that need action, and counts every one', () => {
    const scope = scopeAccountSeries(accounts(1000, troubled), options(100));
    expect(scope.perAccount).toBe(false);
    expect(scope.lastRuns).toEqual([
      { account: 'acct00003', resource: 'jobs', failed: true },
      { account: 'acct00005', resource: 'job_posts', failed: false },
    ]);
    expect(scope.lastSuccesses).toEqual([
      { account: 'acct00003', resource: 'jobs', at: NOW - 60 },
      { account: 'acct00005', resource: 'job_posts', at: NOW - 5 * HOUR },
    ]);
    expect(scope.credentialed).toEqual([{ account: 'acct00007', credentialsRefused: true }]);
    expect(scope.accounts).toEqual({
      enabled: 999,
      needs_reauthorization: 0,
      credentials_refused: 1,
    });
    expect(scope.pairs).toEqual(
      expect.arrayContaining([
        { resource: 'jobs', state: 'ok', count: 999 },
        { resource: 'jobs', state: 'failed', count: 1 },
        { resource: 'job_posts', state: 'ok', count: 999 },
        { resource: 'job_posts', state: 'stale', count: 1 },
      ]),
    );
    expect(scope.oldest).toEqual(
      expect.arrayContaining([
        { resource: 'jobs', at: NOW - 60 },
        { resource: 'job_posts', at: NOW - 5 * HOUR },
      ]),
    );
  });

  it('keeps at most NEEDS_ACTION_MAX accounts that need action when every account fails', () => {
    const read = accounts(2000, (name, r) => {
      for (const run of r.lastRuns) if (run.account === name) run.failed = true;
    });
    const scope = scopeAccountSeries(read, options(100));
    expect(new Set(scope.lastRuns.map((r) => r.account)).size).toBe(NEEDS_ACTION_MAX);
    expect(scope.pairs.find((p) => p.resource === 'jobs' && p.state === 'failed')?.count).toBe(
      2000,
    );
  });

  it('past NEEDS_ACTION_MAX keeps the most severe first, counts them all and says how many it left out', () => {
    // 600 accounts fail; acct00001 is only stale, the last two have their credentials refused.
    const read = accounts(2000, (name, r) => {
      const n = Number(name.slice(4));
      if (n === 1) Object.assign(r.lastSuccesses[0] ?? {}, { at: NOW - 5 * HOUR });
      if (n >= 1000 && n < 1600)
        for (const run of r.lastRuns) if (run.account === name) run.failed = true;
      if (n >= 1999) Object.assign(r.credentialed.at(-1) ?? {}, { credentialsRefused: true });
    });
    const scope = scopeAccountSeries(read, options(100));
    expect(scope.credentialed.map((c) => c.account)).toEqual(['acct01999', 'acct02000']);
    const shown = new Set(scope.lastRuns.map((r) => r.account));
    expect(shown.size).toBe(NEEDS_ACTION_MAX - 2);
    expect(shown.has('acct00001')).toBe(false);
    expect(shown.has('acct01000')).toBe(true);
    expect(scope.needingAction).toEqual([
      { reason: 'credentials_refused', count: 2, leftOut: 0 },
      { reason: 'needs_reauthorization', count: 0, leftOut: 0 },
      { reason: 'failing', count: 600, leftOut: 102 },
      { reason: 'stale', count: 1, leftOut: 1 },
    ]);
  });

  it('up to the threshold counts the accounts that need action and leaves none out', () => {
    const scope = scopeAccountSeries(accounts(10, troubled), options(10));
    expect(scope.needingAction.map((n) => [n.reason, n.count, n.leftOut])).toEqual([
      ['credentials_refused', 1, 0],
      ['needs_reauthorization', 0, 0],
      ['failing', 1, 0],
      ['stale', 1, 0],
    ]);
  });

  it('leaves out a resource the account no longer syncs', () => {
    const scope = scopeAccountSeries(accounts(3, troubled), {
      ...options(100),
      isSynced: (account, resource) => !(account === 'acct00003' && resource === 'jobs'),
    });
    expect(scope.lastRuns.some((r) => r.account === 'acct00003' && r.resource === 'jobs')).toBe(
      false,
    );
    expect(scope.pairs.find((p) => p.resource === 'jobs' && p.state === 'failed')).toBeUndefined();
  });
});

describe("the counters of a process's runs above the threshold", () => {
  it('count every account in one series without the account label', async () => {
    const metrics = new Metrics({ defaultMetrics: false, accountSeries: 2 });
    const each = ['alpha', 'beta', 'gamma'].map((name) => metrics.forAccount(name));
    for (const m of each) m.onPage?.('jobs', 10, 0);
    const body = await metrics.registry.metrics();
    expect(body).toContain('hiresync_pages_total{account="",resource="jobs"} 3');
    expect(body).not.toContain('account="alpha"');
  });

  it('carry each account up to the threshold', async () => {
    const metrics = new Metrics({ defaultMetrics: false, accountSeries: 3 });
    for (const name of ['alpha', 'beta', 'gamma']) metrics.forAccount(name).onPage?.('jobs', 10, 0);
    const body = await metrics.registry.metrics();
    expect(body).toContain('hiresync_pages_total{account="gamma",resource="jobs"} 1');
    expect(body).not.toContain('account=""');
  });
});
