/**
 * `npm run build && node dist/bench/metrics-scrape.js [ACCOUNTS] [RESOURCES]`:
 * the size of one /metrics body as accounts grow. Registers, through the
 * same calls a worker's runs and requests make, a day's worth of series for
 * ACCOUNTS accounts (default 46) × RESOURCES of the six built-in resources
 * (default all six), then prints the body's
 * bytes (plain and gzipped, as Prometheus asks for it), in total and per
 * account (the body less that of a process with no account, divided by the
 * accounts). Needs no service: the series hiresync reads from Postgres at a
 * scrape (typed views, last success) are not counted here, except last
 * success as a run sets it.
 */
import { gzipSync } from 'node:zlib';
import type { ResourceName } from '../src/config/load-config.js';
import { Metrics } from '../src/status/metrics.js';

const BUILT_IN: ResourceName[] = [
  'jobs',
  'job_posts',
  'tracking_links',
  'job_boards',
  'sources',
  'referrers',
];

/** What one account's worker reports in a day: runs of both modes, pages, responses, waits. */
function simulateAccount(metrics: Metrics, name: string, index: number): void {
  const m = metrics.forAccount(name);
  const partner = index % 2 === 0;
  for (const resource of RESOURCES) {
    for (let page = 0; page < 20; page += 1) m.onPage?.(resource, 500, 0);
    if (index % 3 === 0 && resource === 'jobs') m.onPage?.(resource, 498, 2);
    m.onRunFinished?.(resource, 'incremental', 'succeeded', 2 + index);
    m.onRunFinished?.(resource, 'full', 'succeeded', 300 + index);
    if (index % 5 === 0 && resource === 'tracking_links') {
      m.onRunFinished?.(resource, 'incremental', 'failed', 1);
    }
  }
  for (let i = 0; i < 200; i += 1) m.onResponse?.(200);
  if (index % 3 === 0) {
    m.onResponse?.(429);
    m.onRateLimited?.();
  }
  if (partner && index % 4 === 0) m.onResponse?.(401);
  if (index % 4 === 0) {
    m.onResponse?.(503);
    m.onRetry?.('503');
    m.onRetry?.('ECONNRESET');
  }
  m.onRemaining?.(40);
  for (const resource of RESOURCES) m.onPacingWait?.(1200, resource);
  if (partner) m.onNeedsReauthorization?.(false);
  // The token requests of a day (once the metric exists).
  const tokens = m as { onTokenRequest?: (outcome: string) => void };
  for (let i = 0; i < 24; i += 1) tokens.onTokenRequest?.('ok');
}

/** Account names as operators give them: a customer's name and a suffix. */
function accountName(index: number): string {
  return `customer_${String(index + 1).padStart(3, '0')}_talent`;
}

async function scrape(accounts: number): Promise<{ plain: number; gzip: number }> {
  const metrics = new Metrics({ defaultMetrics: true });
  for (let i = 0; i < accounts; i += 1) simulateAccount(metrics, accountName(i), i);
  const body = await metrics.registry.metrics();
  return { plain: Buffer.byteLength(body), gzip: gzipSync(body).length };
}

const accounts = Number(process.argv[2] ?? 46);
const RESOURCES = BUILT_IN.slice(0, Number(process.argv[3] ?? BUILT_IN.length));
const base = await scrape(0);
const full = await scrape(accounts);
const per = (key: 'plain' | 'gzip') => Math.round((full[key] - base[key]) / accounts);
process.stdout.write(
  `${JSON.stringify({
    accounts,
    resources: RESOURCES.length,
    bytes: full.plain,
    gzipBytes: full.gzip,
    processBytes: base.plain,
    perAccountBytes: per('plain'),
    perAccountGzipBytes: per('gzip'),
  })}\n`,
);
