import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ApiClientMetrics } from './api/api-client.js';
import type { ResourceName } from './config.js';
import type { RunMetrics } from './sync/run-resource.js';

/** Prometheus metrics of one process, served by `worker` at /metrics. */
export class Metrics implements ApiClientMetrics, RunMetrics {
  readonly registry = new Registry();
  readonly #pages = new Counter({
    name: 'hiresync_pages_total',
    help: 'Pages committed',
    labelNames: ['resource'],
    registers: [this.registry],
  });
  readonly #records = new Counter({
    name: 'hiresync_records_total',
    help: 'Records written',
    labelNames: ['resource'],
    registers: [this.registry],
  });
  readonly #rejected = new Counter({
    name: 'hiresync_rejected_records_total',
    help: 'Records rejected into rejected_records',
    labelNames: ['resource'],
    registers: [this.registry],
  });
  readonly #requests = new Counter({
    name: 'hiresync_http_requests_total',
    help: 'API responses by status',
    labelNames: ['status'],
    registers: [this.registry],
  });
  readonly #rateLimited = new Counter({
    name: 'hiresync_rate_limited_total',
    help: '429 responses',
    registers: [this.registry],
  });
  readonly #retries = new Counter({
    name: 'hiresync_http_retries_total',
    help: 'Retries after 5xx or network errors',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly #remaining = new Gauge({
    name: 'hiresync_rate_limit_remaining',
    help: 'Last X-RateLimit-Remaining the API reported',
    registers: [this.registry],
  });
  readonly #pacingWait = new Counter({
    name: 'hiresync_rate_limit_wait_seconds_total',
    help: 'Time spent waiting for the rate-limit window',
    registers: [this.registry],
  });
  readonly #runs = new Histogram({
    name: 'hiresync_run_duration_seconds',
    help: 'Duration of finished runs',
    labelNames: ['resource', 'mode', 'outcome'],
    buckets: [1, 5, 15, 60, 300, 900, 3600, 4 * 3600],
    registers: [this.registry],
  });
  readonly #lastSuccess = new Gauge({
    name: 'hiresync_last_success_timestamp_seconds',
    help: 'When a run of the resource last succeeded',
    labelNames: ['resource'],
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true)
      collectDefaultMetrics({ register: this.registry, prefix: 'hiresync_' });
  }

  onResponse(status: number): void {
    this.#requests.inc({ status: String(status) });
  }
  onRateLimited(): void {
    this.#rateLimited.inc();
  }
  onRetry(reason: string): void {
    this.#retries.inc({ reason });
  }
  onRemaining(remaining: number): void {
    this.#remaining.set(remaining);
  }
  onPacingWait(ms: number): void {
    this.#pacingWait.inc(ms / 1000);
  }
  onPage(resource: ResourceName, records: number, rejected: number): void {
    this.#pages.inc({ resource });
    this.#records.inc({ resource }, records);
    if (rejected > 0) this.#rejected.inc({ resource }, rejected);
  }
  onRunFinished(
    resource: ResourceName,
    mode: string,
    outcome: 'succeeded' | 'failed',
    seconds: number,
  ): void {
    this.#runs.observe({ resource, mode, outcome }, seconds);
    if (outcome === 'succeeded') this.#lastSuccess.set({ resource }, Date.now() / 1000);
  }
}
