#!/usr/bin/env -S node --max-semi-space-size=8 --max-old-space-size=128
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createApp } from './app.js';
import {
  isLoopbackHost,
  loadConfig,
  loadDatabaseConfig,
  loadStatusConfig,
  RESOURCE_NAMES,
  type ResourceName,
} from './config.js';
import { DEMO_DATABASE, runDemo } from './demo.js';
import { parseDuration } from './duration.js';
import { ConfigError, coerceError, HiresyncError, UsageError } from './errors.js';
import { startHttpServer } from './http-server.js';
import { createLogger } from './logger.js';
import { checkConnections } from './preflight.js';
import { type RunOnceOutcome, runOnce } from './queue/run-once.js';
import { ScheduleKeeper } from './queue/schedule-keeper.js';
import { enqueueRun, upsertSchedules } from './queue/sync-queue.js';
import { redactSecrets } from './secret.js';
import { ApiSimulator, type SimulatorOptions } from './simulator/api-simulator.js';
import { readStatus } from './status.js';
import type { RunProgress } from './sync/run-resource.js';
import { createDatabase } from './warehouse/database.js';
import { migrateToLatest } from './warehouse/migrate.js';

/** Exit codes of every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const USAGE = `usage: hiresync <command> [options]

commands:
  migrate                       apply pending database migrations (needs DATABASE_URL)
  sync [--full] [--resource R]  run each resource once, to the end, and print a summary
       [--allow-mass-delete]
  worker                        run forever: queued runs, schedules, /healthz and /metrics
  status                        show each resource's last run and pending checkpoint
  simulate                      serve the built-in API simulator on loopback
  demo                          the main job on built-in defaults: simulator, migrate, sync, example queries

Run 'hiresync <command> --help' for a command's options.`;

const MIGRATE_USAGE = `usage: hiresync migrate

Applies pending database migrations; safe to run any number of times.
Needs DATABASE_URL. Exit 0 when the database is up to date, 1 on failure.`;

const SYNC_USAGE = `usage: hiresync sync [--full] [--resource NAME]... [--allow-mass-delete]

One run of each named resource (default: HIRESYNC_RESOURCES), processed to the
end through the queue in this process; prints a summary. Exit 0 when every run
succeeded, 1 when any failed.

  --full                a full run: read every page and mark rows not seen as deleted
  --resource NAME       ${RESOURCE_NAMES.join(', ')}; repeat, or separate with commas
  --allow-mass-delete   with --full: confirm a run that would soft-delete more than
                        HIRESYNC_MAX_DELETE_FRACTION of a resource's live rows
                        (without it such a run marks none and fails)`;

const WORKER_USAGE = `usage: hiresync worker

Runs until SIGTERM/SIGINT: processes queued runs, keeps the incremental
(HIRESYNC_INCREMENTAL_EVERY) and full (HIRESYNC_FULL_CRON) schedules, and serves
/healthz and /metrics on HIRESYNC_HTTP_PORT. On SIGTERM it finishes the page in
hand, checkpoints and exits 0.`;

const STATUS_USAGE = `usage: hiresync status

Per resource: the last run (mode, started, finished, pages, records, outcome,
error), the last success, and whether a checkpoint is pending. Needs
DATABASE_URL and REDIS_URL. Exit 0, or 1 when Postgres or Redis cannot be read.`;

/** Parses a command that takes no option but --help; true when help was printed. */
function helpOnly(args: string[], usage: string): boolean {
  const { values } = parseArgs({ args, strict: true, options: { help: { type: 'boolean' } } });
  if (!values.help) return false;
  process.stdout.write(`${usage}\n`);
  return true;
}

const SIMULATE_USAGE = `usage: hiresync simulate [options]

  --host ADDR               loopback address to listen on (default 127.0.0.1)
  --port N                  port (default 8910; 0 picks a free one)
  --records N               records per resource (default 1000)
  --jobs N, --job-posts N, --tracking-links N
                            records of one resource (override --records)
  --rate-limit N/WINDOW     fixed-window rate limit on list requests, e.g. 50/10s (default none)
  --token-ttl SECONDS       access token lifetime (default 3600)
  --expires-at              state token lifetimes as expires_at instead of expires_in
  --revoke-previous-token   minting a token revokes the previous one
  --flat                    send tracking links flat (job_board_id, source_id, referrer_id)
  --malformed-every N       make every Nth record malformed (default 0: none)
  --fault-rate P            probability of a 503 on a list request (default 0)
  --latency MS              delay before every list response (default 0)
  --cache-pages             serve a rendered page again while the data is unchanged (benchmarks)
  --seed N                  seed of the generated data (default 1)
  --client-id ID            default demo-client
  --client-secret SECRET    default demo-secret
  --api-key KEY             version 1/2 key for the transition endpoint (default demo-api-key)`;

function intOption(name: string, text: string | undefined, fallback: number, min = 0): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min)
    throw new UsageError(`--${name} takes a whole number >= ${min}, got ${JSON.stringify(text)}`);
  return Number(text);
}

function probability(name: string, text: string | undefined): number {
  if (text === undefined) return 0;
  const p = Number(text);
  if (!(p >= 0 && p <= 1))
    throw new UsageError(`--${name} takes a probability from 0 to 1, got ${JSON.stringify(text)}`);
  return p;
}

/** Parses `50/10s` into a rate limit. */
export function parseRateLimit(text: string): { limit: number; windowMs: number } {
  const [count, window] = text.split('/');
  const limit = Number(count);
  const windowMs = window === undefined ? undefined : parseDuration(window);
  if (!Number.isInteger(limit) || limit < 1 || windowMs === undefined) {
    throw new UsageError(`--rate-limit takes N/WINDOW such as 50/10s, got ${JSON.stringify(text)}`);
  }
  return { limit, windowMs };
}

async function simulate(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      help: { type: 'boolean' },
      host: { type: 'string' },
      port: { type: 'string' },
      records: { type: 'string' },
      jobs: { type: 'string' },
      'job-posts': { type: 'string' },
      'tracking-links': { type: 'string' },
      'rate-limit': { type: 'string' },
      'token-ttl': { type: 'string' },
      'expires-at': { type: 'boolean' },
      'revoke-previous-token': { type: 'boolean' },
      flat: { type: 'boolean' },
      'malformed-every': { type: 'string' },
      'fault-rate': { type: 'string' },
      latency: { type: 'string' },
      'cache-pages': { type: 'boolean' },
      seed: { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      'api-key': { type: 'string' },
    },
  });
  if (values.help) {
    process.stdout.write(`${SIMULATE_USAGE}\n`);
    return EXIT.ok;
  }
  const host = values.host ?? '127.0.0.1';
  if (!isLoopbackHost(host))
    throw new UsageError(
      `--host must be a loopback address (the simulator is for local use), got ${host}`,
    );
  const records = intOption('records', values.records, 1000);
  const options: SimulatorOptions = {
    host: host === 'localhost' ? '127.0.0.1' : host,
    port: intOption('port', values.port, 8910),
    dataset: {
      counts: {
        jobs: intOption('jobs', values.jobs, records),
        job_posts: intOption('job-posts', values['job-posts'], records),
        tracking_links: intOption('tracking-links', values['tracking-links'], records),
      },
      seed: intOption('seed', values.seed, 1),
      flatTrackingLinks: values.flat ?? false,
      malformedEvery: intOption('malformed-every', values['malformed-every'], 0),
    },
    rateLimit:
      values['rate-limit'] === undefined ? undefined : parseRateLimit(values['rate-limit']),
    tokenTtlSeconds: intOption('token-ttl', values['token-ttl'], 3600, 1),
    expiresField: values['expires-at'] ? 'expires_at' : 'expires_in',
    revokePreviousToken: values['revoke-previous-token'] ?? false,
    latencyMs: intOption('latency', values.latency, 0),
    cachePages: values['cache-pages'] ?? false,
    randomFaults: { serverError: probability('fault-rate', values['fault-rate']) },
    clientId: values['client-id'] ?? 'demo-client',
    clientSecrets: [values['client-secret'] ?? 'demo-secret'],
    apiKeys: [values['api-key'] ?? 'demo-api-key'],
  };
  const sim = await ApiSimulator.start(options);
  process.stdout.write(
    `hiresync simulator listening on ${sim.url}\n` +
      `  HIRESYNC_BASE_URL=${sim.url}\n  HIRESYNC_AUTH_URL=${sim.authUrl}\n` +
      `  HIRESYNC_CLIENT_ID=${options.clientId}  (secret: the --client-secret given, default demo-secret)\n` +
      'Stop with Ctrl-C.\n',
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await sim.close();
  return EXIT.ok;
}

/** Explains a failure to reach Postgres or Redis in terms of the variable to check. */
export function describeConnectionError(error: unknown, variable: string): string | undefined {
  const code = (error as { code?: unknown }).code;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    ETIMEDOUT: 'connection timed out',
    EHOSTUNREACH: 'host unreachable',
    '28P01': 'password authentication failed',
    '28000': 'authentication rejected',
    '3D000': 'database does not exist',
  };
  const what = typeof code === 'string' ? known[code] : undefined;
  return what ? `cannot connect (${what}): check ${variable}` : undefined;
}

async function migrate(args: string[]): Promise<number> {
  if (helpOnly(args, MIGRATE_USAGE)) return EXIT.ok;
  const config = loadDatabaseConfig(process.env);
  const db = createDatabase(config.databaseUrl, { max: 1, applicationName: 'hiresync migrate' });
  try {
    const { applied } = await migrateToLatest(db);
    process.stdout.write(
      applied.length === 0
        ? 'database is up to date\n'
        : `applied ${applied.length} migration(s): ${applied.join(', ')}\n`,
    );
    return EXIT.ok;
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause ?? error;
    process.stderr.write(
      `hiresync migrate: ${describeConnectionError(cause, 'DATABASE_URL') ?? coerceError(error).message}\n`,
    );
    return EXIT.failed;
  } finally {
    await db.destroy();
  }
}

function parseResources(
  values: string[] | undefined,
  fallback: readonly ResourceName[],
): ResourceName[] {
  if (!values || values.length === 0) return [...fallback];
  const names = values.flatMap((v) => v.split(',')).map((v) => v.trim());
  if (names.some((n) => n === '')) {
    throw new UsageError(
      `--resource was given an empty resource name; choose from ${RESOURCE_NAMES.join(', ')}`,
    );
  }
  const unknown = names.filter((n) => !(RESOURCE_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new UsageError(
      `unknown resource ${unknown.join(', ')}; choose from ${RESOURCE_NAMES.join(', ')}`,
    );
  }
  return [...new Set(names)] as ResourceName[];
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

/** A plain table: header, rule, rows; columns as wide as their widest cell. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => pad(c, widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function sync(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      full: { type: 'boolean' },
      resource: { type: 'string', multiple: true },
      'allow-mass-delete': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${SYNC_USAGE}\n`);
    return EXIT.ok;
  }
  const allowMassDelete = values['allow-mass-delete'] === true;
  if (allowMassDelete && !values.full) {
    throw new UsageError(
      '--allow-mass-delete confirms the deletions of a full run: use it with --full',
    );
  }
  const config = loadConfig(process.env);
  const resources = parseResources(values.resource, config.resources);
  // Logs go to stderr as JSON; stdout carries the human summary.
  const logger = createLogger({ level: config.logLevel, destination: process.stderr });
  const interactive = process.stdout.isTTY === true;
  const progress = new Map<ResourceName, RunProgress>();
  const started = Date.now();
  const onProgress = (p: RunProgress) => {
    progress.set(p.resource, p);
    if (!interactive) return;
    const seconds = (Date.now() - started) / 1000;
    const line = [...progress.values()]
      .map(
        (q) =>
          `${q.resource}: page ${q.pages}, ${q.records} records, ${Math.round(q.records / Math.max(seconds, 0.001))}/s`,
      )
      .join(' | ');
    process.stdout.write(`\r\u001b[2K${line}`);
  };
  const app = createApp(config, logger, {
    concurrency: resources.length,
    onProgress,
    defaultMetrics: false,
  });
  let interrupted = false;
  const stop = () => {
    interrupted = true;
    app.shutdown.abort(new Error('interrupted'));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await checkConnections(app.db, app.redis);
    const outcomes = await runOnce(app, resources, values.full ? 'full' : 'auto', {
      allowMassDelete,
    });
    if (interactive) process.stdout.write('\r\u001b[2K');
    process.stdout.write(`${summaryTable(outcomes)}\n`);
    if (interrupted) {
      process.stderr.write(
        'hiresync sync: interrupted; each run resumes from its checkpoint on the next sync or worker start\n',
      );
    }
    return outcomes.every((o) => o.ok) ? EXIT.ok : EXIT.failed;
  } finally {
    await app.close();
  }
}

async function worker(args: string[]): Promise<number> {
  if (helpOnly(args, WORKER_USAGE)) return EXIT.ok;
  const config = loadConfig(process.env);
  const logger = createLogger({ level: config.logLevel });
  const app = createApp(config, logger);
  try {
    await checkConnections(app.db, app.redis);
  } catch (error) {
    await app.close();
    throw error;
  }
  const keeper = new ScheduleKeeper({ queue: app.queue, config, logger });
  const { port, server } = await startHttpServer({
    port: config.httpPort,
    db: app.db,
    redis: app.redis,
    metrics: app.metrics,
    schedules: () => keeper.health(),
  });
  app.startWorker();
  const schedules = await upsertSchedules(app.queue, config);
  keeper.start(app.queueRedis);
  for (const resource of config.resources) {
    const pending = await app.checkpoints.load(resource);
    if (pending) {
      await enqueueRun(app.queue, { resource, requested: 'auto', origin: 'resume' }, config);
      logger.info({ resource, runId: pending.runId }, 'queued the interrupted run to resume');
    }
  }
  logger.info({ port, schedules, resources: config.resources }, 'worker started');
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  logger.info({ signal }, 'shutting down: finishing the pages in hand');
  await keeper.stop();
  await app.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  logger.info('worker stopped');
  return EXIT.ok;
}

async function status(args: string[]): Promise<number> {
  if (helpOnly(args, STATUS_USAGE)) return EXIT.ok;
  const config = loadStatusConfig(process.env);
  const db = createDatabase(config.databaseUrl, { max: 2, applicationName: 'hiresync status' });
  // Status reads once: fail fast rather than wait for Redis to come back.
  const redis = new Redis(config.redisUrl, {
    maxRetriesPerRequest: 1,
    connectTimeout: 5000,
    retryStrategy: () => null,
  });
  let redisError: Error | undefined;
  redis.on('error', (error: Error) => {
    redisError = error;
  });
  try {
    await checkConnections(db, redis).catch((error: unknown) => {
      // ioredis reports a refused connection as "Connection is closed"; name the real cause.
      if (redisError && /^cannot reach Redis/.test(coerceError(error).message)) {
        throw new HiresyncError(`cannot reach Redis (${redisError.message}): check REDIS_URL`);
      }
      throw error;
    });
    const rows = (await readStatus(db, redis, config.redisPrefix)).map((s) => {
      const r = s.lastRun;
      return [
        s.resource,
        r?.mode ?? 'never run',
        r?.started_at ?? '-',
        r?.finished_at ?? '-',
        r ? String(r.pages) : '-',
        r ? String(r.records) : '-',
        r?.outcome ?? '-',
        s.lastSuccess?.finished_at ?? '-',
        s.checkpoint
          ? `yes: run ${s.checkpoint.runId}, ${s.checkpoint.pagesDone} pages done`
          : 'no',
        redactSecrets(r?.error ?? ''),
      ];
    });
    process.stdout.write(
      `${formatTable(['resource', 'last run', 'started', 'finished', 'pages', 'records', 'outcome', 'last success', 'checkpoint pending', 'error'], rows)}\n`,
    );
    return EXIT.ok;
  } catch (error) {
    process.stderr.write(`hiresync status: ${redactSecrets(coerceError(error).message)}\n`);
    return EXIT.failed;
  } finally {
    await db.destroy();
    redis.disconnect();
  }
}

function summaryTable(outcomes: RunOnceOutcome[]): string {
  const rows = outcomes.map((o) => {
    const r = o.ok ? o.summary : undefined;
    return [
      o.resource,
      r?.mode ?? '-',
      r ? String(r.pages) : '-',
      r ? String(r.records) : '-',
      r ? String(r.rejected) : '-',
      r ? String(r.deleted) : '-',
      r ? r.seconds.toFixed(1) : '-',
      o.ok
        ? o.summary.resumed
          ? 'succeeded (resumed)'
          : 'succeeded'
        : `failed: ${redactSecrets(o.error)}`,
    ];
  });
  return formatTable(
    ['resource', 'mode', 'pages', 'records', 'rejected', 'deleted', 'seconds', 'outcome'],
    rows,
  );
}

async function demo(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, strict: true, options: { records: { type: 'string' } } });
  const records = intOption('records', values.records, 3000, 1);
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const logger = createLogger({ level: 'error', destination: process.stderr });
  process.stdout.write(
    `hiresync demo: the built-in API simulator (${records} records per resource), a fresh database ${DEMO_DATABASE}, one sync of every resource\n` +
      'The simulator sends one malformed record in 250 on purpose: they land in rejected_records.\n\n',
  );
  const result = await runDemo({ adminUrl, redisUrl, records, logger });
  process.stdout.write(`${summaryTable(result.outcomes)}\n`);
  for (const q of result.queries) {
    process.stdout.write(`\n${q.title}:\n${q.sql}\n\n${formatTable(q.columns, q.rows)}\n`);
  }
  process.stdout.write(`\nThe tables are yours to query: psql ${result.databaseUrl}\n`);
  return result.outcomes.every((o) => o.ok) ? EXIT.ok : EXIT.failed;
}

/** Runs one command; returns its exit code. Human output goes to the terminal only from here. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'migrate':
        return await migrate(rest);
      case 'sync':
        return await sync(rest);
      case 'worker':
        return await worker(rest);
      case 'status':
        return await status(rest);
      case 'simulate':
        return await simulate(rest);
      case 'demo':
        return await demo(rest);
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        process.stdout.write(`${USAGE}\n`);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}; run 'hiresync --help'`);
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`hiresync: ${redactSecrets(error.message)}\n`);
      return EXIT.usage;
    }
    const e = coerceError(error);
    // parseArgs throws TypeErrors with codes like ERR_PARSE_ARGS_UNKNOWN_OPTION.
    if (
      error instanceof UsageError ||
      (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`hiresync: ${redactSecrets(e.message)}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`hiresync: ${redactSecrets(e.message)}\n`);
    return EXIT.failed;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Everything is closed by now; should a stray handle linger, do not hang.
    setTimeout(() => process.exit(code), 3000).unref();
  },
  (error: unknown) => {
    process.stderr.write(`hiresync: ${redactSecrets(coerceError(error).message)}\n`);
    process.exitCode = EXIT.failed;
  },
);
