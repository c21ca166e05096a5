/**
 * Benchmark of issue 32: how long each analytics view takes to answer, on
 * this machine's Postgres (its settings as they are) and Redis, through the
 * built CLI (dist/).
 *
 *   npm run build && node dist/bench/analytics-views.js [applications] [--accounts N]
 *     [--small-applications M] [--sample S] [--skip-large] [--skip-small]
 *
 * 1. One large account (default 100,000 applications): a fresh database,
 *    migrated; `hiresync simulate --shape v3 --applications A --rate-limit
 *    none --cache-pages` in its own process (its world built by a request
 *    for one page before the load is timed); then a real
 *    `hiresync sync` of `@default,@analytics` for account default in a child
 *    process (HIRESYNC_PER_PAGE 500, HIRESYNC_EXTRA_WALKS
 *    job_posts?active=false, as a deployment reading the whole world): its
 *    wall time, the records stored per resource and records/s; then ANALYZE.
 * 2. Each analytics view of that account (`analytics.VIEW`), then
 *    `analytics.pipeline_as_of(now())` and `pipeline_as_of` at the moment the
 *    load ended (a past time: every version then current), then the same in
 *    `all_accounts`: every row read (`select * from …`, fully fetched by
 *    node-postgres), 1 warm-up then the median of 3, and the rows returned.
 * 3. N small accounts (default 1,000 of M = 100 applications): a second fresh
 *    database; one small v3 world synced for real into account default as in
 *    1; N accounts registered through AccountStore.add (the code path of
 *    `accounts add`, without its connection test), their analytics schemas
 *    made by ensureAccountAnalytics (the code `accounts add` and `migrate`
 *    run), then default's rows of every shared table (`hiresync.data_*`,
 *    current rows and history, with their history and deletion marks) copied
 *    to each account in SQL, only the `account` column changed: N accounts of
 *    identical content, which is what the per-account reads cost depends on
 *    (their size), not the values. Then ANALYZE, and each view of S (default
 *    10) accounts spread over the N: 1 warm-up, then one read per account,
 *    the median; then the all_accounts views over all N + 1 accounts, 1
 *    warm-up then the median of 3.
 *
 * Prints a markdown table per part (view, rows, median seconds, target ≤ 1 s)
 * with the load averages while it ran (the machine is shared); the databases,
 * the simulators and the Redis prefixes are removed at the end.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { analyticsSchemaOf } from '../src/account-name.js';
import { AccountStore } from '../src/accounts/account-store.js';
import { loadConfig } from '../src/config/load-config.js';
import { RESOURCE_NAMES } from '../src/resources/index.js';
import { Secret } from '../src/secret.js';
import { ensureAccountAnalytics } from '../src/warehouse/analytics/analytics-schemas.js';
import { ANALYTICS_VIEWS, PIPELINE_AS_OF } from '../src/warehouse/analytics/analytics-views.js';
import { createDatabase } from '../src/warehouse/database.js';
import {
  clearPrefix,
  type SimulatorProcess,
  startSimulatorProcess,
  syncEnv,
} from './end-to-end.js';
import { fmt, freshDatabase, median, postgresClient, REDIS_URL } from './support.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const TARGET_S = 1;
/** A read longer than this is cut (statement_timeout) and reported as such. */
const CUT_S = Number(process.env.BENCH_VIEW_TIMEOUT_S ?? 300);
/** Shared tables of hiresync's own bookkeeping, not of a resource's records. */
const BOOKKEEPING = ['data_sync_runs', 'data_typed_views', 'data_typed_view_columns'];

/** One timed read: its rows and seconds. */
export interface ViewTiming {
  view: string;
  rows: number;
  seconds: number;
  /** Every timed read's seconds. */
  samples: number[];
}

export interface LoadResult {
  seconds: number;
  records: number;
  perResource: Array<{ table: string; rows: number }>;
}

const cleanups: Array<() => Promise<unknown>> = [];
const loads: number[][] = [];
const log = (line: string) => process.stderr.write(`  analytics-views: ${line}\n`);
const noteLoad = () => loads.push(loadavg());

/** Starts the v3 world of `applications` applications, unthrottled, pages cached, and walks it once. */
async function startWorld(applications: number): Promise<SimulatorProcess> {
  const sim = await startSimulatorProcess([
    '--shape',
    'v3',
    '--applications',
    String(applications),
    '--rate-limit',
    'none',
    '--cache-pages',
  ]);
  cleanups.push(sim.stop);
  return sim;
}

/** Asks for one page of applications, untimed: the simulator builds its world on first use. */
async function buildWorld(sim: SimulatorProcess): Promise<void> {
  const res = await fetch(`${sim.url}/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  const { access_token: token } = (await res.json()) as { access_token: string };
  const page = await fetch(`${sim.url}/v3/applications?per_page=1`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (page.status !== 200) throw new Error(`the simulator's world: ${page.status}`);
  await page.text();
}

/**
 * `hiresync sync` of @default,@analytics for account default, in a child
 * process, into `databaseUrl`; returns its wall time. The environment of a
 * deployment reading the whole v3 world (inactive job posts too).
 */
async function syncAll(sim: SimulatorProcess, databaseUrl: string): Promise<number> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    ...syncEnv(sim.url, databaseUrl, {
      HIRESYNC_RESOURCES: '@default,@analytics',
      HIRESYNC_EXTRA_WALKS: 'job_posts?active=false',
      HIRESYNC_PER_PAGE: '500',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    }),
  };
  cleanups.push(() => clearPrefix(env.HIRESYNC_REDIS_PREFIX as string));
  const started = performance.now();
  await run(process.execPath, [CLI, 'sync'], { env, maxBuffer: 16 << 20 });
  return (performance.now() - started) / 1000;
}

/** Rows of `account` in each shared table of current rows (`hiresync.data_*`, not history). */
async function storedRows(
  client: pg.Client,
  account: string,
): Promise<Array<{ table: string; rows: number }>> {
  const { rows: tables } = await client.query<{ table: string }>(
    `select c.relname as table from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'hiresync' and c.relkind in ('r', 'p') and c.relname like 'data\\_%'
       and c.relname not like '%\\_history' and c.relispartition = false
       and c.relname <> all($1::text[]) order by 1`,
    [BOOKKEEPING],
  );
  const counted = [];
  for (const { table } of tables) {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from hiresync.${pg.escapeIdentifier(table)} where account = $1`,
      [account],
    );
    const n = Number(rows[0]?.n ?? 0);
    if (n > 0) counted.push({ table, rows: n });
  }
  return counted;
}

/** Reads every row of `query`; its row count and seconds. */
async function readAll(
  client: pg.Client,
  query: string,
): Promise<{ rows: number; seconds: number }> {
  const started = performance.now();
  try {
    const result = await client.query(query);
    return {
      rows: result.rowCount ?? result.rows.length,
      seconds: (performance.now() - started) / 1000,
    };
  } catch (error) {
    // Cut by statement_timeout: reported as CUT_S and -1 rows rather than ending the bench.
    if ((error as { code?: string }).code !== '57014') throw error;
    return { rows: -1, seconds: CUT_S };
  }
}

/** A client of `url` whose reads are cut after CUT_S. */
async function reader(url: string): Promise<pg.Client> {
  const client = postgresClient(url);
  await client.connect();
  cleanups.push(() => client.end());
  await client.query(`set statement_timeout = '${CUT_S}s'`);
  return client;
}

/** 1 warm-up, then the median of `times` reads. */
async function timeQuery(
  client: pg.Client,
  view: string,
  query: string,
  times = 3,
): Promise<ViewTiming> {
  const warm = await readAll(client, query);
  if (warm.rows < 0) {
    log(`${view}: cut after ${CUT_S} s`);
    return { view, rows: -1, seconds: CUT_S, samples: [] };
  }
  const samples: number[] = [];
  let rows = 0;
  for (let i = 0; i < times; i += 1) {
    const read = await readAll(client, query);
    samples.push(read.seconds);
    rows = read.rows;
  }
  noteLoad();
  const timing = { view, rows, seconds: median(samples), samples };
  log(`${view}: ${fmt(rows)} rows, median ${timing.seconds.toFixed(3)} s`);
  return timing;
}

/** The reads of one scope's schema: each view, then pipeline_as_of now and at `past`. */
function readsOf(schema: string, past: Date): Array<{ view: string; query: string }> {
  const q = pg.escapeIdentifier(schema);
  return [
    ...ANALYTICS_VIEWS.map((v) => ({
      view: `${schema}.${v.name}`,
      query: `select * from ${q}.${pg.escapeIdentifier(v.name)}`,
    })),
    {
      view: `${schema}.${PIPELINE_AS_OF}(now())`,
      query: `select * from ${q}.${PIPELINE_AS_OF}(now())`,
    },
    {
      view: `${schema}.${PIPELINE_AS_OF}('${past.toISOString()}')`,
      query: `select * from ${q}.${PIPELINE_AS_OF}('${past.toISOString()}'::timestamptz)`,
    },
  ];
}

export interface LargeResult {
  applications: number;
  load: LoadResult;
  account: ViewTiming[];
  allAccounts: ViewTiming[];
}

/** Part 1 and 2 of the header. */
export async function largeAccount(applications: number): Promise<LargeResult> {
  const sim = await startWorld(applications);
  const database = await freshDatabase('analytics_large');
  if (process.env.BENCH_KEEP) log(`keeping ${database.url}`);
  else cleanups.push(database.drop);
  log(`building the simulator's world of ${fmt(applications)} applications`);
  await buildWorld(sim);
  log('loading');
  const loadS = await syncAll(sim, database.url);
  const loadedAt = new Date();
  noteLoad();
  const client = await reader(database.url);
  await client.query('analyze');
  const perResource = await storedRows(client, 'default');
  const records = perResource.reduce((n, r) => n + r.rows, 0);
  log(`loaded ${fmt(records)} records in ${loadS.toFixed(1)} s`);
  const account: ViewTiming[] = [];
  for (const r of readsOf(analyticsSchemaOf('default'), loadedAt)) {
    account.push(await timeQuery(client, r.view, r.query));
  }
  const allAccounts: ViewTiming[] = [];
  for (const r of readsOf('all_accounts', loadedAt)) {
    allAccounts.push(await timeQuery(client, r.view, r.query));
  }
  return { applications, load: { seconds: loadS, records, perResource }, account, allAccounts };
}

export interface SmallResult {
  accounts: number;
  applications: number;
  perAccountRecords: number;
  setup: { syncS: number; registerS: number; schemasS: number; copyS: number; copiedRows: number };
  sampled: number;
  account: ViewTiming[];
  allAccounts: ViewTiming[];
}

const smallName = (i: number) => `acct${String(i).padStart(4, '0')}`;

/** Copies default's rows of every shared table (current rows and history) to each of `names`; rows copied. */
async function copyRows(client: pg.Client, names: readonly string[]): Promise<number> {
  const { rows: tables } = await client.query<{ table: string; columns: string[] }>(
    `select c.relname as table, array_agg(a.attname::text order by a.attnum) as columns
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
       join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
       and a.attgenerated = '' and a.attidentity = ''
     where n.nspname = 'hiresync' and c.relkind in ('r', 'p') and c.relname like 'data\\_%'
       and c.relispartition = false and c.relname <> all($1::text[])
     group by c.relname having bool_or(a.attname = 'account') order by 1`,
    [BOOKKEEPING],
  );
  let copied = 0;
  for (const { table, columns } of tables) {
    const list = columns.map((c) => pg.escapeIdentifier(c));
    const select = columns.map((c) => (c === 'account' ? 'o.name' : `t.${pg.escapeIdentifier(c)}`));
    const result = await client.query(
      `insert into hiresync.${pg.escapeIdentifier(table)} (${list.join(', ')})
       select ${select.join(', ')} from hiresync.${pg.escapeIdentifier(table)} t, unnest($1::text[]) o(name)
       where t.account = 'default'`,
      [names],
    );
    copied += result.rowCount ?? 0;
  }
  return copied;
}

/** Part 3 of the header. */
export async function smallAccounts(
  accounts: number,
  applications: number,
  sample: number,
): Promise<SmallResult> {
  const sim = await startWorld(applications);
  const database = await freshDatabase('analytics_small');
  cleanups.push(database.drop);
  const syncS = await syncAll(sim, database.url);
  // Its reads are cut only from the timed ones on: the copy below takes longer.
  const client = await reader(database.url);
  await client.query('set statement_timeout = 0');
  const perAccountRecords = (await storedRows(client, 'default')).reduce((n, r) => n + r.rows, 0);
  log(`small world synced: ${fmt(perAccountRecords)} records in ${syncS.toFixed(1)} s`);

  const names = Array.from({ length: accounts }, (_, k) => smallName(k + 1));
  const config = loadConfig(
    {
      DATABASE_URL: database.url,
      REDIS_URL,
      HIRESYNC_BASE_URL: sim.url,
      HIRESYNC_SECRET_KEY: randomBytes(32).toString('base64'),
    },
    RESOURCE_NAMES,
  );
  const db = createDatabase(database.url, { max: 4 });
  cleanups.push(() => db.destroy());
  const store = new AccountStore(db, config.secretKeys);
  let started = performance.now();
  for (const name of names) {
    await store.add({
      name,
      baseUrl: sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: `${sim.url}/oauth`,
        clientId: `${name}-client`,
        clientSecret: new Secret(`${name}-secret`),
      },
    });
  }
  const registerS = (performance.now() - started) / 1000;
  log(`${accounts} accounts registered in ${registerS.toFixed(1)} s`);
  started = performance.now();
  // Four at once, each schema in a transaction of its own as migrate makes them.
  const chunks = [0, 1, 2, 3].map((k) => names.filter((_, i) => i % 4 === k));
  await Promise.all(chunks.map((chunk) => ensureAccountAnalytics(db, chunk)));
  const schemasS = (performance.now() - started) / 1000;
  log(`${accounts} analytics schemas made in ${schemasS.toFixed(1)} s`);
  started = performance.now();
  const copiedRows = await copyRows(client, names);
  await client.query('analyze');
  const copyS = (performance.now() - started) / 1000;
  await client.query(`set statement_timeout = '${CUT_S}s'`);
  log(`${fmt(copiedRows)} rows copied and analyzed in ${copyS.toFixed(1)} s`);

  const sampled = names.filter((_, i) => i % Math.max(1, Math.floor(accounts / sample)) === 0);
  const loadedAt = new Date();
  const account: ViewTiming[] = [];
  const perSample = sampled.map((name) => readsOf(analyticsSchemaOf(name), loadedAt));
  for (const [index, first] of (perSample[0] ?? []).entries()) {
    await readAll(client, first.query);
    const samples: number[] = [];
    let rows = 0;
    for (const reads of perSample) {
      const read = await readAll(client, (reads[index] as { query: string }).query);
      samples.push(read.seconds);
      rows = read.rows;
    }
    noteLoad();
    const view = first.view.replace(analyticsSchemaOf(sampled[0] as string), 'NAME_analytics');
    account.push({ view, rows, seconds: median(samples), samples });
    log(
      `${view}: ${rows} rows, median over ${samples.length} accounts ${median(samples).toFixed(3)} s`,
    );
  }
  const allAccounts: ViewTiming[] = [];
  for (const r of readsOf('all_accounts', loadedAt)) {
    allAccounts.push(await timeQuery(client, r.view, r.query));
  }
  return {
    accounts,
    applications,
    perAccountRecords,
    setup: { syncS, registerS, schemasS, copyS, copiedRows },
    sampled: sampled.length,
    account,
    allAccounts,
  };
}

/** A markdown table of timings. */
export function timingTable(timings: readonly ViewTiming[]): string {
  const lines = ['| view | rows | median seconds | target |', '|---|---:|---:|---|'];
  for (const t of timings) {
    const verdict = t.seconds <= TARGET_S ? '≤ 1 s: met' : '≤ 1 s: MISSED';
    const rows = t.rows < 0 ? '(cut)' : fmt(t.rows);
    const seconds = t.rows < 0 ? `> ${CUT_S}` : t.seconds.toFixed(3);
    lines.push(`| \`${t.view}\` | ${rows} | ${seconds} | ${verdict} |`);
  }
  return lines.join('\n');
}

function parseArgs(argv: readonly string[]) {
  const value = (flag: string) => {
    const at = argv.indexOf(flag);
    return at >= 0 ? Number(argv[at + 1]) : undefined;
  };
  const flags = new Set(['--accounts', '--small-applications', '--sample']);
  const positional = argv.filter((a, i) => !a.startsWith('--') && !flags.has(argv[i - 1] ?? ''));
  return {
    applications: Number(positional[0]) || 100_000,
    accounts: value('--accounts') ?? 1000,
    smallApplications: value('--small-applications') ?? 100,
    sample: value('--sample') ?? 10,
    skipLarge: argv.includes('--skip-large'),
    skipSmall: argv.includes('--skip-small'),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = parseArgs(process.argv.slice(2));
  const stop = async () => {
    for (const undo of cleanups.splice(0).reverse()) await undo().catch(() => undefined);
  };
  process.once('SIGINT', () => void stop().then(() => process.exit(130)));
  try {
    noteLoad();
    if (!args.skipLarge) {
      const r = await largeAccount(args.applications);
      process.stdout.write(
        `\n### One account of ${fmt(r.applications)} applications\n\nloaded by \`hiresync sync\` of @default,@analytics: ${fmt(r.load.records)} records in ${r.load.seconds.toFixed(1)} s = ${fmt(r.load.records / r.load.seconds)} records/s\n\n` +
          `${r.load.perResource.map((p) => `- ${p.table}: ${fmt(p.rows)}`).join('\n')}\n\n` +
          `${timingTable(r.account)}\n\n${timingTable(r.allAccounts)}\n`,
      );
    }
    if (!args.skipSmall) {
      const r = await smallAccounts(args.accounts, args.smallApplications, args.sample);
      process.stdout.write(
        `\n### ${fmt(r.accounts)} accounts of ${r.applications} applications (${fmt(r.perAccountRecords)} records each)\n\n` +
          `setup: world synced in ${r.setup.syncS.toFixed(1)} s; ${r.accounts} accounts registered (AccountStore.add) in ${r.setup.registerS.toFixed(1)} s; their analytics schemas (ensureAccountAnalytics, 4 at once) in ${r.setup.schemasS.toFixed(1)} s; ${fmt(r.setup.copiedRows)} rows copied and analyzed in ${r.setup.copyS.toFixed(1)} s\n\n` +
          `one account's views, median over ${r.sampled} accounts:\n\n${timingTable(r.account)}\n\nall_accounts over ${fmt(r.accounts + 1)} accounts:\n\n${timingTable(r.allAccounts)}\n`,
      );
    }
    const peak = Math.max(...loads.map((l) => l[0] ?? 0));
    const last = loads.at(-1) ?? [];
    process.stdout.write(
      `\nload average (1 min) while it ran: peak ${peak.toFixed(2)}; at the end ${last.map((x) => x.toFixed(2)).join(', ')}\n`,
    );
  } finally {
    await stop();
  }
}
