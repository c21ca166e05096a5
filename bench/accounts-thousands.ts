/**
 * Benchmark of issue 23: what N registered accounts cost, on a fresh database
 * of this machine's Postgres (its settings as they are) and Redis, through
 * the built CLI (dist/) unless said otherwise.
 *
 *   npm run build && node dist/bench/accounts-thousands.js [N] [--steps LIST]
 *     [--register-concurrency C] [--idle-seconds S] [--worker-concurrency W]
 *     [--seed-sql]
 *
 * N: argv, else BENCH_ACCOUNTS, else 100 (the issue's 100, 1,000 and 5,000).
 * --steps (else BENCH_STEPS): comma-separated, default all, in this order:
 *
 * - setup (always): the simulator (`hiresync simulate --accounts min(N, 1000)`,
 *   20 records per resource each), a fresh database, `hiresync migrate`, then
 *   the first N − 5 accounts (all N without `add`) registered in this process
 *   through `accounts add`'s own code path (its subcommand's `run`, as the CLI
 *   calls it, with the secret on its standard input), C at once (default 4);
 * - add: `hiresync accounts add NAME --client-id … --no-test`, the secret on
 *   standard input, for the last 5 accounts: each timed, the median reported;
 * - migrate: `hiresync migrate` with nothing to apply, 3 times, median;
 * - release: `hiresync migrate` of a release with one new migration: a copy of
 *   dist/ with a trivial migration added (bench/accounts-layout.ts), timed
 *   once; the steps after it run that copy, as a deployment runs its new release;
 * - worker: `hiresync worker` (HIRESYNC_CONCURRENCY W, default 8; accounts past
 *   the 1,000th disabled first) until every account's first full runs of jobs,
 *   job_posts and tracking_links succeeded: wall time from its start, runs/s,
 *   and its backends' lock waits (pg_stat_activity sampled every 200 ms);
 *   then its /metrics body, in bytes per account;
 * - idle: that worker's CPU (utime + stime of /proc/PID/stat) over S seconds
 *   (default 60) once its first syncs are done (HIRESYNC_INCREMENTAL_EVERY 24h,
 *   so that few of the spread schedules fall in the window; those that do are counted);
 *   runs the worker step's worker when `worker` is not selected;
 * - status, list: `hiresync status` (the overview above 50 accounts), `status -v`
 *   (every account and resource) and `status --json`; `hiresync accounts list`
 *   and `accounts list --all`: each 3 times, median, and its bytes of output;
 * - query: rows seeded with SQL, then each read of accounts-layout.ts in a
 *   transaction: time (median of 3), and the locks it holds before commit;
 * - metrics: bench/metrics-scrape.ts's /metrics body for N accounts (the
 *   series a worker's runs and requests make);
 * - scrape: the series a /metrics scrape reads from Postgres (last success,
 *   last run failed, re-authorization, credentials refused, typed views) for
 *   the N accounts, read in this process as the worker's scrape reads them:
 *   bytes per account, time (median of 3) and statements;
 * - noop: statements (every query node-postgres sends) and rows written
 *   (pg_stat_database) of a no-op incremental run of each resource of one
 *   account, in this process (runOnce, as `hiresync sync` runs it).
 *
 * --seed-sql (for the steps status, list, metrics and scrape only): the first
 * account registered through `accounts add`'s code path, the others as copies
 * of its hiresync.accounts row made with SQL (no schema of their own: these
 * steps read the shared tables), and 30 runs of each built-in resource per
 * account written with SQL (bench/accounts-layout.ts seedRuns) instead of a
 * worker's first syncs: seconds where registering 5,000 accounts one by one
 * takes most of an hour.
 *
 * Prints a markdown table (measure, N, value, target, and how busy the shared
 * machine was while it was measured); the database, the Redis
 * prefix, the simulator and the release copy are removed at the end.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createApp } from '../src/app.js';
import { registryOf } from '../src/commands/account-options.js';
import { add } from '../src/commands/accounts/add.js';
import { disable } from '../src/commands/accounts/state.js';
import type { Subcommand } from '../src/commands/accounts/subcommand.js';
import { loadConfig } from '../src/config/load-config.js';
import { createLogger } from '../src/logger.js';
import { runOnce } from '../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../src/resources/index.js';
import { Metrics } from '../src/status/metrics.js';
import { createDatabase } from '../src/warehouse/database.js';
import {
  CROSS_ACCOUNT_QUERIES,
  firstRunsSucceeded,
  RELEASE_MIGRATION,
  releaseMigrationFolders,
  seedRows,
  seedRuns,
  writeReleaseMigration,
} from './accounts-layout.js';
import { clearPrefix, startSimulatorProcess } from './end-to-end.js';
import { freePort } from './ports.js';
import {
  cpuSeconds,
  freshDatabase,
  machineTicks,
  median,
  postgresClient,
  REDIS_URL,
} from './support.js';

export const STEPS = [
  'add',
  'migrate',
  'release',
  'worker',
  'idle',
  'status',
  'list',
  'query',
  'metrics',
  'scrape',
  'noop',
] as const;
export type Step = (typeof STEPS)[number];

/** Options of {@link accountsThousands}; defaults as in the header. */
export interface ThousandsOptions {
  accounts: number;
  steps?: readonly Step[];
  registerConcurrency?: number;
  idleSeconds?: number;
  workerConcurrency?: number;
  /** Register all accounts but the first, and write their runs, with SQL (see the header). */
  seedSql?: boolean;
  /** Progress lines; default stderr. */
  log?: (line: string) => void;
}

/** One line of the table. */
export interface ThousandsRow {
  measure: string;
  accounts: number;
  value: string;
  target: string;
  /**
   * Share of the machine's CPU (every core, every process) busy while it was
   * measured, 0..1; NaN when that took too short a time to tell.
   */
  machineBusy: number;
}

const DIST = fileURLToPath(new URL('../', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = path.join(DIST, 'src', 'cli.js');
const RESOURCES = ['jobs', 'job_posts', 'tracking_links'] as const;
/** Accounts added through the CLI at the end, timed. */
const ADD_SAMPLES = 5;
/** Runs of each resource per account that --seed-sql writes. */
const SEEDED_RUNS = 30;
/** Accounts the simulator serves and the worker syncs, at most. */
const SYNCED_MAX = 1000;

/** Account i (from 1) as the simulator names it, `acct001`…, and so in hiresync. */
const accountName = (i: number) => `acct${String(i).padStart(3, '0')}`;
const addArgs = (name: string) => [name, '--client-id', `${name}-client`, '--no-test'];
const secretLine = (name: string) => `${name}-secret\n`;
const seconds = (since: number) => (performance.now() - since) / 1000;
const s = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} s`;
const fmtList = (xs: readonly number[]) => xs.map((x) => x.toFixed(2)).join(', ');

/** Things to undo at the end, last first; also on SIGINT/SIGTERM of the command. */
const cleanups: Array<() => Promise<unknown>> = [];

let cleaning: Promise<void> | undefined;

/** Undoes everything once; a second caller (a signal beside a failing step) waits for the same. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const undo of cleanups.splice(0).reverse()) await undo().catch(() => undefined);
  })().finally(() => {
    cleaning = undefined;
  });
  return cleaning;
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** Runs the built CLI `cli` with `args`, `env` alone and `input` on its standard input. */
function runCli(
  cli: string,
  args: readonly string[],
  env: Record<string, string>,
  input = '',
): Promise<CliResult> {
  const started = performance.now();
  const child = spawn(process.execPath, [cli, ...args], { env, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr, seconds: seconds(started) }));
  });
}

function succeeded(result: CliResult, what: string): CliResult {
  if (result.code !== 0) {
    throw new Error(
      `${what} exited ${result.code}: ${result.stderr.trim() || result.stdout.trim()}`,
    );
  }
  return result;
}

/** `items` through `work`, `limit` at once. */
async function inPool<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next] as T;
        next += 1;
        await work(item);
      }
    }),
  );
}

/** Runs `hiresync accounts <subcommand> NAME …` in this process, as the CLI dispatches it. */
async function runInProcess(
  subcommand: Subcommand,
  args: readonly string[],
  env: Record<string, string>,
  input = '',
): Promise<void> {
  let err = '';
  const code = await subcommand.run(args, {
    env,
    stdin: (async function* () {
      yield input;
    })(),
    stdout: { write: () => true },
    stderr: {
      write: (text: string) => {
        err += text;
        return true;
      },
    },
    signals: { once: () => undefined },
  });
  if (code !== 0) throw new Error(`accounts ${args.join(' ')} (in-process) exited ${code}: ${err}`);
}

/**
 * A copy of dist/ with the release's migration added (see accounts-layout.ts),
 * runnable where it lies (package.json and node_modules beside it); returns
 * its CLI. Removed at the end.
 */
function releaseCopy(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'hiresync-release-'));
  cleanups.push(async () => rmSync(root, { recursive: true, force: true }));
  const dist = path.join(root, 'dist');
  cpSync(DIST, dist, { recursive: true });
  cpSync(path.join(REPO, 'package.json'), path.join(root, 'package.json'));
  symlinkSync(realpathSync(path.join(REPO, 'node_modules')), path.join(root, 'node_modules'));
  for (const folder of releaseMigrationFolders(dist)) writeReleaseMigration(folder);
  return path.join(dist, 'src', 'cli.js');
}

/** A started `hiresync worker`: its process, and the port of its /metrics. */
interface RunningWorker {
  child: ChildProcess;
  port: number;
  stop: () => Promise<void>;
}

async function startWorker(
  cli: string,
  env: Record<string, string>,
  concurrency: number,
): Promise<RunningWorker> {
  const port = await freePort();
  const child = spawn(process.execPath, [cli, 'worker'], {
    env: { ...env, HIRESYNC_CONCURRENCY: String(concurrency), HIRESYNC_HTTP_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Its last lines of log, for the error when it exits early.
  const tail: string[] = [];
  child.stderr?.on('data', (d: Buffer) => {
    tail.push(...d.toString().split('\n').filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - 10));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  };
  cleanups.push(stop);
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal === null) {
      process.stderr.write(`worker exited ${code}:\n${tail.join('\n')}\n`);
    }
  });
  return { child, port, stop };
}

/** Lock waits of the database's hiresync backends, sampled every 200 ms while `running()`. */
async function sampleLockWaits(
  monitor: pg.Client,
  running: () => boolean,
): Promise<Map<string, number>> {
  const waited = new Map<string, number>();
  let last = performance.now();
  while (running()) {
    await sleep(200);
    const now = performance.now();
    const { rows } = await monitor.query<{ event: string; n: number }>(
      `select wait_event as event, count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock'
         and application_name like 'hiresync%' group by 1`,
    );
    for (const { event, n } of rows) {
      waited.set(event, (waited.get(event) ?? 0) + (n * (now - last)) / 1000);
    }
    last = now;
  }
  return waited;
}

/** The database's rows written so far (inserted, updated, deleted; flushed by ended backends). */
async function rowsWritten(monitor: pg.Client): Promise<number> {
  await monitor.query('select pg_stat_clear_snapshot()');
  const { rows } = await monitor.query<{ n: string }>(
    `select (tup_inserted + tup_updated + tup_deleted)::text as n
     from pg_stat_database where datname = current_database()`,
  );
  return Number(rows[0]?.n ?? 0);
}

/** The counts of {@link countStatements} under way. */
const statementCounts = new Set<{ count: number }>();
let countingInstalled = false;

/**
 * Every statement node-postgres sends while `work` runs (this process's
 * clients). Counted by a wrapper of pg's Client.prototype.query installed
 * once, for good: src/warehouse/database.ts wraps each connection's query
 * with the one it finds when it first hands the connection out, so a
 * wrapper installed for a while would miss the statements of connections
 * made before it.
 */
async function countStatements<T>(work: () => Promise<T>): Promise<{ result: T; count: number }> {
  if (!countingInstalled) {
    countingInstalled = true;
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const original = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      for (const counter of statementCounts) counter.count += 1;
      return original.apply(this, args);
    };
  }
  const counter = { count: 0 };
  statementCounts.add(counter);
  try {
    const result = await work();
    return { result, count: counter.count };
  } finally {
    statementCounts.delete(counter);
  }
}

/** Runs the selected steps with `options.accounts` accounts; returns the table's rows. */
export async function accountsThousands(options: ThousandsOptions): Promise<ThousandsRow[]> {
  const n = options.accounts;
  const steps = new Set<Step>(options.steps ?? STEPS);
  const registerConcurrency = options.registerConcurrency ?? 4;
  const idleSeconds = options.idleSeconds ?? 60;
  const workerConcurrency = options.workerConcurrency ?? 8;
  const log =
    options.log ?? ((line: string) => process.stderr.write(`  accounts-thousands: ${line}\n`));
  if (!Number.isInteger(n) || n < ADD_SAMPLES) {
    throw new Error(`accounts must be an integer ≥ ${ADD_SAMPLES}, got ${n}`);
  }
  const seedable: readonly Step[] = ['status', 'list', 'metrics', 'scrape'];
  if (options.seedSql && [...steps].some((step) => !seedable.includes(step))) {
    throw new Error(`--seed-sql serves the steps ${seedable.join(', ')} only`);
  }
  const rows: ThousandsRow[] = [];
  // The machine is shared: each row says how busy it was since the row before.
  let ticks = machineTicks();
  const row = (measure: string, value: string, target: string) => {
    const now = machineTicks();
    // Under half a second of every core's ticks says nothing: NaN, printed as such.
    const total = now.total - ticks.total;
    const machineBusy = total < cpus().length * 50 ? Number.NaN : (now.busy - ticks.busy) / total;
    ticks = now;
    rows.push({ measure, accounts: n, value, target, machineBusy });
    log(`${measure}: ${value} (machine ${busyText(machineBusy)} busy)`);
  };
  const names = Array.from({ length: n }, (_, k) => accountName(k + 1));
  const syncedCount = Math.min(n, SYNCED_MAX);
  const prefix = `bench-thousands-${randomUUID().slice(0, 8)}`;
  try {
    const sim = await startSimulatorProcess([
      '--records',
      '0',
      '--extra-resources',
      'none',
      '--accounts',
      String(syncedCount),
      '--account-records',
      '20',
    ]);
    cleanups.push(sim.stop);
    const database = await freshDatabase('thousands', { migrate: false });
    cleanups.push(database.drop);
    cleanups.push(() => clearPrefix(prefix));
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: database.url,
      REDIS_URL,
      HIRESYNC_REDIS_PREFIX: prefix,
      HIRESYNC_SECRET_KEY: randomBytes(32).toString('base64'),
      HIRESYNC_BASE_URL: sim.url,
      HIRESYNC_AUTH_URL: `${sim.url}/oauth`,
      HIRESYNC_RESOURCES: RESOURCES.join(','),
      // Long, so that the idle step sees few scheduled runs (spread over the period, see below).
      HIRESYNC_INCREMENTAL_EVERY: '24h',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    };
    const monitorUrl = new URL(database.url);
    monitorUrl.searchParams.set('application_name', 'bench-monitor');
    const monitor = postgresClient(monitorUrl.href);
    await monitor.connect();
    cleanups.push(() => monitor.end());
    let cli = CLI;

    succeeded(await runCli(cli, ['migrate'], env), 'hiresync migrate (setup)');
    if (options.seedSql) {
      const seeding = performance.now();
      const [first = accountName(1), ...others] = names;
      await runInProcess(add, addArgs(first), env, secretLine(first));
      await monitor.query(
        `insert into hiresync.accounts (name, auth_mode, base_url, auth_url, client_id, secret, state)
         select o.name, a.auth_mode, a.base_url, a.auth_url, o.name || '-client', a.secret, a.state
         from hiresync.accounts a, unnest($2::text[]) o(name) where a.name = $1`,
        [first, others],
      );
      await seedRuns(monitor, names, RESOURCE_NAMES, SEEDED_RUNS);
      row(
        `setup: 1 account registered in-process, ${others.length} as copies of its row (SQL), ${SEEDED_RUNS} runs of each of ${RESOURCE_NAMES.length} resources per account (SQL)`,
        s(seconds(seeding)),
        '',
      );
    } else {
      const synthetic = names.slice(0, steps.has('add') ? n - ADD_SAMPLES : n);
      const registering = performance.now();
      await inPool(synthetic, registerConcurrency, (name) =>
        runInProcess(add, addArgs(name), env, secretLine(name)),
      );
      row(
        `setup: ${synthetic.length} accounts registered in-process (accounts add's code path, ${registerConcurrency} at once)`,
        s(seconds(registering)),
        '',
      );
    }

    if (steps.has('add')) {
      const times: number[] = [];
      for (const name of names.slice(n - ADD_SAMPLES)) {
        const args = ['accounts', 'add', ...addArgs(name)];
        times.push(
          succeeded(await runCli(cli, args, env, secretLine(name)), 'accounts add').seconds,
        );
      }
      row(
        `\`hiresync accounts add NAME --client-id … --no-test\` (secret on stdin), median of the last ${ADD_SAMPLES}`,
        `${s(median(times))} (${fmtList(times)})`,
        '≤ 0.6 s at 100, ≤ 1 s at 5,000',
      );
    }

    if (steps.has('migrate')) {
      const times: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        times.push(succeeded(await runCli(cli, ['migrate'], env), 'hiresync migrate').seconds);
      }
      row(
        '`hiresync migrate`, up to date, median of 3',
        `${s(median(times))} (${fmtList(times)})`,
        '≤ 5 s',
      );
    }

    if (steps.has('release')) {
      cli = releaseCopy();
      const result = succeeded(await runCli(cli, ['migrate'], env), 'hiresync migrate (release)');
      const applied = result.stdout
        .split('\n')
        .filter((line) => line.includes(RELEASE_MIGRATION)).length;
      row(
        '`hiresync migrate` of a release with one new migration',
        `${s(result.seconds)} (${applied} schema(s) applied it)`,
        '≤ 60 s at 5,000, linear in N',
      );
    }

    if (steps.has('worker') || steps.has('idle')) {
      if (n > syncedCount) {
        const disabling = performance.now();
        await inPool(names.slice(syncedCount), registerConcurrency, (name) =>
          runInProcess(disable, [name], env),
        );
        log(
          `disabled the ${n - syncedCount} accounts past the ${syncedCount}th in ${s(seconds(disabling))}`,
        );
      }
      const wanted = syncedCount * RESOURCES.length;
      const started = performance.now();
      const worker = await startWorker(cli, env, workerConcurrency);
      let done = false;
      const waits = sampleLockWaits(monitor, () => !done);
      const deadline = Date.now() + Math.max(600, 2 * syncedCount) * 1000;
      let progress = { succeeded: 0, failed: 0 };
      try {
        while (progress.succeeded < wanted) {
          if (worker.child.exitCode !== null) throw new Error('the worker exited');
          if (Date.now() > deadline) {
            throw new Error(`first syncs: ${progress.succeeded} of ${wanted} after the deadline`);
          }
          await sleep(500);
          // The union may be rebuilt meanwhile: a failed read is tried again.
          progress = await firstRunsSucceeded(monitor, RESOURCES).catch(() => progress);
        }
      } finally {
        done = true;
      }
      const wall = seconds(started);
      const waited = await waits;
      const totalWait = [...waited.values()].reduce((a, b) => a + b, 0);
      if (steps.has('worker')) {
        row(
          `first syncs: \`hiresync worker\` (HIRESYNC_CONCURRENCY ${workerConcurrency}) on ${syncedCount} fresh accounts × ${RESOURCES.length} resources (simulator, 20 records each)`,
          `${s(wall)} from its start, ${(wanted / wall).toFixed(1)} runs/s, ${progress.failed} failed runs; ` +
            `its backends waited on locks ≈ ${s(totalWait)}` +
            (waited.size > 0
              ? ` (${[...waited].map(([event, w]) => `${event} ${s(w)}`).join(', ')})`
              : ''),
          'parallel up to HIRESYNC_CONCURRENCY, bounded by the API',
        );
        const body = await fetch(`http://127.0.0.1:${worker.port}/metrics`).then((r) => r.text());
        const bytes = Buffer.byteLength(body);
        row(
          "the worker's /metrics body after the first syncs",
          `${bytes.toLocaleString('en-US')} B, ${Math.round(bytes / n).toLocaleString('en-US')} B per account`,
          'small',
        );
      }
      if (steps.has('idle')) {
        await sleep(5000);
        const pid = worker.child.pid as number;
        const cpuBefore = cpuSeconds(pid);
        const at = performance.now();
        const since = new Date().toISOString();
        await sleep(idleSeconds * 1000);
        const pct = (100 * (cpuSeconds(pid) - cpuBefore)) / seconds(at);
        // The spread schedules start some runs in any window: counted, not hidden.
        const { rows: started } = await monitor.query<{ n: number }>(
          'select count(*)::int as n from hiresync.data_sync_runs where started_at >= $1',
          [since],
        );
        row(
          `idle worker CPU over ${idleSeconds} s after the first syncs (HIRESYNC_INCREMENTAL_EVERY 24h, spread over the day)`,
          `${pct.toFixed(2)}% of one core; ${started[0]?.n ?? 0} scheduled runs started meanwhile`,
          '≤ 2%',
        );
      }
      await worker.stop();
    }

    for (const [step, args] of [
      ['status', ['status']],
      ['status', ['status', '-v']],
      ['status', ['status', '--json']],
      ['list', ['accounts', 'list']],
      ['list', ['accounts', 'list', '--all']],
    ] as const) {
      if (!steps.has(step)) continue;
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < 3; i += 1) {
        const result = await runCli(cli, args, env);
        if (result.code !== 0) log(`hiresync ${args.join(' ')} exited ${result.code}`);
        times.push(result.seconds);
        bytes = Buffer.byteLength(result.stdout);
      }
      row(
        `\`hiresync ${args.join(' ')}\`, median of 3`,
        `${s(median(times))} (${fmtList(times)}); ${bytes.toLocaleString('en-US')} B of output`,
        '≤ 2 s',
      );
    }

    if (steps.has('query')) {
      const seeding = performance.now();
      await seedRows(monitor, names);
      log(`seeded rows of ${n} accounts in ${s(seconds(seeding))}`);
      const reader = postgresClient(database.url);
      await reader.connect();
      cleanups.push(() => reader.end());
      const locksHeld = async () =>
        (
          await reader.query<{ n: number }>(
            'select count(*)::int as n from pg_locks where pid = pg_backend_pid()',
          )
        ).rows[0]?.n ?? 0;
      await reader.query('begin');
      await reader.query('select 1');
      const baseline = await locksHeld();
      await reader.query('commit');
      for (const query of CROSS_ACCOUNT_QUERIES) {
        const times: number[] = [];
        let locks = 0;
        let failure: string | undefined;
        for (let i = 0; i < 3 && failure === undefined; i += 1) {
          try {
            await reader.query('begin');
            const at = performance.now();
            await reader.query(query.text(names[0] as string));
            times.push(seconds(at) * 1000);
            locks = await locksHeld();
            await reader.query('commit');
          } catch (error) {
            failure = (error as Error).message;
            await reader.query('rollback').catch(() => undefined);
          }
        }
        const perAccount = query.one ? '' : `, ${(locks / n).toFixed(2)} per account`;
        row(
          query.name,
          failure === undefined
            ? `${median(times).toFixed(1)} ms (${times.map((t) => t.toFixed(1)).join(', ')}); ${locks} locks held before commit${perAccount} (an empty transaction: ${baseline})`
            : `failed: ${failure}`,
          query.one ? 'as quick as today' : 'works; locks constant in N',
        );
      }
    }

    if (steps.has('metrics')) {
      const scrape = await runCli(
        path.join(DIST, 'bench', 'metrics-scrape.js'),
        [String(n), String(RESOURCES.length)],
        env,
      );
      const m = JSON.parse(succeeded(scrape, 'metrics-scrape').stdout) as {
        bytes: number;
        perAccountBytes: number;
        perAccountGzipBytes: number;
      };
      row(
        `/metrics body of a day of series (bench/metrics-scrape.ts, ${RESOURCES.length} resources)`,
        `${m.perAccountBytes.toLocaleString('en-US')} B per account (${m.perAccountGzipBytes.toLocaleString('en-US')} B gzipped); ${m.bytes.toLocaleString('en-US')} B in all`,
        'small',
      );
    }

    if (steps.has('scrape')) {
      // As a worker whose environment sets no credentials: the registered accounts alone.
      await countStatements(async () => undefined);
      const db = createDatabase(database.url, { max: 2, applicationName: 'hiresync bench scrape' });
      cleanups.push(() => db.destroy());
      const metrics = new Metrics({ defaultMetrics: false, db, withDefault: false });
      const empty = Buffer.byteLength(
        await new Metrics({ defaultMetrics: false }).registry.metrics(),
      );
      const times: number[] = [];
      let bytes = 0;
      let statements = 0;
      for (let i = 0; i < 3; i += 1) {
        const at = performance.now();
        const { result, count } = await countStatements(() => metrics.registry.metrics());
        times.push(seconds(at) * 1000);
        bytes = Buffer.byteLength(result);
        statements = count;
      }
      const series = (await metrics.registry.metrics())
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#')).length;
      row(
        '/metrics: the series a scrape reads from Postgres (last success, last run failed, re-authorization, credentials refused, typed views), in-process, median of 3',
        `${Math.round((bytes - empty) / n).toLocaleString('en-US')} B per account (${bytes.toLocaleString('en-US')} B, ${series.toLocaleString('en-US')} series); ` +
          `${median(times).toFixed(0)} ms (${times.map((t) => t.toFixed(0)).join(', ')}); ${statements} statements`,
        'small; statements constant in N',
      );
    }

    if (steps.has('noop')) {
      const config = loadConfig(env, RESOURCE_NAMES);
      const account = names[0] as string;
      const withApp = async <T>(work: (app: ReturnType<typeof createApp>) => Promise<T>) => {
        const app = createApp(config, createLogger({ level: 'silent' }), {
          defaultMetrics: false,
          registry: registryOf(config),
        });
        try {
          return await work(app);
        } finally {
          await app.close();
        }
      };
      // Its first runs, unless the worker made them (then these are no-ops too).
      await withApp((app) =>
        runOnce(
          app,
          RESOURCES.map((resource) => ({ account, resource })),
          'auto',
        ),
      );
      for (const resource of RESOURCES) {
        await sleep(1000);
        const before = await rowsWritten(monitor);
        const { result, count } = await withApp((app) =>
          countStatements(() => runOnce(app, [{ account, resource }], 'auto')),
        );
        await sleep(1000);
        const written = (await rowsWritten(monitor)) - before;
        const outcome = result[0];
        row(
          `statements of a no-op incremental run of ${resource} (one account, runOnce in-process)`,
          outcome?.ok
            ? `${count} statements, ${written} rows written (${outcome.summary.mode}, ${outcome.summary.pages} page(s), ${outcome.summary.records} records)`
            : `failed: ${outcome?.ok === false ? outcome.error : 'no outcome'}`,
          '≤ 8 statements, rewrites nothing',
        );
      }
    }
  } finally {
    await cleanUp();
  }
  return rows;
}

/** A share of the machine's CPU as a percentage, or `n/a` (NaN). */
export function busyText(share: number): string {
  return Number.isNaN(share) ? 'n/a' : `${Math.round(100 * share)}%`;
}

/** The rows as a markdown table. */
export function thousandsTable(rows: readonly ThousandsRow[]): string {
  return [
    `| measure | N | value | target | machine busy (${cpus().length} cores) |`,
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.measure} | ${r.accounts.toLocaleString('en-US')} | ${r.value} | ${r.target} | ${busyText(r.machineBusy)} |`,
    ),
  ].join('\n');
}

function parseArgs(argv: readonly string[]): ThousandsOptions {
  const flag = (name: string) => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  // Flags that take no value.
  const bare = new Set(['--seed-sql']);
  const positional = argv.find(
    (arg, i) =>
      !arg.startsWith('--') && !(argv[i - 1]?.startsWith('--') && !bare.has(argv[i - 1] ?? '')),
  );
  const stepList = flag('steps') ?? process.env.BENCH_STEPS;
  const steps = stepList?.split(',').map((x) => x.trim()) ?? [...STEPS];
  const unknown = steps.filter((x) => !(STEPS as readonly string[]).includes(x));
  if (unknown.length > 0) {
    throw new Error(`unknown step(s) ${unknown.join(', ')}: choose among ${STEPS.join(', ')}`);
  }
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  return {
    accounts: Number(positional ?? process.env.BENCH_ACCOUNTS ?? 100),
    steps: steps as Step[],
    registerConcurrency: number(flag('register-concurrency')),
    idleSeconds: number(flag('idle-seconds')),
    workerConcurrency: number(flag('worker-concurrency')),
    seedSql: argv.includes('--seed-sql'),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void cleanUp().finally(() => process.exit(130));
    });
  }
  const rows = await accountsThousands(parseArgs(process.argv.slice(2)));
  process.stdout.write(`${thousandsTable(rows)}\n`);
  process.exit(0);
}
