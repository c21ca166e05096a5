/**
 * Benchmark: scale-out across accounts. 200 simulated accounts × 3 resources
 * of 30 records, each account rate-limited by the simulator on its own (a
 * fixed window of 2 list requests / 150 ms, stated by X-RateLimit-Limit and
 * -Reset; per_page 10, so a run needs 3 requests and waits for one window),
 * registered in one fresh database (AccountStore.add with secrets sealed by a
 * random HIRESYNC_SECRET_KEY, then their schemas migrated and migrateAll). For
 * 1, 2 and 4 worker processes (HIRESYNC_CONCURRENCY at its default, 4) on one
 * Redis prefix and a fresh copy of that database, one full run per (account,
 * resource) is queued on the shared queue (600 jobs) and waited for. Per
 * worker count: wall time, runs/s, speed-up, the ideal the rate limits set,
 * peak RSS, Postgres and Redis connections of each worker process, and CPU;
 * then every account's tables are compared with its simulated data. A last
 * round with 1 worker and 20 accounts shows that connections do not grow with
 * accounts.
 *
 *   node dist/bench/accounts-scale.js [accounts] [workers,workers,...]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import type pg from 'pg';
import { schemaOf } from '../src/account-name.js';
import { AccountStore } from '../src/accounts/account-store.js';
import { loadConfig, type ResourceName } from '../src/config/load-config.js';
import type { Config } from '../src/config/types.js';
import { createSyncQueue, enqueueRun } from '../src/queue/sync-job.js';
import { RESOURCE_NAMES, validateRecord } from '../src/resources/index.js';
import { Secret } from '../src/secret.js';
import { ApiSimulator } from '../src/simulator/api-simulator.js';
import { simulatedAccounts } from '../src/simulator/simulated-accounts.js';
import { createDatabase } from '../src/warehouse/database.js';
import { migrateAll, migrateSchemas } from '../src/warehouse/setup/migrate-all.js';
import { clearPrefix, HEAP_FLAGS } from './end-to-end.js';
import { ADMIN_URL, cpuSeconds, machineTicks, postgresClient, REDIS_URL } from './support.js';

const CHILD = fileURLToPath(new URL('./accounts-worker-child.js', import.meta.url));

/** The workload: records per resource of each account, page size, and each account's window. */
export const ACCOUNTS_SCALE = {
  accounts: 200,
  records: 30,
  perPage: 10,
  limit: 2,
  windowMs: 150,
  /** Schemas migrated at once while registering (see registerAccounts). */
  migrators: 4,
  workerCounts: [1, 2, 4],
  /** Accounts of the connection check beside the full count. */
  fewAccounts: 20,
} as const;

/** One round: `workers` processes working through one full run of each (account, resource). */
export interface AccountsRound {
  workers: number;
  accounts: number;
  runs: number;
  /** From the first job queued to the last one completed. */
  seconds: number;
  /** Mean duration of a run (started_at to finished_at in sync_runs). */
  meanRunS: number;
  /** Runs that did not end `succeeded` (failed jobs, or runs recorded otherwise). */
  failed: number;
  /** Rows that differ from the simulator's data, over every account (first few in `examples`). */
  mismatches: number;
  examples: string[];
  /** List requests the accounts of the round sent, and how many were answered 429. */
  requests: number;
  rateLimited: number;
  /** Per worker process: peak RSS (VmHWM), and the peak count of its pg_stat_activity rows. */
  peakRssMb: number[];
  peakPgConnections: number[];
  /** Per worker process: peak count of its TCP connections to Postgres (from /proc). */
  peakPgSockets: number[];
  /** Per worker process: peak count of its TCP connections to Redis (from /proc). */
  peakRedisConnections: number[];
  /** CPU time the worker processes spent in the round, together. */
  workerCpuS: number;
  /** Share of the machine's CPU time (every core, every process) busy during the round. */
  machineBusy: number;
}

export interface AccountsScaleResult {
  /** Requests of one run, of one account, and the lower bounds they set. */
  requestsPerRun: number;
  /** Shortest time of one run alone at its account's rate: (⌈p/L⌉ − 1)·W. */
  runFloorS: number;
  /** Shortest time of one account's three runs at its rate: (⌈3p/L⌉ − 1)·W. */
  accountFloorS: number;
  concurrency: number;
  /** Registering the accounts (add, their schemas migrated, migrateAll), once. */
  setupSeconds: number;
  rounds: AccountsRound[];
  /** The connection check: 1 worker and {@link ACCOUNTS_SCALE.fewAccounts} accounts. */
  few: AccountsRound;
}

/** The ideal wall time of `workers` processes: the larger of the account bound and the slot bound. */
export function idealSeconds(result: AccountsScaleResult, workers: number, runs: number): number {
  const slots = workers * result.concurrency;
  return Math.max(result.accountFloorS, Math.ceil(runs / slots) * result.runFloorS);
}

function urlOf(database: string, applicationName?: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  if (applicationName) url.searchParams.set('application_name', applicationName);
  return url.href;
}

async function admin<T extends pg.QueryResultRow>(text: string, values?: unknown[]) {
  const client = postgresClient(ADMIN_URL);
  await client.connect();
  try {
    return await client.query<T>(text, values);
  } finally {
    await client.end();
  }
}

const dropDatabase = (name: string) => admin(`drop database if exists ${name} with (force)`);

/** TCP connections of process `pid` to a server port, by the socket inodes of its descriptors. */
function connectionsTo(pid: number, ports: readonly number[]): number[] {
  const inodes = new Map<string, number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const remote = fields[2];
      const inode = fields[9];
      // 01: ESTABLISHED.
      if (!remote || !inode || fields[3] !== '01') continue;
      inodes.set(inode, Number.parseInt(remote.split(':')[1] ?? '', 16));
    }
  }
  const counts = ports.map(() => 0);
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return counts;
  }
  for (const fd of fds) {
    let target = '';
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    const port = inode === undefined ? undefined : inodes.get(inode);
    const at = port === undefined ? -1 : ports.indexOf(port);
    if (at >= 0) counts[at] = (counts[at] ?? 0) + 1;
  }
  return counts;
}

/** Peak resident set of process `pid` so far (VmHWM), in MB; 0 once it is gone. */
function peakRss(pid: number): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? 0 : Number(kb) / 1024;
  } catch {
    return 0;
  }
}

function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...HEAP_FLAGS, CHILD], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('a worker did not start within 30 s')), 30_000);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`a worker exited with ${code} before ready`)));
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
  });
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** The simulator's data of an account: each valid record by id, as the table must hold it. */
function truthOf(sim: ApiSimulator, account: string, resource: ResourceName): Map<string, unknown> {
  const ds = sim.datasetOf(account);
  const live = new Map<string, unknown>();
  for (const index of ds.presentIndexes(resource)) {
    const record = ds.record(resource, index);
    if (validateRecord(resource, record) === undefined && !ds.hasNul(index))
      live.set(String(ds.idOf(resource, index)), record);
  }
  return live;
}

/**
 * Compares every account's tables with its simulated data (rows missing,
 * extra, stale or soft-deleted), and reads its runs. One query per resource
 * and one for the runs, each a union over the accounts' schemas.
 */
async function verify(
  sim: ApiSimulator,
  databaseUrl: string,
  accounts: readonly string[],
): Promise<{ problems: string[]; runs: { outcome: string; seconds: number }[] }> {
  const db = createDatabase(databaseUrl, { max: 1 });
  const problems: string[] = [];
  try {
    for (const resource of RESOURCE_NAMES) {
      const column = resource === 'tracking_links' ? 'raw' : 'data';
      const union = sql.join(
        accounts.map(
          (account) => sql`select ${account}::text as account, id::text as id,
            ${sql.ref(column)} as record, deleted_at is not null as deleted
            from ${sql.id(schemaOf(account), resource)}`,
        ),
        sql` union all `,
      );
      const { rows } = await sql<{
        account: string;
        id: string;
        record: unknown;
        deleted: boolean;
      }>`${union}`.execute(db);
      const byAccount = new Map<string, typeof rows>();
      for (const row of rows)
        byAccount.set(row.account, [...(byAccount.get(row.account) ?? []), row]);
      for (const account of accounts) {
        const want = truthOf(sim, account, resource);
        const have = byAccount.get(account) ?? [];
        const seen = new Set<string>();
        for (const row of have) {
          seen.add(row.id);
          const expected = want.get(row.id);
          if (expected === undefined)
            problems.push(`${account}.${resource} ${row.id}: not its data`);
          else if (row.deleted) problems.push(`${account}.${resource} ${row.id}: soft-deleted`);
          else if (!isDeepStrictEqual(row.record, expected))
            problems.push(`${account}.${resource} ${row.id}: stale`);
        }
        for (const id of want.keys())
          if (!seen.has(id)) problems.push(`${account}.${resource} ${id}: missing`);
      }
    }
    const union = sql.join(
      accounts.map(
        (account) => sql`select outcome::text as outcome, mode::text as mode,
          extract(epoch from finished_at - started_at)::float8 as seconds
          from ${sql.id(schemaOf(account), 'sync_runs')}`,
      ),
      sql` union all `,
    );
    const { rows } = await sql<{
      outcome: string;
      mode: string;
      seconds: number | null;
    }>`${union}`.execute(db);
    const defaults = await sql<{
      n: string;
    }>`select count(*)::text as n from public.sync_runs`.execute(db);
    if (defaults.rows[0]?.n !== '0')
      problems.push(`default: ${defaults.rows[0]?.n} runs, none queued`);
    return { problems, runs: rows.map((r) => ({ outcome: r.outcome, seconds: r.seconds ?? 0 })) };
  } finally {
    await db.destroy();
  }
}

/** The environment of the benchmark's deployment (one Redis prefix per round). */
function deploymentEnv(sim: ApiSimulator, databaseUrl: string, secretKey: string) {
  return {
    HIRESYNC_BASE_URL: sim.url,
    HIRESYNC_AUTH_URL: sim.authUrl,
    HIRESYNC_CLIENT_ID: 'demo-client',
    HIRESYNC_CLIENT_SECRET: 'demo-secret',
    HIRESYNC_SECRET_KEY: secretKey,
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    HIRESYNC_REDIS_PREFIX: `bench-accounts-${randomUUID().slice(0, 8)}`,
    HIRESYNC_PER_PAGE: String(ACCOUNTS_SCALE.perPage),
    // The first guess of the window; the simulator states it with each answer anyway.
    HIRESYNC_RATE_LIMIT_WINDOW: `${ACCOUNTS_SCALE.windowMs}ms`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
  };
}

/**
 * Creates database `name` with `accounts` registered: control schema and
 * public, then AccountStore.add of each, then their schemas migrated and
 * migrateAll (the all_accounts views). Returns the seconds taken.
 *
 * Each schema's Migrator lists every table of the database twice (Kysely's
 * "does kysely_migration exist" check), so migrating N new schemas one after
 * another costs O(N²): 107 s for 200 in one run on this machine. The schemas are
 * migrated by {@link ACCOUNTS_SCALE.migrators} migrateSchemas at once (each
 * Migrator still takes Kysely's lock for its migrations), which overlaps
 * those listings; migrateAll then finds every schema up to date.
 */
async function registerAccounts(
  sim: ApiSimulator,
  name: string,
  accounts: readonly string[],
  secretKey: string,
): Promise<number> {
  const started = performance.now();
  await admin(`create database ${name}`);
  const url = urlOf(name);
  const config = loadConfig(deploymentEnv(sim, url, secretKey), RESOURCE_NAMES);
  const { migrators } = ACCOUNTS_SCALE;
  const db = createDatabase(url, { max: migrators + 1 });
  try {
    await migrateAll(db);
    const store = new AccountStore(db, config.secretKeys);
    for (const account of accounts) {
      await store.add({
        name: account,
        baseUrl: sim.url,
        auth: {
          mode: 'client_credentials',
          authUrl: sim.authUrl,
          clientId: `${account}-client`,
          clientSecret: new Secret(`${account}-secret`),
        },
      });
    }
    const schemas = accounts.map(schemaOf);
    await Promise.all(
      Array.from({ length: migrators }, (_, k) =>
        migrateSchemas(
          db,
          schemas.filter((_, i) => i % migrators === k),
        ),
      ),
    );
    const outcome = await migrateAll(db);
    if (outcome.warnings.length > 0) throw new Error(outcome.warnings.join('; '));
  } finally {
    await db.destroy();
  }
  return (performance.now() - started) / 1000;
}

/** One round on a fresh copy of database `template`. */
async function round(
  sim: ApiSimulator,
  template: string,
  accounts: readonly string[],
  workers: number,
  secretKey: string,
): Promise<AccountsRound> {
  const database = `${template}_r${workers}_${randomUUID().slice(0, 4)}`;
  await admin(`create database ${database} template ${template}`);
  const env = deploymentEnv(sim, urlOf(database), secretKey);
  const config: Config = loadConfig(env, RESOURCE_NAMES);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = createSyncQueue(redis, config.redisPrefix);
  const children: ChildProcess[] = [];
  const monitor = postgresClient(ADMIN_URL);
  await monitor.connect();
  const before = accounts.map((a) => ({ ...sim.statsOf(a) }));
  const peakPg = Array.from({ length: workers }, () => 0);
  const peakPgSockets = Array.from({ length: workers }, () => 0);
  const peakRedis = Array.from({ length: workers }, () => 0);
  const peakRssMb = Array.from({ length: workers }, () => 0);
  let sampling = true;
  const redisPort = Number(new URL(REDIS_URL).port || 6379);
  const pgPort = Number(new URL(ADMIN_URL).port || 5432);
  const sample = async () => {
    const { rows } = await monitor.query<{ name: string; n: number }>(
      `select application_name as name, count(*)::int as n from pg_stat_activity
       where datname = $1 group by 1`,
      [database],
    );
    for (const { name, n } of rows) {
      const i = Number(/^accounts-w(\d+)$/.exec(name)?.[1] ?? -1);
      if (i >= 0 && i < workers) peakPg[i] = Math.max(peakPg[i] ?? 0, n);
    }
    children.forEach((child, i) => {
      const [toPg, toRedis] = connectionsTo(child.pid as number, [pgPort, redisPort]);
      // A cross-check of pg_stat_activity, seen from the process.
      peakPgSockets[i] = Math.max(peakPgSockets[i] ?? 0, toPg ?? 0);
      peakRedis[i] = Math.max(peakRedis[i] ?? 0, toRedis ?? 0);
      peakRssMb[i] = Math.max(peakRssMb[i] ?? 0, peakRss(child.pid as number));
    });
  };
  const sampler = (async () => {
    while (sampling) {
      await sample();
      await sleep(100);
    }
  })();
  try {
    for (let i = 0; i < workers; i += 1) {
      children.push(await startWorker({ ...env, DATABASE_URL: urlOf(database, `accounts-w${i}`) }));
    }
    // Resource by resource, so that the runs under way at once are of different accounts.
    const jobs = RESOURCE_NAMES.flatMap((resource) =>
      accounts.map((account) => ({ account, resource })),
    );
    const cpuBefore = children.map((c) => cpuSeconds(c.pid as number));
    const machineBefore = machineTicks();
    const started = performance.now();
    await Promise.all(
      jobs.map(({ account, resource }) =>
        enqueueRun(queue, { account, resource, requested: 'full', origin: 'cli' }, config),
      ),
    );
    let counts: Record<string, number> = {};
    const deadline = Date.now() + 300_000;
    for (;;) {
      counts = await queue.getJobCounts('completed', 'failed');
      if ((counts.completed ?? 0) + (counts.failed ?? 0) >= jobs.length) break;
      if (Date.now() > deadline)
        throw new Error(`round of ${workers} workers: still running after 300 s`);
      await sleep(50);
    }
    const seconds = (performance.now() - started) / 1000;
    const machineAfter = machineTicks();
    const workerCpuS = children.reduce(
      (sum, c, i) => sum + cpuSeconds(c.pid as number) - (cpuBefore[i] ?? 0),
      0,
    );
    sampling = false;
    await sampler;
    await sample();
    await Promise.all(children.map(stopWorker));
    const checked = await verify(sim, urlOf(database), accounts);
    const succeeded = checked.runs.filter((r) => r.outcome === 'succeeded');
    let requests = 0;
    let rateLimited = 0;
    accounts.forEach((account, i) => {
      const now = sim.statsOf(account);
      requests += now.listRequests - (before[i]?.listRequests ?? 0);
      rateLimited += now.rateLimited - (before[i]?.rateLimited ?? 0);
    });
    return {
      workers,
      accounts: accounts.length,
      runs: jobs.length,
      seconds,
      meanRunS: succeeded.reduce((s, r) => s + r.seconds, 0) / Math.max(1, succeeded.length),
      failed: (counts.failed ?? 0) + (jobs.length - succeeded.length),
      mismatches: checked.problems.length,
      examples: checked.problems.slice(0, 5),
      requests,
      rateLimited,
      peakRssMb,
      peakPgConnections: peakPg,
      peakPgSockets,
      peakRedisConnections: peakRedis,
      workerCpuS,
      machineBusy:
        (machineAfter.busy - machineBefore.busy) /
        Math.max(1, machineAfter.total - machineBefore.total),
    };
  } finally {
    sampling = false;
    await sampler.catch(() => undefined);
    await Promise.all(children.map(stopWorker));
    await monitor.end();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
    await clearPrefix(config.redisPrefix);
    await dropDatabase(database);
  }
}

export async function accountsScale(
  accountCount: number = ACCOUNTS_SCALE.accounts,
  workerCounts: readonly number[] = ACCOUNTS_SCALE.workerCounts,
): Promise<AccountsScaleResult> {
  const { records, perPage, limit, windowMs, fewAccounts } = ACCOUNTS_SCALE;
  const sim = await ApiSimulator.start({
    dataset: { counts: { jobs: 0, job_posts: 0, tracking_links: 0 } },
    accounts: simulatedAccounts(accountCount, { records, rateLimit: { limit, windowMs } }),
    rateLimitHeaders: true,
  });
  const names = sim.accountNames.filter((n) => n !== 'default');
  const secretKey = randomBytes(32).toString('base64');
  const label = `hiresync_bench_accounts_${randomUUID().slice(0, 8)}`;
  const template = `${label}_all`;
  const fewTemplate = `${label}_few`;
  try {
    const setupSeconds = await registerAccounts(sim, template, names, secretKey);
    await registerAccounts(sim, fewTemplate, names.slice(0, fewAccounts), secretKey);
    const rounds: AccountsRound[] = [];
    for (const workers of workerCounts) {
      const r = await round(sim, template, names, workers, secretKey);
      rounds.push(r);
      process.stderr.write(
        `  accounts-scale: ${workers} worker(s): ${r.seconds.toFixed(1)} s, mean run ${r.meanRunS.toFixed(3)} s, ` +
          `${r.failed} failed, ${r.mismatches} mismatches, ${r.rateLimited} × 429\n`,
      );
    }
    const few = await round(sim, fewTemplate, names.slice(0, fewAccounts), 1, secretKey);
    const requestsPerRun = Math.ceil(records / perPage);
    return {
      requestsPerRun,
      runFloorS: ((Math.ceil(requestsPerRun / limit) - 1) * windowMs) / 1000,
      accountFloorS:
        ((Math.ceil((RESOURCE_NAMES.length * requestsPerRun) / limit) - 1) * windowMs) / 1000,
      concurrency: loadConfig(deploymentEnv(sim, urlOf(template), secretKey), RESOURCE_NAMES)
        .concurrency,
      setupSeconds,
      rounds,
      few,
    };
  } finally {
    await sim.close();
    await dropDatabase(template);
    await dropDatabase(fewTemplate);
  }
}

/** The benchmark's lines for bench/RESULTS.md: how it ran, one row per round, the ideal explained. */
export function describeAccountsScale(result: AccountsScaleResult): string {
  const { records, perPage, limit, windowMs, migrators } = ACCOUNTS_SCALE;
  const first = result.rounds[0] as AccountsRound;
  const resources = RESOURCE_NAMES.length;
  const perAccount = resources * result.requestsPerRun;
  const ideal1 = idealSeconds(result, 1, first.runs);
  const row = (r: AccountsRound) => {
    const full = r.accounts === first.accounts;
    const ideal = idealSeconds(result, r.workers, r.runs);
    return [
      full ? `${r.workers}` : `${r.workers}, ${r.accounts} accounts (${r.runs} runs)`,
      `${r.seconds.toFixed(1)} s`,
      (r.runs / r.seconds).toFixed(1),
      full ? `${(first.seconds / r.seconds).toFixed(2)} ×` : '',
      `${ideal.toFixed(1)} s${full ? ` (${(ideal1 / ideal).toFixed(2)} ×)` : ''}`,
      `${r.meanRunS.toFixed(2)} s`,
      `${r.workerCpuS.toFixed(0)} s; machine ${Math.round(100 * r.machineBusy)}% busy`,
      `${r.rateLimited} of ${r.requests}`,
      `${r.failed} / ${r.mismatches}`,
      r.peakRssMb.map((m) => m.toFixed(0)).join(', '),
      r.peakPgConnections.join(', '),
      r.peakRedisConnections.join(', '),
    ];
  };
  return [
    `${first.accounts} accounts × ${resources} resources × ${records} records, per_page ${perPage} (${result.requestsPerRun} requests a run), ` +
      `each account limited by the simulator to ${limit} list requests / ${windowMs} ms of its own (X-RateLimit-Limit and -Reset sent); ` +
      `one full run of each (account, resource), queued resource by resource (${first.runs} jobs) on one Redis prefix; ` +
      `worker processes of createApp + startWorker with HIRESYNC_CONCURRENCY ${result.concurrency}; each round on a fresh copy ` +
      `of one database where the accounts were registered (AccountStore.add, schemas migrated ${migrators} at once, migrateAll: ${result.setupSeconds.toFixed(1)} s).`,
    '',
    '| workers | wall time | runs/s | speed-up | ideal (speed-up) | mean run | CPU of the workers | 429s of requests | failed runs / mismatched rows | peak RSS per worker, MB | Postgres connections per worker, peak | Redis connections per worker, peak |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...[...result.rounds, result.few].map((r) => `| ${row(r).join(' | ')} |`),
    '',
    `Ideal: the larger of two bounds. An account's ${resources} runs need ${perAccount} requests: at least ` +
      `(⌈${perAccount}/${limit}⌉ − 1) × ${windowMs} ms = ${result.accountFloorS.toFixed(2)} s in a fixed window that opens with its first request, ` +
      `whatever the workers. One run alone needs (⌈${result.requestsPerRun}/${limit}⌉ − 1) × ${windowMs} ms = ${result.runFloorS.toFixed(2)} s, ` +
      `and the workers' slots take ⌈runs ÷ (workers × ${result.concurrency})⌉ runs one after another: ⌈runs ÷ slots⌉ × ${result.runFloorS.toFixed(2)} s. ` +
      'The mean run (started_at to finished_at) adds to the wait everything else a run does; connections are pg_stat_activity rows ' +
      "of the round's database by application_name, Redis connections the worker's sockets to Redis (/proc), RSS VmHWM.",
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const counts = process.argv[3]?.split(',').map(Number);
  const result = await accountsScale(Number(process.argv[2]) || ACCOUNTS_SCALE.accounts, counts);
  process.stdout.write(`${describeAccountsScale(result)}\n`);
  for (const r of [...result.rounds, result.few])
    for (const example of r.examples)
      process.stdout.write(`  ${r.workers} worker(s): ${example}\n`);
  const bad = [...result.rounds, result.few].some((r) => r.failed > 0 || r.mismatches > 0);
  process.exit(bad ? 1 : 0);
}
