import { type Kysely, sql } from 'kysely';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { DEFAULT_ACCOUNT } from './account-name.js';
import type { ApiClientMetrics } from './api/api-client.js';
import type { ResourceName } from './config.js';
import type { RunMetrics } from './sync/run-resource.js';
import type { Database } from './warehouse/schema.js';

/** What one account's runs and requests report: the process's metrics with the `account` label set. */
export type AccountMetrics = ApiClientMetrics &
  RunMetrics & {
    /** Whether the account (a partner's customer) must be authorized again. */
    onNeedsReauthorization?(needed: boolean): void;
  };

/**
 * Prometheus metrics of one process, served by `worker` at /metrics. Every
 * series of runs and requests carries an `account` label; with `resource`,
 * the series of a deployment number at most accounts × resources (× modes
 * and outcomes for run durations, × statuses for responses).
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
    help: 'Time spent waiting for the rate-limit window',
    labelNames: ['account'],
    registers: [this.registry],
  });
  readonly #runs = new Histogram({
    name: 'hiresync_run_duration_seconds',
    help: 'Duration of finished runs',
    labelNames: ['account', 'resource', 'mode', 'outcome'],
    buckets: [1, 5, 15, 60, 300, 900, 3600, 4 * 3600],
    registers: [this.registry],
  });
  readonly #lastSuccess = new Gauge({
    name: 'hiresync_last_success_timestamp_seconds',
    help: 'When a run of the resource last succeeded',
    labelNames: ['account', 'resource'],
    registers: [this.registry],
  });

  readonly #needsReauthorization = new Gauge({
    name: 'hiresync_account_needs_reauthorization',
    help: "1 while a partner account's authorization is gone (run hiresync accounts authorize), else 0",
    labelNames: ['account'],
    registers: [this.registry],
  });

  /**
   * `defaultMetrics`: Node's process metrics (default true). `db`: where
   * series kept in Postgres are read at each scrape (hiresync_typed_view_blocked),
   * so they are right from the first scrape after a restart; without an
   * account `default` (`withDefault` false), public's views have none.
   */
  constructor(
    options: {
      defaultMetrics?: boolean;
      db?: Kysely<Database>;
      /** Whether there is an account `default` (the environment sets credentials). Default true. */
      withDefault?: boolean;
    } = {},
  ) {
    if (options.defaultMetrics ?? true)
      collectDefaultMetrics({ register: this.registry, prefix: 'hiresync_' });
    const db = options.db;
    const withDefault = options.withDefault ?? true;
    if (db) {
      new Gauge({
        name: 'hiresync_typed_view_blocked',
        help: "1 while a typed view shows null where the records hold values (an analyst's view keeps a column from widening or keeps a column that shows no key, or its refresh could not finish; see hiresync status), 0 once a refresh succeeded; account all_accounts for the unions",
        labelNames: ['account', 'view'],
        registers: [this.registry],
        async collect() {
          const blocks = await readTypedViewBlockStates(db, withDefault);
          // Postgres unreachable: the last values read stay.
          if (blocks === undefined) return;
          this.reset();
          for (const b of blocks) this.set({ account: b.account, view: b.view }, b.blocked ? 1 : 0);
        },
      });
    }
  }

  /** The metrics of `account`'s runs and requests. */
  forAccount(account: string = DEFAULT_ACCOUNT): AccountMetrics {
    return {
      onResponse: (status: number) => this.#requests.inc({ account, status: String(status) }),
      onRateLimited: () => this.#rateLimited.inc({ account }),
      onRetry: (reason: string) => this.#retries.inc({ account, reason }),
      onRemaining: (remaining: number) => this.#remaining.set({ account }, remaining),
      onPacingWait: (ms: number) => this.#pacingWait.inc({ account }, ms / 1000),
      onPage: (resource: ResourceName, records: number, rejected: number) => {
        this.#pages.inc({ account, resource });
        this.#records.inc({ account, resource }, records);
        if (rejected > 0) this.#rejected.inc({ account, resource }, rejected);
      },
      onNeedsReauthorization: (needed: boolean) =>
        this.#needsReauthorization.set({ account }, needed ? 1 : 0),
      onRunFinished: (resource, mode, outcome, seconds) => {
        this.#runs.observe({ account, resource, mode, outcome }, seconds);
        if (outcome === 'succeeded')
          this.#lastSuccess.set({ account, resource }, Date.now() / 1000);
      },
    };
  }
}

/**
 * Each typed view hiresync.typed_view_blocks knows, blocked or not, of
 * `default`, a registered account or the all_accounts unions; none
 * before the table exists; undefined when Postgres cannot be read.
 */
async function readTypedViewBlockStates(
  db: Kysely<Database>,
  withDefault: boolean,
): Promise<Array<{ account: string; view: string; blocked: boolean }> | undefined> {
  try {
    const { rows } = await sql<{ schema: string; view: string; blocked: boolean }>`
      select schema, view, message is not null as blocked from hiresync.typed_view_blocks b
      where schema = 'all_accounts' or (schema = 'public' and ${withDefault})
        or exists (select 1 from hiresync.accounts a where a.name = b.schema)
      order by schema, view`.execute(db);
    return rows.map((r) => ({
      account: r.schema === 'public' ? DEFAULT_ACCOUNT : r.schema,
      view: r.view,
      blocked: r.blocked,
    }));
  } catch (error) {
    return (error as { code?: string }).code === '42P01' ? [] : undefined;
  }
}
