// A /metrics scrape above HIRESYNC_METRICS_ACCOUNT_SERIES holds no series of
// a healthy account: aggregates that count every account, and the series of
// the accounts that need action; up to it, every account's series as before.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { Metrics } from '../../src/status/metrics.js';
import { type AccountsHarness, startAccountsHarness } from '../support/accounts-harness.js';
import { addManyAccounts, type ManyAccounts } from '../support/many-accounts.js';

/** The account whose job_posts last succeeded 5 hours ago: stale. */
const STALE = 'bulk007';

let h: AccountsHarness;
let many: ManyAccounts;

/** One scrape of Metrics over the harness's database with `accountSeries`, each account's runs counted once. */
async function scrape(accountSeries: number): Promise<string> {
  const metrics = new Metrics({
    defaultMetrics: false,
    db: h.database.db,
    withDefault: false,
    accountSeries,
    staleAfterSeconds: 3 * 3600,
  });
  const accounts = ['beta', ...many.names].map((name) => metrics.forAccount(name));
  for (const m of accounts) m.onPage?.('jobs', 10, 0);
  return metrics.registry.metrics();
}

/** The value of the series `line` (name and labels, as printed), or undefined. */
function seriesValue(body: string, line: string): number | undefined {
  const found = body.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

/** Every account named by a series of `body`. */
function accountsIn(body: string): Set<string> {
  return new Set([...body.matchAll(/account="([^"]*)"/g)].map((m) => m[1] ?? ''));
}

beforeAll(async () => {
  h = await startAccountsHarness({ accounts: ['beta'], withoutDefault: true });
  // beta, without runs, and 150 more with a run of each resource.
  many = await addManyAccounts(h.database.db, 'beta', 150);
  await sql`
    update hiresync.data_sync_runs
    set started_at = now() - interval '5 hours', finished_at = now() - interval '5 hours' + interval '5 seconds'
    where account = ${STALE} and resource = 'job_posts'`.execute(h.database.db);
}, 180_000);

afterAll(async () => {
  await h?.close();
});

describe('/metrics at 151 accounts', () => {
  it('above the threshold holds the accounts that need action and aggregates that count every account, no healthy account', async () => {
    const body = await scrape(100);
    const needingAction = new Set([...many.failing, ...many.refused, STALE]);
    expect(seriesValue(body, 'hiresync_metrics_per_account_series')).toBe(0);
    // Every account named is one that needs action; the counters' one is "".
    expect([...accountsIn(body)].filter((a) => a !== '' && !needingAction.has(a))).toEqual([]);
    expect(seriesValue(body, 'hiresync_pages_total{account="",resource="jobs"}')).toBe(151);
    for (const account of many.failing)
      expect(
        seriesValue(body, `hiresync_last_run_failed{account="${account}",resource="jobs"}`),
      ).toBe(1);
    for (const account of many.refused)
      expect(seriesValue(body, `hiresync_account_credentials_refused{account="${account}"}`)).toBe(
        1,
      );
    expect(
      seriesValue(
        body,
        `hiresync_last_success_timestamp_seconds{account="${STALE}",resource="job_posts"}`,
      ),
    ).toBeLessThan(Date.now() / 1000 - 4 * 3600);

    // The aggregates, against counts made here from the seeded rows.
    const { rows } = await sql<{ state: string; n: number }>`
      select state, count(*)::int as n from hiresync.accounts group by state`.execute(
      h.database.db,
    );
    for (const { state, n } of rows)
      expect(seriesValue(body, `hiresync_accounts{state="${state}"}`)).toBe(n);
    expect(seriesValue(body, 'hiresync_accounts{state="enabled"}')).toBe(151 - many.refused.length);
    for (const resource of RESOURCE_NAMES) {
      const failed = many.refused.length + (resource === 'jobs' ? many.failing.length : 0);
      const stale = resource === 'job_posts' ? 1 : 0;
      const of = (state: string) =>
        seriesValue(body, `hiresync_account_resources{resource="${resource}",state="${state}"}`);
      expect([of('failed'), of('stale'), of('ok')]).toEqual([failed, stale, 150 - failed - stale]);
    }
  });

  it('up to the threshold holds every account as before', async () => {
    for (const accountSeries of [151, Number.POSITIVE_INFINITY]) {
      const body = await scrape(accountSeries);
      expect(seriesValue(body, 'hiresync_metrics_per_account_series')).toBe(1);
      expect(accountsIn(body)).toEqual(new Set(['beta', ...many.names]));
      // Every account's latest run of every resource, failed or not, as before.
      for (const account of many.names)
        for (const resource of RESOURCE_NAMES)
          expect(
            seriesValue(
              body,
              `hiresync_last_run_failed{account="${account}",resource="${resource}"}`,
            ),
            `${account}/${resource}`,
          ).toBeDefined();
      expect(seriesValue(body, 'hiresync_pages_total{account="bulk001",resource="jobs"}')).toBe(1);
      expect(seriesValue(body, 'hiresync_last_run_failed{account="bulk002",resource="jobs"}')).toBe(
        0,
      );
    }
  });
});
