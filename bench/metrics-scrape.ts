/**
 * `npm run build && node dist/bench/metrics-scrape.js [ACCOUNTS] [RESOURCES] [--seed] [--account-series VALUE] [--scrapes K]`:
 * the size of one /metrics body as accounts grow.
 *
 * Without --seed: registers, through the same calls a worker's runs and
 * requests make, a day's worth of series for ACCOUNTS accounts (default 46)
 * × RESOURCES of the six built-in resources (default all six), then prints
 * the body's bytes (plain and gzipped, as Prometheus asks for it), in total
 * and per account (the body less that of a process with no account, divided
 * by the accounts). Needs no service: the series hiresync reads from
 * Postgres at a scrape are not counted, except last success as a run sets it.
 *
 * With --seed: a fresh database on DATABASE_URL's server (else the local
 * one), migrated, holding ACCOUNTS accounts as rows of hiresync.accounts
 * (every 25th in state credentials_refused, every 50th a partner to
 * authorize again) and 30 runs of each of the six built-in resources per
 * account (bench/accounts-layout.ts seedRuns: one run in eleven failed, the
 * newest of one account in seven running); then a worker's Metrics reading
 * it (no account `default`), with the same day of series counted for every
 * account, scraped K times (default 5) as Prometheus scrapes it (gzip):
 * prints the plain and gzipped bytes, the series, and the scrapes'
 * milliseconds (median, and each), the Postgres read included, and that
 * read's alone (median of K).
 * --account-series: HIRESYNC_METRICS_ACCOUNT_SERIES (default auto).
 */
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import type { ResourceName } from '../src/config/load-config.js';
import { fullFields } from '../src/config/variables.js';
import { readAccountSeries } from '../src/status/account-series.js';
import { Metrics } from '../src/status/metrics.js';
import { createDatabase } from '../src/warehouse/database.js';
import { seedRuns } from './accounts-layout.js';
import { freshDatabase, median } from './support.js';

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

/** ACCOUNTS accounts and their runs in a fresh database (see the header); resolves to its URL and drop. */
async function seedDatabase(accounts: number) {
  const database = await freshDatabase('metrics');
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const names = Array.from({ length: accounts }, (_, i) => accountName(i));
    await client.query(
      `insert into hiresync.accounts (name, auth_mode, base_url, auth_url, client_id, secret, state)
       select a.name, case when a.n % 50 = 0 then 'partner' else 'client_credentials' end,
         'http://127.0.0.1:1', 'http://127.0.0.1:1/oauth', a.name || '-client', 'hs1.bench',
         case when a.n % 50 = 0 then 'needs_reauthorization'
           when a.n % 25 = 0 then 'credentials_refused' else 'enabled' end
       from unnest($1::text[]) with ordinality a(name, n)`,
      [names],
    );
    await seedRuns(client, names, BUILT_IN, 30);
  } finally {
    await client.end();
  }
  return database;
}

/** The seeded scrape: a worker's Metrics over a seeded database (see the header). */
async function seededScrape(accounts: number, accountSeries: number, scrapes: number) {
  const database = await seedDatabase(accounts);
  const db = createDatabase(database.url, { max: 2 });
  try {
    // A variable, not a literal: the release before this option takes it too (and ignores it).
    const options = { defaultMetrics: true, db, withDefault: false, accountSeries };
    const metrics = new Metrics(options);
    for (let i = 0; i < accounts; i += 1) simulateAccount(metrics, accountName(i), i);
    const times: number[] = [];
    let gzip = 0;
    for (let i = 0; i < scrapes; i += 1) {
      const at = performance.now();
      const { body } = await metrics.scrape('gzip');
      times.push(performance.now() - at);
      gzip = body.length;
    }
    const text = await metrics.registry.metrics();
    // The Postgres read of a scrape alone (accounts, then their latest runs).
    const reads: number[] = [];
    for (let i = 0; i < scrapes; i += 1) {
      const at = performance.now();
      await readAccountSeries(db, { withDefault: false });
      reads.push(performance.now() - at);
    }
    return {
      accounts,
      resources: RESOURCES.length,
      bytes: Buffer.byteLength(text),
      gzipBytes: gzip,
      perAccountBytes: Math.round(Buffer.byteLength(text) / accounts),
      series: text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length,
      scrapeMs: Math.round(median(times)),
      scrapesMs: times.map(Math.round),
      postgresReadMs: Math.round(median(reads)),
    };
  } finally {
    await db.destroy();
    await database.drop();
  }
}

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args.splice(at, 2)[1];
};
const seed = args.includes('--seed');
if (seed) args.splice(args.indexOf('--seed'), 1);
const accountSeries = fullFields.HIRESYNC_METRICS_ACCOUNT_SERIES.parse(option('--account-series'));
const scrapes = Number(option('--scrapes') ?? 5);
const accounts = Number(args[0] ?? 46);
const RESOURCES = BUILT_IN.slice(0, Number(args[1] ?? BUILT_IN.length));
if (seed) {
  process.stdout.write(`${JSON.stringify(await seededScrape(accounts, accountSeries, scrapes))}\n`);
} else {
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
}
