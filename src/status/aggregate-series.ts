import { Gauge, type Registry } from 'prom-client';
import { PAIR_STATES, type ScopedSeries } from './account-series-scope.js';

/**
 * The series that sum up the accounts, whatever their number, from the
 * scrape's read of Postgres (`read`; undefined when Postgres cannot be read,
 * and the last values stay): `hiresync_metrics_per_account_series`,
 * `hiresync_accounts{state}`, `hiresync_account_resources{resource,state}`
 * and `hiresync_last_success_oldest_timestamp_seconds{resource}`.
 */
export function registerAggregates(
  registry: Registry,
  read: () => Promise<ScopedSeries | undefined>,
): void {
  const gauge = <L extends string>(
    options: { name: string; help: string; labelNames: readonly L[] },
    set: (gauge: Gauge<L>, scope: ScopedSeries) => void,
  ) =>
    new Gauge<L>({
      ...options,
      registers: [registry],
      async collect() {
        const scope = await read();
        if (scope === undefined) return;
        this.reset();
        set(this, scope);
      },
    });
  gauge(
    {
      name: 'hiresync_metrics_per_account_series',
      help: "1 when this scrape holds every account's series, 0 when only those of the accounts that need action beside the aggregates (HIRESYNC_METRICS_ACCOUNT_SERIES)",
      labelNames: [],
    },
    (g, scope) => g.set(scope.perAccount ? 1 : 0),
  );
  gauge(
    {
      name: 'hiresync_accounts',
      help: 'Enabled accounts by state (enabled, needs_reauthorization, credentials_refused); default counts as enabled when the environment has credentials',
      labelNames: ['state'],
    },
    (g, scope) => {
      for (const [state, count] of Object.entries(scope.accounts)) g.set({ state }, count);
    },
  );
  gauge(
    {
      name: 'hiresync_account_resources',
      help: "Enabled accounts' synced resources with a finished run, by resource and state: failed (the latest finished run failed), stale (no success for longer than the stale age), ok",
      labelNames: ['resource', 'state'],
    },
    (g, scope) => {
      // Every state of a resource, 0 included: a sum of failed is never absent.
      for (const resource of new Set(scope.pairs.map((p) => p.resource)))
        for (const state of PAIR_STATES) g.set({ resource, state }, 0);
      for (const p of scope.pairs) g.set({ resource: p.resource, state: p.state }, p.count);
    },
  );
  gauge(
    {
      name: 'hiresync_last_success_oldest_timestamp_seconds',
      help: 'The oldest last success of the resource among the enabled accounts that sync it (epoch seconds)',
      labelNames: ['resource'],
    },
    (g, scope) => {
      for (const o of scope.oldest) g.set({ resource: o.resource }, o.at);
    },
  );
}
