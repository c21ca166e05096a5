#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { isLoopbackHost, loadDatabaseConfig } from './config.js';
import { parseDuration } from './duration.js';
import { ConfigError, coerceError, UsageError } from './errors.js';
import { ApiSimulator, type SimulatorOptions } from './simulator/api-simulator.js';
import { createDatabase } from './warehouse/database.js';
import { migrateToLatest } from './warehouse/migrate.js';

/** Exit codes of every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const USAGE = `usage: hiresync <command> [options]

commands:
  migrate     apply pending database migrations (needs DATABASE_URL)
  simulate    serve the built-in API simulator on loopback

Run 'hiresync <command> --help' for a command's options.`;

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
  parseArgs({ args, strict: true, options: {} });
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

/** Runs one command; returns its exit code. Human output goes to the terminal only from here. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'migrate':
        return await migrate(rest);
      case 'simulate':
        return await simulate(rest);
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
      process.stderr.write(`hiresync: ${error.message}\n`);
      return EXIT.usage;
    }
    const e = coerceError(error);
    // parseArgs throws TypeErrors with codes like ERR_PARSE_ARGS_UNKNOWN_OPTION.
    if (
      error instanceof UsageError ||
      (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`hiresync: ${e.message}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`hiresync: ${e.message}\n`);
    return EXIT.failed;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`hiresync: ${coerceError(error).message}\n`);
    process.exitCode = EXIT.failed;
  },
);
