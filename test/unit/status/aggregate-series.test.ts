import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { ScopedSeries } from '../../../src/status/account-series-scope.js';
import { registerAggregates } from '../../../src/status/aggregate-series.js';

const scope: ScopedSeries = {
  perAccount: false,
  lastSuccesses: [],
  lastRuns: [],
  partners: [],
  credentialed: [],
  accounts: { enabled: 900, needs_reauthorization: 0, credentials_refused: 0 },
  pairs: [{ resource: 'jobs', state: 'ok', count: 900 }],
  oldest: [{ resource: 'jobs', at: 1_800_000_000 }],
  needingAction: [
    { reason: 'credentials_refused', count: 0, leftOut: 0 },
    { reason: 'failing', count: 700, leftOut: 200 },
  ],
};

/** The sample lines of a scrape, comments left out. */
async function samples(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
}

describe('the aggregate series of the accounts', () => {
  it('are dropped once no read young enough is at hand, while the time of the last read stays', async () => {
    const registry = new Registry();
    let served: ScopedSeries | undefined = scope;
    registerAggregates(
      registry,
      async () => served,
      () => 1_800_000_000_000,
    );
    expect(await samples(registry)).toEqual(
      expect.arrayContaining([
        'hiresync_metrics_read_timestamp_seconds 1800000000',
        'hiresync_accounts{state="enabled"} 900',
        'hiresync_account_resources{resource="jobs",state="ok"} 900',
        'hiresync_accounts_needing_action{reason="failing"} 700',
        'hiresync_metrics_accounts_left_out{reason="failing"} 200',
      ]),
    );
    served = undefined;
    // The mode stays: a gauge without labels cannot be absent.
    expect(await samples(registry)).toEqual([
      'hiresync_metrics_read_timestamp_seconds 1800000000',
      'hiresync_metrics_per_account_series 0',
    ]);
  });
});
