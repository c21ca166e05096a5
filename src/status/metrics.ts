import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Kysely } from 'kysely';
import { Counter, collectDefaultMetrics, Gauge, Registry, Summary } from 'prom-client';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import type { ApiClientMetrics } from '../api/api-client.js';
import type { ResourceName } from '../config/load-config.js';
import type { RunMetrics } from '../sync/run-resource.js';
import { readVersion } from '../version.js';
import { readTypedViewBlockStates } from '../warehouse/reports/status-reads.js';
import type { Database } from '../warehouse/tables.js';
import { type AccountSeries, readAccountSeries } from './account-series.js';
import { QUEUE_JOB_STATES, TOKEN_REQUEST_OUTCOMES } from './metric-label-values.js';
import { readWithin } from './read-within.js';

/** What one account's runs and requests report: the process's metrics with the `account` label set. */
export type AccountMetrics = ApiClientMetrics &
  RunMetrics & {
    /** Whether the account (a partner's customer) must be authorized again. */
    onNeedsReauthorization?(needed: boolean): void;
  };

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
}

const gzipText = promisify(gzip);

/** Event loop delay sampling for `*_eventloop_lag_*` (prom-client's 10 ms woke an idle worker 100 times a second). */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * Prometheus metrics of one process, served by `worker` at /metrics (see
 * docs/metrics.md). Every series of runs and requests carries an `account`
 * label. What a scrape holds per account is kept small, as there may be
 * hundreds: run durations are a sum and a count per (resource, mode,
 * outcome), not histogram buckets, and no label takes values without bound.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #pages = new Counter({
    name: 'hiresync_pages_total',
    help: 'Pages committed',
    labelNames: ['account', 'resource'],
    registers: [this.registry],
  });
  readonly #records = new Counter({
    name: 'hiresync_records_total',
    help: 'Records written',
    labelNames: ['account', 'resource'],
    registers: [this.registry],
  });
  readonly #rejected = new Counter({
    name: 'hiresync_rejected_records_total',
    help: 'Records rejected into rejected_records',
    labelNames: ['account', 'resource'],
    registers: [this.registry],
  });
  readonly #requests = new Counter({
    name: 'hiresync_http_requests_total',
    help: 'API responses by status',
    labelNames: ['account', 'status'],
    registers: [this.registry],
  });
  readonly #rateLimited = new Counter({
    name: 'hiresync_rate_limited_total',
    help: '429 responses',
    labelNames: ['account'],
    registers: [this.registry],
  });
  readonly #retries = new Counter({
    name: 'hiresync_http_retries_total',
    help: 'Retries after 5xx or network errors',
    labelNames: ['account', 'reason'],
    registers: [this.registry],
  });
  readonly #remaining = new Gauge({
    name: 'hiresync_rate_limit_remaining',
    help: 'Last X-RateLimit-Remaining the API reported',
    labelNames: ['account'],
    registers: [this.registry],
  });
  readonly #pacingWait = new Counter({
    name: 'hiresync_rate_limit_wait_seconds_total',
    help: "Time runs of the resource spent waiting for the account's rate-limit window (the runs of one resource never overlap: its rate is the share of time they waited)",
    labelNames: ['account', 'resource'],
    registers: [this.registry],
  });
  readonly #runs = new Summary({
    name: 'hiresync_run_duration_seconds',
    help: 'Duration of finished runs: _count is the number of runs, _sum their seconds',
    labelNames: ['account', 'resource', 'mode', 'outcome'],
    // A sum and a count per series: buckets or quantiles per account and
    // resource would make most of a scrape.
    percentiles: [],
    registers: [this.registry],
  });
  readonly #lastSuccess: Gauge<'account' | 'resource'>;
  readonly #lastRunFailed: Gauge<'account' | 'resource'>;
  readonly #needsReauthorization: Gauge<'account'>;
  readonly #tokenRequests = new Counter({
    name: 'hiresync_token_requests_total',
    help: 'Token requests (mint, refresh, code exchange) by outcome: ok, refused (the endpoint refused the credential or grant), error',
    labelNames: ['account', 'outcome'],
    registers: [this.registry],
  });
  /** The Postgres read of the scrape under way, shared by the series it feeds. */
  #accountRead: Promise<AccountSeries | undefined> | undefined;

  constructor(options: MetricsOptions = {}) {
    if (options.defaultMetrics ?? true)
      collectDefaultMetrics({
        register: this.registry,
        prefix: 'hiresync_',
        eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
      });
    const { db, queue, synced } = options;
    const readAccounts = db
      ? () => {
          this.#accountRead ??= readWithin(() =>
            readAccountSeries(db, { withDefault: options.withDefault ?? true }),
          ).finally(() => {
            this.#accountRead = undefined;
          });
          return this.#accountRead;
        }
      : undefined;
    new Gauge({
      name: 'hiresync_build_info',
      help: 'Always 1; the version of hiresync this process runs',
      labelNames: ['version'],
      registers: [this.registry],
    }).set({ version: buildVersion() }, 1);
    // The series of each account and resource it syncs now, from one read of Postgres.
    const perResource = async <T extends { account: string; resource: string }>(
      rows: (read: AccountSeries) => readonly T[],
      value: (row: T) => number,
    ): Promise<Series<'account' | 'resource'> | undefined> => {
      const read = await readAccounts?.();
      const isSynced = read && (synced ? await readWithin(synced) : () => true);
      if (read === undefined || isSynced === undefined) return undefined;
      return rows(read)
        .filter((r) => isSynced(r.account, r.resource))
        .map((r) => [{ account: r.account, resource: r.resource }, value(r)]);
    };
    const perAccount = async <T extends { account: string }>(
      rows: (read: AccountSeries) => readonly T[],
      value: (row: T) => number,
    ): Promise<Series<'account'> | undefined> => {
      const read = await readAccounts?.();
      return read && rows(read).map((r) => [{ account: r.account }, value(r)]);
    };
    this.#lastSuccess = gaugeReadAtScrape(this.registry, {
      name: 'hiresync_last_success_timestamp_seconds',
      help: "When a run of the resource last succeeded (read from the account's sync_runs at each scrape)",
      labelNames: ['account', 'resource'],
      read: () =>
        perResource(
          (read) => read.lastSuccesses,
          (s) => s.at,
        ),
    });
    this.#lastRunFailed = gaugeReadAtScrape(this.registry, {
      name: 'hiresync_last_run_failed',
      help: "1 when the latest finished run of the resource failed (a 403, not permitted, included), 0 when it succeeded (read from the account's sync_runs at each scrape)",
      labelNames: ['account', 'resource'],
      read: () =>
        perResource(
          (read) => read.lastRuns,
          (r) => (r.failed ? 1 : 0),
        ),
    });
    this.#needsReauthorization = gaugeReadAtScrape(this.registry, {
      name: 'hiresync_account_needs_reauthorization',
      help: "1 while a partner account's authorization is gone (send a connect link: hiresync accounts invite, or hiresync accounts authorize), else 0",
      labelNames: ['account'],
      read: () =>
        perAccount(
          (read) => read.partners,
          (p) => (p.needsReauthorization ? 1 : 0),
        ),
    });
    gaugeReadAtScrape(this.registry, {
      name: 'hiresync_account_credentials_refused',
      help: "1 while the token service refuses a registered account's client secret or API key (store the right one: hiresync accounts update NAME), else 0",
      labelNames: ['account'],
      read: () =>
        perAccount(
          (read) => read.credentialed,
          (c) => (c.credentialsRefused ? 1 : 0),
        ),
    });
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
          const blocks = await readWithin(() =>
            typedViewBlockStates(db, options.withDefault ?? true),
          );
          // Postgres unreachable: the last values read stay.
          if (blocks === undefined) return;
          this.reset();
          for (const b of blocks) this.set({ account: b.account, view: b.view }, b.blocked ? 1 : 0);
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
   * The metrics of `account`'s runs and requests. Its token requests are
   * counted from 0 for every outcome from here on (an account's context is
   * made before its first request), so a series is not born at its first
   * refusal where increase() cannot see it.
   */
  forAccount(account: string = DEFAULT_ACCOUNT): AccountMetrics {
    for (const outcome of TOKEN_REQUEST_OUTCOMES) this.#tokenRequests.inc({ account, outcome }, 0);
    return {
      onResponse: (status: number) => this.#requests.inc({ account, status: String(status) }),
      onRateLimited: () => this.#rateLimited.inc({ account }),
      onRetry: (reason: string) => this.#retries.inc({ account, reason }),
      onRemaining: (remaining: number) => this.#remaining.set({ account }, remaining),
      onPacingWait: (ms: number, resource?: string) =>
        this.#pacingWait.inc({ account, resource: resource ?? '' }, ms / 1000),
      onTokenRequest: (outcome) => this.#tokenRequests.inc({ account, outcome }),
      onPage: (resource: ResourceName, records: number, rejected: number) => {
        this.#pages.inc({ account, resource });
        this.#records.inc({ account, resource }, records);
        if (rejected > 0) this.#rejected.inc({ account, resource }, rejected);
      },
      onNeedsReauthorization: (needed: boolean) =>
        this.#needsReauthorization.set({ account }, needed ? 1 : 0),
      onRunFinished: (resource, mode, outcome, seconds) => {
        this.#runs.observe({ account, resource, mode, outcome }, seconds);
        // Until the next scrape reads them from sync_runs (at once without a database).
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
