import { Gauge, type Registry } from 'prom-client';
import { PAIR_STATES, type ScopedSeries } from './account-series-scope.js';

/**
 * The series that sum up the accounts, whatever their number, from the
 * scrape's read of Postgres (`read`; undefined when no read under the cache
 * limit is at hand, and they are dropped rather than left stale; only
 * `hiresync_metrics_per_account_series`, the mode, stays):
 * `hiresync_metrics_per_account_series`, `hiresync_accounts{state}`,
 * `hiresync_account_resources{resource,state}`,
 * `hiresync_last_success_oldest_timestamp_seconds{resource}`,
 * `hiresync_accounts_needing_action{reason}` and
 * `hiresync_metrics_accounts_left_out{reason}`; and
 * `hiresync_metrics_read_timestamp_seconds`, when the read they come from was
 * made (`readAtMs`), kept while Postgres cannot be read.
 */
export function registerAggregates(
  registry: Registry,
  read: () => Promise<ScopedSeries | undefined>,
  readAtMs: () => number | undefined,
): void {
  new Gauge({
    name: 'hiresync_metrics_read_timestamp_seconds',
    help: 'When the Postgres read the account series of this scrape come from was made (epoch seconds); the series are dropped once it is over 2 minutes old',
    registers: [registry],
    async collect() {
      await read();
      const atMs = readAtMs();
      if (atMs !== undefined) this.set(atMs / 1000);
    },
  });
  const gauge = <L extends string>(
    options: { name: string; help: string; labelNames: readonly L[] },
    set: (gauge: Gauge<L>, scope: ScopedSeries) => void,
    whenUnread: 'drop' | 'keep' = 'drop',
  ) =>
    new Gauge<L>({
      ...options,
      registers: [registry],
      async collect() {
        const scope = await read();
        if (scope === undefined && whenUnread === 'keep') return;
        this.reset();
        if (scope) set(this, scope);
      },
    });
  gauge(
    {
      name: 'hiresync_metrics_per_account_series',
      help: "1 when this scrape holds every account's series, 0 when only those of the accounts that need action beside the aggregates (HIRESYNC_METRICS_ACCOUNT_SERIES)",
      labelNames: [],
    },
    (g, scope) => g.set(scope.perAccount ? 1 : 0),
    // The mode, not a count: it stays (a gauge without labels cannot be absent).
    'keep',
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
  gauge(
    {
      name: 'hiresync_accounts_needing_action',
      help: 'Enabled accounts that need action, all of them, by their most severe reason (credentials_refused, needs_reauthorization, failing, stale), whether or not this scrape holds their own series',
      labelNames: ['reason'],
    },
    (g, scope) => {
      for (const n of scope.needingAction) g.set({ reason: n.reason }, n.count);
    },
  );
  gauge(
    {
      name: 'hiresync_metrics_accounts_left_out',
      help: 'Accounts that need action whose own series this scrape leaves out (past the 500 it keeps, the most severe first), by their most severe reason',
      labelNames: ['reason'],
    },
    (g, scope) => {
      for (const n of scope.needingAction) g.set({ reason: n.reason }, n.leftOut);
    },
  );
}
