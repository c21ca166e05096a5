import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Kysely } from 'kysely';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import { AUTO_ACCOUNT_SERIES } from '../config/variables.js';
import { readVersion } from '../version.js';
import { readTypedViewBlockStates } from '../warehouse/reports/status-reads.js';
import type { Database } from '../warehouse/tables.js';
import { AccountCounters, type AccountMetrics } from './account-counters.js';
import { readAccountSeries } from './account-series.js';
import { type ScopedSeries, scopeAccountSeries } from './account-series-scope.js';
import { registerAggregates } from './aggregate-series.js';
import { QUEUE_JOB_STATES } from './metric-label-values.js';
import { readWithin } from './read-within.js';
import { ScopeReader } from './scope-reader.js';

export type { AccountMetrics } from './account-counters.js';

/** The BullMQ queue as the metrics read it: its jobs by state (Queue.getJobCounts). */
export interface QueueCounts {
  getJobCounts(...states: JobState[]): Promise<Record<string, number>>;
}

type JobState = 'waiting' | 'prioritized' | 'active' | 'delayed' | 'failed';

/** Options of {@link Metrics}. */
export interface MetricsOptions {
  /** Node's process metrics. Default true. */
  defaultMetrics?: boolean;
  /**
   * Where series kept in Postgres are read at each scrape (last success,
   * re-authorization, typed views), so they are right from the first scrape
   * after a restart, and the same on every worker.
   */
  db?: Kysely<Database>;
  /** `default`'s runs (schema public) count: the environment has credentials. Default true. */
  withDefault?: boolean;
  /**
   * Whether an (account, resource) is synced now, asked once per scrape: a
   * resource left out of HIRESYNC_RESOURCES (or of an account's own
   * resources) keeps its runs, but its last success must not age into a
   * stale-run alert. Default every resource with a run.
   */
  synced?: () => Promise<(account: string, resource: string) => boolean>;
  /** The run queue, whose jobs are counted by state at each scrape. */
  queue?: QueueCounts;
  /**
   * HIRESYNC_METRICS_ACCOUNT_SERIES: every account's series while the
   * enabled accounts are at most this many (Infinity: always, 0: never);
   * above, aggregates and the accounts that need action. Default 100.
   */
  accountSeries?: number;
  /**
   * Above `accountSeries`, an (account, resource) whose last success is older
   * than this keeps its series (it is stale). Default 3600.
   */
  staleAfterSeconds?: number;
}

/** See {@link MetricsOptions.staleAfterSeconds}. */
const DEFAULT_STALE_AFTER_SECONDS = 3600;

const gzipText = promisify(gzip);

/** Event loop delay sampling for `*_eventloop_lag_*` (prom-client's 10 ms woke an idle worker 100 times a second). */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * Prometheus metrics of one process, served by `worker` at /metrics (see
 * docs/metrics.md). Every series of runs and requests carries an `account`
 * label while the enabled accounts are at most `accountSeries`; above, the
 * scrape holds aggregates by state and resource, and per-account series only
 * of the accounts that need action (see account-series-scope.ts), so that its
 * size does not grow with the accounts. Run durations are a sum and a count
 * per (resource, mode, outcome), not histogram buckets.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #counters: AccountCounters;
  readonly #lastSuccess: Gauge<'account' | 'resource'>;
  readonly #lastRunFailed: Gauge<'account' | 'resource'>;
  readonly #needsReauthorization: Gauge<'account'>;
  readonly #accountSeries: number;
  /** The accounts this process made metrics for: how many there are without a database. */
  readonly #seen = new Set<string>();

  constructor(options: MetricsOptions = {}) {
    if (options.defaultMetrics ?? true)
      collectDefaultMetrics({
        register: this.registry,
        prefix: 'hiresync_',
        eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
      });
    const { db, queue, synced } = options;
    const withDefault = options.withDefault ?? true;
    this.#accountSeries = options.accountSeries ?? AUTO_ACCOUNT_SERIES;
    const reader =
      db &&
      new ScopeReader(async () => {
        const read = await readAccountSeries(db, { withDefault });
        const isSynced = synced ? await synced() : () => true;
        return (
          read &&
          scopeAccountSeries(read, {
            isSynced,
            withDefault,
            accountSeries: this.#accountSeries,
            nowSeconds: Date.now() / 1000,
            staleAfterSeconds: options.staleAfterSeconds ?? DEFAULT_STALE_AFTER_SECONDS,
          })
        );
      });
    const readScope = async () => reader?.forScrape();
    this.#counters = new AccountCounters(this.registry, async () => {
      const scope = await readScope();
      // Postgres unreachable: the mode stays.
      if (scope) this.#counters.perAccount = scope.perAccount;
      else if (!db) this.#counters.perAccount = this.#seen.size <= this.#accountSeries;
    });
    new Gauge({
      name: 'hiresync_build_info',
      help: 'Always 1; the version of hiresync this process runs',
      labelNames: ['version'],
      registers: [this.registry],
    }).set({ version: buildVersion() }, 1);
    // The series of the accounts and resources, from one read of Postgres.
    const fromScope =
      <L extends string>(series: (scope: ScopedSeries) => Series<L>) =>
      async () => {
        if (!reader) return undefined;
        const scope = await readScope();
        // No read under 2 minutes old: the series are dropped, not left stale.
        return scope ? series(scope) : [];
      };
    this.#lastSuccess = gaugeReadAtScrape(this.registry, {
      name: 'hiresync_last_success_timestamp_seconds',
      help: "When a run of the resource last succeeded (read from the account's sync_runs at each scrape)",
      labelNames: ['account', 'resource'],
      read: fromScope((s) =>
        s.lastSuccesses.map((r) => [{ account: r.account, resource: r.resource }, r.at]),
      ),
    });
    this.#lastRunFailed = gaugeReadAtScrape(this.registry, {
      name: 'hiresync_last_run_failed',
      help: "1 when the latest finished run of the resource failed (a 403, not permitted, included), 0 when it succeeded (read from the account's sync_runs at each scrape)",
      labelNames: ['account', 'resource'],
      read: fromScope((s) =>
        s.lastRuns.map((r) => [{ account: r.account, resource: r.resource }, r.failed ? 1 : 0]),
      ),
    });
    this.#needsReauthorization = gaugeReadAtScrape(this.registry, {
      name: 'hiresync_account_needs_reauthorization',
      help: "1 while a partner account's authorization is gone (send a connect link: hiresync accounts invite, or hiresync accounts authorize), else 0",
      labelNames: ['account'],
      read: fromScope((s) =>
        s.partners.map((p) => [{ account: p.account }, p.needsReauthorization ? 1 : 0]),
      ),
    });
    gaugeReadAtScrape(this.registry, {
      name: 'hiresync_account_credentials_refused',
      help: "1 while the token service refuses a registered account's client secret or API key (store the right one: hiresync accounts update NAME), else 0",
      labelNames: ['account'],
      read: fromScope((s) =>
        s.credentialed.map((c) => [{ account: c.account }, c.credentialsRefused ? 1 : 0]),
      ),
    });
    if (reader) registerAggregates(this.registry, readScope, () => reader.lastReadAtMs);
    if (queue) {
      new Gauge({
        name: 'hiresync_queue_jobs',
        help: 'Jobs of the run queue by state (waiting: queued, prioritized included; failed: kept after their last attempt)',
        labelNames: ['state'],
        registers: [this.registry],
        async collect() {
          const counts = await readWithin(() =>
            queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed'),
          );
          // Redis unreachable: the last counts stay.
          if (counts === undefined) return;
          for (const state of QUEUE_JOB_STATES) {
            const prioritized = state === 'waiting' ? (counts.prioritized ?? 0) : 0;
            this.set({ state }, (counts[state] ?? 0) + prioritized);
          }
        },
      });
    }
    if (db) {
      new Gauge({
        name: 'hiresync_typed_view_blocked',
        help: "1 while a typed view shows null where the records hold values (an analyst's view keeps a column from widening or keeps a column that shows no key, or its refresh could not finish; see hiresync status), 0 once a refresh succeeded; account all_accounts for the unions",
        labelNames: ['account', 'view'],
        registers: [this.registry],
        async collect() {
          const [blocks, scope] = await Promise.all([
            readWithin(() => typedViewBlockStates(db, withDefault)),
            readScope(),
          ]);
          // Postgres unreachable: the last values read stay.
          if (blocks === undefined) return;
          this.reset();
          // Above the threshold, only the views that need action.
          const shown = scope?.perAccount === false ? blocks.filter((b) => b.blocked) : blocks;
          for (const b of shown) this.set({ account: b.account, view: b.view }, b.blocked ? 1 : 0);
        },
      });
    }
  }

  /**
   * One scrape's response: the exposition text, gzipped when the scraper
   * accepts it (Prometheus does), which makes it about twenty times smaller.
   */
  async scrape(
    acceptEncoding?: string,
  ): Promise<{ headers: Record<string, string>; body: string | Buffer }> {
    const text = await this.registry.metrics();
    const headers: Record<string, string> = {
      'content-type': this.registry.contentType,
      vary: 'accept-encoding',
    };
    if (!acceptsGzip(acceptEncoding)) return { headers, body: text };
    return { headers: { ...headers, 'content-encoding': 'gzip' }, body: await gzipText(text) };
  }

  /**
   * The metrics of `account`'s runs and requests (see AccountCounters for
   * the series they count).
   */
  forAccount(account: string = DEFAULT_ACCOUNT): AccountMetrics {
    this.#seen.add(account);
    if (this.#seen.size > this.#accountSeries) this.#counters.perAccount = false;
    const counting = this.#counters.forAccount(account);
    // Every account's own until the next scrape reads them from Postgres (at
    // once without a database); above the threshold, the scrape reads them.
    const own = () => this.#counters.perAccount;
    return {
      ...counting,
      onNeedsReauthorization: (needed: boolean) => {
        if (own()) this.#needsReauthorization.set({ account }, needed ? 1 : 0);
      },
      onRunFinished: (resource, mode, outcome, seconds) => {
        counting.onRunFinished?.(resource, mode, outcome, seconds);
        if (!own()) return;
        if (outcome === 'succeeded')
          this.#lastSuccess.set({ account, resource }, Date.now() / 1000);
        this.#lastRunFailed.set({ account, resource }, outcome === 'failed' ? 1 : 0);
      },
    };
  }
}

/**
 * Whether an Accept-Encoding header (RFC 9110 12.5.3) accepts gzip: listed
 * (or x-gzip) with a q above 0. `gzip;q=0` refuses it; `*` is not taken as
 * asking for it.
 */
function acceptsGzip(header: string | undefined): boolean {
  for (const part of (header ?? '').split(',')) {
    const [coding = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip') continue;
    const q = params.find((p) => /^q\s*=/.test(p));
    return q === undefined || Number(q.replace(/^q\s*=\s*/, '')) > 0;
  }
  return false;
}

/**
 * Each typed view hiresync.typed_view_blocks knows, blocked or not, of
 * `default`, a registered account or the all_accounts unions; none
 * before the table exists; undefined when Postgres cannot be read.
 */
async function typedViewBlockStates(
  db: Kysely<Database>,
  withDefault: boolean,
): Promise<Array<{ account: string; view: string; blocked: boolean }> | undefined> {
  try {
    const rows = await readTypedViewBlockStates(db, withDefault);
    return rows.map((r) => ({
      account: r.schema === 'public' ? DEFAULT_ACCOUNT : r.schema,
      view: r.view,
      blocked: r.blocked,
    }));
  } catch (error) {
    return (error as { code?: string }).code === '42P01' ? [] : undefined;
  }
}

/** The version for hiresync_build_info: `unknown` rather than no metrics when package.json is gone. */
function buildVersion(): string {
  try {
    return readVersion();
  } catch {
    return 'unknown';
  }
}

/** Series of a gauge: each one's labels and value. */
type Series<L extends string> = Array<[Partial<Record<L, string>>, number]>;

/**
 * A gauge whose series `read` gives at each scrape (from Postgres); while it
 * gives none (Postgres unreachable), the last values read or set stay.
 */
function gaugeReadAtScrape<L extends string>(
  registry: Registry,
  options: {
    name: string;
    help: string;
    labelNames: readonly L[];
    read: () => Promise<Series<L> | undefined>;
  },
): Gauge<L> {
  const { read, ...gauge } = options;
  return new Gauge<L>({
    ...gauge,
    registers: [registry],
    async collect() {
      const series = await read();
      if (series === undefined) return;
      this.reset();
      for (const [labels, value] of series) this.set(labels, value);
    },
  });
}
