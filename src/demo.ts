import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import pg from 'pg';
import { DEFAULT_ACCOUNT } from './accounts/account.js';
import { AccountStore } from './accounts/account-store.js';
import { createApp } from './app.js';
import { registryOf } from './commands/account-options.js';
import { loadConfig, RESOURCE_NAMES } from './config.js';
import { HiresyncError } from './errors.js';
import type { Logger } from './logger.js';
import { deletePrefix } from './queue/redis.js';
import { type RunOnceOutcome, runOnce } from './queue/run-once.js';
import { Secret } from './secret.js';
import { ApiSimulator } from './simulator/api-simulator.js';
import { migrateAll } from './warehouse/account-schemas.js';

export const DEMO_DATABASE = 'hiresync_demo';

/** The demo's second customer, registered beside the environment's `default`. */
export const DEMO_ACCOUNT = 'acme';

/** An example analyst query and what it returned. */
export interface DemoQuery {
  title: string;
  sql: string;
  columns: string[];
  rows: string[][];
}

export interface DemoResult {
  databaseUrl: string;
  outcomes: RunOnceOutcome[];
  queries: DemoQuery[];
}

const QUERIES: Array<{ title: string; sql: string }> = [
  {
    title: 'Links per source',
    sql: `select coalesce(source_public_name, '(no source)') as source, count(*) as links
from tracking_links_flat where deleted_at is null
group by 1 order by links desc, source limit 5`,
  },
  {
    title: 'Links per referrer',
    sql: `select coalesce(credited_to_name, '(nobody)') as referrer, credited_to_employee_id as employee_id, count(*) as links
from tracking_links_flat where deleted_at is null
group by 1, 2 order by links desc, referrer limit 5`,
  },
  {
    title: 'Links per job board',
    sql: `select coalesce(job_board_company_name, '(no job board)') as job_board, job_board_url_token as url_token, count(*) as links
from tracking_links_flat where deleted_at is null
group by 1, 2 order by links desc, job_board limit 5`,
  },
  {
    title: 'Every account at once: live rows per account (schema all_accounts)',
    sql: `select l.account, count(*) as tracking_links, count(distinct l.source_id) as sources,
  (select count(*) from all_accounts.jobs j where j.account = l.account and j.deleted_at is null) as jobs
from all_accounts.tracking_links_flat l where l.deleted_at is null
group by l.account order by l.account`,
  },
];

/**
 * `npm run demo`: the main job on built-in defaults. Starts the simulator,
 * creates and migrates a database of its own (hiresync_demo, on the server of
 * DATABASE_URL, so no existing data is touched), syncs every resource through
 * the queue, and runs three analyst queries.
 */
export async function runDemo(options: {
  adminUrl: string;
  redisUrl: string;
  records: number;
  logger: Logger;
}): Promise<DemoResult> {
  const admin = new pg.Client({ connectionString: options.adminUrl });
  try {
    await admin.connect();
    await admin.query(`drop database if exists ${DEMO_DATABASE} with (force)`);
    await admin.query(`create database ${DEMO_DATABASE}`);
  } catch (error) {
    throw new HiresyncError(
      `cannot create the demo database ${DEMO_DATABASE} (${(error as Error).message}): set DATABASE_URL to a Postgres server where this user may create databases`,
      { cause: error },
    );
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(options.adminUrl);
  url.pathname = `/${DEMO_DATABASE}`;
  const databaseUrl = url.href;

  const counts = (n: number) => ({ jobs: n, job_posts: n, tracking_links: n });
  const sim = await ApiSimulator.start({
    dataset: { counts: counts(options.records), malformedEvery: 250 },
    accounts: [
      {
        name: DEMO_ACCOUNT,
        clientId: `${DEMO_ACCOUNT}-client`,
        clientSecrets: [`${DEMO_ACCOUNT}-secret`],
        dataset: {
          seed: 42,
          idOffset: 50_000_000,
          counts: counts(Math.max(1, Math.round(options.records / 2))),
          malformedEvery: 250,
        },
      },
    ],
  });
  const prefix = `hiresync-demo-${randomUUID().slice(0, 8)}`;
  const config = loadConfig({
    HIRESYNC_BASE_URL: sim.url,
    HIRESYNC_AUTH_URL: sim.authUrl,
    HIRESYNC_CLIENT_ID: 'demo-client',
    HIRESYNC_CLIENT_SECRET: 'demo-secret',
    DATABASE_URL: databaseUrl,
    REDIS_URL: options.redisUrl,
    HIRESYNC_REDIS_PREFIX: prefix,
    // The demo's own key: it seals acme's client secret in hiresync.accounts.
    HIRESYNC_SECRET_KEY: randomBytes(32).toString('base64'),
  });
  const app = createApp(config, options.logger, {
    defaultMetrics: false,
    registry: registryOf(config),
  });
  try {
    // As `hiresync migrate` and `hiresync accounts add acme --client-id acme-client` do.
    await migrateAll(app.db);
    await new AccountStore(app.db, config.secretBox).add({
      name: DEMO_ACCOUNT,
      baseUrl: sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: sim.authUrl,
        clientId: `${DEMO_ACCOUNT}-client`,
        clientSecret: new Secret(`${DEMO_ACCOUNT}-secret`),
      },
    });
    await migrateAll(app.db);
    const targets = [DEFAULT_ACCOUNT, DEMO_ACCOUNT].flatMap((account) =>
      RESOURCE_NAMES.map((resource) => ({ account, resource })),
    );
    const outcomes = await runOnce(app, targets, 'auto');
    const queries: DemoQuery[] = [];
    for (const q of QUERIES) {
      const { rows } = await sql.raw<Record<string, unknown>>(q.sql).execute(app.db);
      const columns = Object.keys(rows[0] ?? {});
      queries.push({
        ...q,
        columns,
        rows: rows.map((r) => columns.map((c) => String(r[c] ?? ''))),
      });
    }
    return { databaseUrl, outcomes, queries };
  } finally {
    await app.close();
    await sim.close();
    const redis = new Redis(options.redisUrl);
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}
