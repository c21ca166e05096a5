import { Counter, Gauge, type Registry, Summary } from 'prom-client';
import type { ApiClientMetrics } from '../api/api-client.js';
import type { ResourceName } from '../config/load-config.js';
import type { RunMetrics } from '../sync/run-resource.js';
import { TOKEN_REQUEST_OUTCOMES } from './metric-label-values.js';

/** What one account's runs and requests report: the process's metrics with the `account` label set. */
export type AccountMetrics = ApiClientMetrics &
  RunMetrics & {
    /** Whether the account (a partner's customer) must be authorized again. */
    onNeedsReauthorization?(needed: boolean): void;
  };

/**
 * The series a process's runs and requests make, by account: counted in this
 * process, not read from Postgres. While a scrape holds every account's
 * series, each carries its account's name; above the threshold
 * (HIRESYNC_METRICS_ACCOUNT_SERIES), every account's count goes to one series
 * with an empty `account` (which Prometheus stores without the label), so the
 * body does not grow with the accounts.
 */
export class AccountCounters {
  readonly #pages: Counter<'account' | 'resource'>;
  readonly #records: Counter<'account' | 'resource'>;
  readonly #rejected: Counter<'account' | 'resource'>;
  readonly #requests: Counter<'account' | 'status'>;
  readonly #rateLimited: Counter<'account'>;
  readonly #retries: Counter<'account' | 'reason'>;
  readonly #remaining: Gauge<'account'>;
  readonly #pacingWait: Counter<'account' | 'resource'>;
  readonly #runs: Summary<'account' | 'resource' | 'mode' | 'outcome'>;
  readonly #tokenRequests: Counter<'account' | 'outcome'>;
  #perAccount = true;

  /** `settle` runs before each of these series is read at a scrape: it decides {@link perAccount}. */
  constructor(registry: Registry, settle: () => Promise<void>) {
    const registers = [registry];
    const collect = settle;
    this.#pages = new Counter({
      name: 'hiresync_pages_total',
      help: 'Pages committed',
      labelNames: ['account', 'resource'],
      registers,
      collect,
    });
    this.#records = new Counter({
      name: 'hiresync_records_total',
      help: 'Records written',
      labelNames: ['account', 'resource'],
      registers,
      collect,
    });
    this.#rejected = new Counter({
      name: 'hiresync_rejected_records_total',
      help: 'Records rejected into rejected_records',
      labelNames: ['account', 'resource'],
      registers,
      collect,
    });
    this.#requests = new Counter({
      name: 'hiresync_http_requests_total',
      help: 'API responses by status',
      labelNames: ['account', 'status'],
      registers,
      collect,
    });
    this.#rateLimited = new Counter({
      name: 'hiresync_rate_limited_total',
      help: '429 responses',
      labelNames: ['account'],
      registers,
      collect,
    });
    this.#retries = new Counter({
      name: 'hiresync_http_retries_total',
      help: 'Retries after 5xx or network errors',
      labelNames: ['account', 'reason'],
      registers,
      collect,
    });
    this.#remaining = new Gauge({
      name: 'hiresync_rate_limit_remaining',
      help: 'Last X-RateLimit-Remaining the API reported (per account only)',
      labelNames: ['account'],
      registers,
      collect,
    });
    this.#pacingWait = new Counter({
      name: 'hiresync_rate_limit_wait_seconds_total',
      help: "Time runs of the resource spent waiting for the account's rate-limit window (the runs of one resource never overlap: its rate is the share of time they waited)",
      labelNames: ['account', 'resource'],
      registers,
      collect,
    });
    this.#runs = new Summary({
      name: 'hiresync_run_duration_seconds',
      help: 'Duration of finished runs: _count is the number of runs, _sum their seconds',
      labelNames: ['account', 'resource', 'mode', 'outcome'],
      // A sum and a count per series: buckets or quantiles per account and
      // resource would make most of a scrape.
      percentiles: [],
      registers,
      collect,
    });
    this.#tokenRequests = new Counter({
      name: 'hiresync_token_requests_total',
      help: 'Token requests (mint, refresh, code exchange) by outcome: ok, refused (the endpoint refused the credential or grant), error',
      labelNames: ['account', 'outcome'],
      registers,
      collect,
    });
  }

  /** Whether each account's counts carry its name (else they add up in `account=""`). */
  get perAccount(): boolean {
    return this.#perAccount;
  }

  /**
   * Switches between series per account and one for all. The counts so far
   * are dropped on a switch: Prometheus takes that as a restart's reset, where
   * moving them into other series would read as a burst.
   */
  set perAccount(perAccount: boolean) {
    if (perAccount === this.#perAccount) return;
    this.#perAccount = perAccount;
    for (const metric of [
      this.#pages,
      this.#records,
      this.#rejected,
      this.#requests,
      this.#rateLimited,
      this.#retries,
      this.#remaining,
      this.#pacingWait,
      this.#runs,
      this.#tokenRequests,
    ])
      metric.reset();
  }

  /**
   * The counting half of `account`'s metrics. Its token requests are counted
   * from 0 for every outcome from here on (an account's context is made
   * before its first request), so a series is not born at its first refusal
   * where increase() cannot see it.
   */
  forAccount(name: string): Omit<AccountMetrics, 'onNeedsReauthorization'> {
    const account = () => (this.#perAccount ? name : '');
    for (const outcome of TOKEN_REQUEST_OUTCOMES)
      this.#tokenRequests.inc({ account: account(), outcome }, 0);
    return {
      onResponse: (status: number) =>
        this.#requests.inc({ account: account(), status: String(status) }),
      onRateLimited: () => this.#rateLimited.inc({ account: account() }),
      onRetry: (reason: string) => this.#retries.inc({ account: account(), reason }),
      // One account's allowance: no sense summed over accounts.
      onRemaining: (remaining: number) => {
        if (this.#perAccount) this.#remaining.set({ account: name }, remaining);
      },
      onPacingWait: (ms: number, resource?: string) =>
        this.#pacingWait.inc({ account: account(), resource: resource ?? '' }, ms / 1000),
      onTokenRequest: (outcome) => this.#tokenRequests.inc({ account: account(), outcome }),
      onPage: (resource: ResourceName, records: number, rejected: number) => {
        this.#pages.inc({ account: account(), resource });
        this.#records.inc({ account: account(), resource }, records);
        if (rejected > 0) this.#rejected.inc({ account: account(), resource }, rejected);
      },
      onRunFinished: (resource, mode, outcome, seconds) =>
        this.#runs.observe({ account: account(), resource, mode, outcome }, seconds),
    };
  }
}
