import { randomBytes, randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import { AccountStore } from '../accounts/account-store.js';
import { type App, createApp, withResolvedPolicy } from '../app.js';
import { loadConfig } from '../config/load-config.js';
import type { Config, Env } from '../config/types.js';
import { HiresyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import { describeTlsFailure, postgresTls } from '../postgres-tls.js';
import { deletePrefix } from '../queue/redis.js';
import { type RunOnceOutcome, runOnce } from '../queue/run-once.js';
import { connectRedis } from '../redis/connect.js';
import { keyPrefix, parseRedisUrl } from '../redis/redis-target.js';
import { catalogFor, RESOURCE_NAMES, typedViewDeclarations } from '../resources/index.js';
import { defineListResource } from '../resources/json-resource.js';
import { Secret } from '../secret.js';
import { ApiSimulator } from '../simulator/api-simulator.js';
import { migrateAll } from '../warehouse/setup/migrate-all.js';
import type { Database } from '../warehouse/tables.js';
import { eraseRecords } from '../warehouse/upkeep/erase-records.js';
import { registryOf } from './account-options.js';
import { authorizeInBrowser } from './demo-partner.js';

export const DEMO_DATABASE = 'hiresync_demo';

/** The demo's second customer, registered beside the environment's `default`. */
export const DEMO_ACCOUNT = 'acme';

/** The demo's third customer, connected as a partner account (authorization code grant). */
export const DEMO_PARTNER_ACCOUNT = 'globex';

/** Lifetime of the partner account's access tokens: short, renewed from its refresh token. */
export const DEMO_PARTNER_TOKEN_TTL_SECONDS = 300;

/** How the partner account was connected; never its code or tokens. */
export interface DemoPartner {
  account: string;
  /** Refresh grants the simulator answered for it during the demo. */
  refreshes: number;
  /** Lifetime of its access tokens. */
  accessTokenTtlSeconds: number;
}

/**
 * An example analyst query and what it returned. The queries read the
 * account's views, as an analyst granted the schema does, named with the
 * schema (`public` for default) so that they read the same whatever the
 * connection's search_path.
 */
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
  partner: DemoPartner;
  /** The job the API changed twice and the one it deleted after the first sync, each change followed by a full run of default's jobs. */
  changes: { changed: number; dropped: number };
}

const QUERIES: Array<{ title: string; sql: string }> = [
  {
    title: 'Links per source',
    sql: `select coalesce(source_public_name, '(no source)') as source, count(*) as links
from public.tracking_links_flat where deleted_at is null
group by 1 order by links desc, source limit 5`,
  },
  {
    title: 'Links per referrer',
    sql: `select coalesce(credited_to_name, '(nobody)') as referrer, credited_to_employee_id as employee_id, count(*) as links
from public.tracking_links_flat where deleted_at is null
group by 1, 2 order by links desc, referrer limit 5`,
  },
  {
    title: 'Links per job board',
    sql: `select coalesce(job_board_company_name, '(no job board)') as job_board, job_board_url_token as url_token, count(*) as links
from public.tracking_links_flat where deleted_at is null
group by 1, 2 order by links desc, job_board limit 5`,
  },
  {
    title:
      'Source of hire (analytics.source_of_hire): applications, interviews, offers and hires by source',
    sql: `select coalesce(source_name, '(no source)') as source, coalesce(source_type, '') as source_type,
  applications, interviewed, offers, hires, round(hire_rate * 100, 1) as hire_pct
from analytics.source_of_hire order by applications desc, source limit 8`,
  },
  {
    title:
      'Pipeline conversion (analytics.pipeline_conversion): the job with the most applications, stage by stage',
    sql: `select stage_order, stage_name, entered, moved_on, rejected, still_there,
  round(pass_through_rate * 100, 1) as pass_through_pct
from analytics.pipeline_conversion
where job_id = (select job_id from analytics.pipeline_conversion group by job_id order by max(entered) desc, job_id limit 1)
order by stage_order, stage_id`,
  },
  {
    title: 'Every account at once: live rows per account (schema all_accounts)',
    sql: `select l.account, count(*) as tracking_links, count(distinct l.source_id) as sources,
  (select count(*) from all_accounts.jobs j where j.account = l.account and j.deleted_at is null) as jobs
from all_accounts.tracking_links_flat l where l.deleted_at is null
group by l.account order by l.account`,
  },
];

/** Personal data, under the demo's field policy. */
export const DEMO_PERSONAL_RESOURCE = 'candidates';

/** The demo's HIRESYNC_FIELD_POLICY: candidates' emails hashed, their phone numbers dropped. */
export const DEMO_FIELD_POLICY = 'candidates.emails.value=hash,candidates.phone_numbers=drop';

/** Queries of the field policy's result and of the erasure of candidate `erased`. */
function privacyQueries(erased: string): Array<{ title: string; sql: string }> {
  return [
    {
      title: `Field policy (HIRESYNC_FIELD_POLICY=${DEMO_FIELD_POLICY}): emails stored as their HMAC, phone numbers never stored`,
      sql: `select id, data ->> 'first_name' as first_name, left(data -> 'emails' -> 0 ->> 'value', 30) || '…' as email,
  data ? 'phone_numbers' as phone_stored
from public.candidates where deleted_at is null order by id limit 3`,
    },
    {
      title: `Erasure ('hiresync erase --resource candidates --id ${erased}'): what the log keeps, and what is left of the record`,
      sql: `select e.record_id, e.rows_erased, e.history_versions_erased, e.note,
  (select count(*) from public.candidates_history h where h.id = e.record_id) as versions_left
from hiresync.erasures e where e.account = 'default' and e.resource = 'candidates'`,
    },
  ];
}

/** Queries of the history of the job changed twice and of the job dropped, and of a typed view. */
function historyQueries(changed: number, dropped: number): Array<{ title: string; sql: string }> {
  return [
    {
      title: `History: every version of job ${changed} (changed twice) and of job ${dropped} (deleted)`,
      sql: `select id, valid_from, coalesce(valid_to::text, '(current)') as valid_to, deleted, data ->> 'name' as name
from public.jobs_history where id in (${changed}, ${dropped}) order by id, valid_from`,
    },
    {
      title:
        'A list resource through its typed view: applications per status (applications_flat, one typed column per key, no casts)',
      sql: `select status, count(*) as applications,
  round(count(*)::numeric / sum(count(*)) over (), 2) as share,
  count(*) filter (where prospect) as prospects, max(created_at)::date::text as last_applied
from public.applications_flat where deleted_at is null group by status order by applications desc, status`,
    },
  ];
}

/**
 * `npm run demo`: the main job on built-in defaults. Starts the simulator
 * (serving the live service's v3 shapes),
 * creates and migrates a database of its own (hiresync_demo, on the server of
 * DATABASE_URL, so no existing data is touched), syncs every resource through
 * the queue (the built-in ones, the analytics views' @analytics and a list
 * stored as sent, candidates), lets the API change and drop jobs and syncs
 * them again, and runs analyst queries (the analytics views and history
 * included).
 * `default` uses the environment's client credentials, `acme` registered
 * client credentials, and `globex` is a partner account connected through the
 * authorization code grant by `hiresync accounts authorize`, the demo playing
 * the customer's browser.
 */
export async function runDemo(options: {
  adminUrl: string;
  /** The database it creates (dropped first, should it exist): DEMO_DATABASE by default. */
  database: string;
  redisUrl: string;
  records: number;
  logger: Logger;
}): Promise<DemoResult> {
  const databaseUrl = await createDemoDatabase(options.adminUrl, options.database);
  const sim = await startSimulator(options.records);
  const prefix = `hiresync-demo-${randomUUID().slice(0, 8)}`;
  const env = demoEnv(sim, databaseUrl, options.redisUrl, prefix);
  const config = withResolvedPolicy(loadConfig(env, RESOURCE_NAMES));
  const app = createApp(config, options.logger, {
    defaultMetrics: false,
    registry: registryOf(config),
  });
  try {
    await registerAccounts(app.db, sim, config, env, options.logger);
    const { outcomes, changed, dropped, erased } = await syncChangeAndErase(app, sim, config);
    const queries = await askQueries(app.db, [
      ...QUERIES,
      ...historyQueries(changed, dropped),
      ...privacyQueries(erased),
    ]);
    const partner: DemoPartner = {
      account: DEMO_PARTNER_ACCOUNT,
      refreshes: sim.partnerStats(DEMO_PARTNER_ACCOUNT).refreshes,
      accessTokenTtlSeconds: DEMO_PARTNER_TOKEN_TTL_SECONDS,
    };
    return { databaseUrl, outcomes, queries, partner, changes: { changed, dropped } };
  } finally {
    await app.close();
    await sim.close();
    await deleteQueueKeys(options.redisUrl, prefix);
  }
}

/** Creates `database` (dropped first) on the server of `adminUrl`; returns its URL. */
async function createDemoDatabase(adminUrl: string, database: string): Promise<string> {
  const tls = postgresTls(adminUrl);
  const admin = new pg.Client({
    connectionString: tls.connectionString,
    ...(tls.ssl === undefined ? {} : { ssl: tls.ssl }),
  });
  try {
    await admin.connect();
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.query(`create database ${database}`);
  } catch (error) {
    throw new HiresyncError(
      describeTlsFailure(error, tls) ??
        `cannot create the demo database ${database} (${(error as Error).message}): set DATABASE_URL to a Postgres server where this user may create databases`,
      { cause: error },
    );
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.href;
}

/**
 * Starts the simulator: for default a v3 world of `records` / 2 applications
 * (the jobs, posts, links, stage histories, offers, openings and answers that
 * come with them, each account within its rate-limit window) and `records`
 * candidates; half as many for acme, a third for globex.
 */
function startSimulator(records: number): Promise<ApiSimulator> {
  const counts = (n: number) => ({
    applications: Math.max(30, Math.round(n / 2)),
    candidates: n,
  });
  // The live service's shapes (flat tracking links named by the reference
  // lists, expires_at tokens, 75 requests / 30 s windows per account).
  return ApiSimulator.start({
    shape: 'v3',
    dataset: { counts: counts(records), malformedEvery: 250 },
    partnerAccessTokenTtlSeconds: DEMO_PARTNER_TOKEN_TTL_SECONDS,
    accounts: [
      {
        name: DEMO_ACCOUNT,
        clientId: `${DEMO_ACCOUNT}-client`,
        clientSecrets: [`${DEMO_ACCOUNT}-secret`],
        dataset: {
          seed: 42,
          idOffset: 50_000_000,
          counts: counts(Math.max(1, Math.round(records / 2))),
          malformedEvery: 250,
        },
      },
      {
        // No client credentials of its own: only the partner app reaches it.
        name: DEMO_PARTNER_ACCOUNT,
        dataset: {
          seed: 77,
          idOffset: 80_000_000,
          counts: counts(Math.max(1, Math.round(records / 3))),
          malformedEvery: 250,
        },
      },
    ],
  });
}

/** The demo's environment: the simulator's URLs, its own database, keys and Redis prefix. */
function demoEnv(sim: ApiSimulator, databaseUrl: string, redisUrl: string, prefix: string): Env {
  return {
    HIRESYNC_BASE_URL: sim.url,
    HIRESYNC_AUTH_URL: sim.authUrl,
    HIRESYNC_CLIENT_ID: 'demo-client',
    HIRESYNC_CLIENT_SECRET: 'demo-secret',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    HIRESYNC_REDIS_PREFIX: prefix,
    // The demo's own key: it seals acme's client secret in hiresync.accounts.
    HIRESYNC_SECRET_KEY: randomBytes(32).toString('base64'),
    // The partner app (the simulator's): globex's refresh grants use it.
    HIRESYNC_PARTNER_CLIENT_ID: 'partner-client',
    HIRESYNC_PARTNER_CLIENT_SECRET: 'partner-secret',
    LOG_LEVEL: 'error',
    // The analytics views' resources (@analytics: applications among them).
    HIRESYNC_RESOURCES: ['@default', '@analytics', DEMO_PERSONAL_RESOURCE].join(','),
    // Personal data: hashed or dropped before anything of it is stored.
    HIRESYNC_FIELD_POLICY: DEMO_FIELD_POLICY,
    HIRESYNC_HASH_KEY: randomBytes(32).toString('base64'),
    // As against the live service: the job posts v3 hides by default are read too.
    HIRESYNC_EXTRA_WALKS: 'job_posts?active=false',
  };
}

/** Registers acme and connects globex, between migrations. */
async function registerAccounts(
  db: Kysely<Database>,
  sim: ApiSimulator,
  config: Config,
  env: Env,
  logger: Logger,
): Promise<void> {
  // As `hiresync migrate` and `hiresync accounts add acme --client-id acme-client` do.
  const typedViews = typedViewDeclarations(catalogFor(config.resources));
  await migrateAll(db, undefined, { typedViews });
  await new AccountStore(db, config.secretKeys).add({
    name: DEMO_ACCOUNT,
    baseUrl: sim.url,
    auth: {
      mode: 'client_credentials',
      authUrl: sim.authUrl,
      clientId: `${DEMO_ACCOUNT}-client`,
      clientSecret: new Secret(`${DEMO_ACCOUNT}-secret`),
    },
  });
  await authorizeInBrowser(db, config, env, logger, DEMO_PARTNER_ACCOUNT);
  await migrateAll(db, undefined, { typedViews });
}

/**
 * Syncs every resource of every account; lets the API change a job twice
 * and drop another, each followed by a full run of jobs; erases a candidate.
 */
async function syncChangeAndErase(
  app: App,
  sim: ApiSimulator,
  config: Config,
): Promise<{ outcomes: RunOnceOutcome[]; changed: number; dropped: number; erased: string }> {
  const targets = [DEFAULT_ACCOUNT, DEMO_ACCOUNT, DEMO_PARTNER_ACCOUNT].flatMap((account) =>
    config.resources.map((resource) => ({ account, resource })),
  );
  const outcomes = await runOnce(app, targets, 'auto');
  // The API changes a job twice and drops another; the next full run keeps
  // every version (jobs_history).
  const data = sim.datasetOf(DEFAULT_ACCOUNT);
  const changed = data.touch('jobs', 1);
  const dropped = data.remove('jobs', 2);
  outcomes.push(...(await runOnce(app, [{ account: DEFAULT_ACCOUNT, resource: 'jobs' }], 'full')));
  data.touch('jobs', 1);
  outcomes.push(...(await runOnce(app, [{ account: DEFAULT_ACCOUNT, resource: 'jobs' }], 'full')));
  // A candidate's right to erasure, as 'hiresync erase' honours it.
  const erased = String(data.idOf(DEMO_PERSONAL_RESOURCE, 0));
  await eraseRecords(app.db, {
    account: DEFAULT_ACCOUNT,
    resource: defineListResource(DEMO_PERSONAL_RESOURCE),
    ids: [erased],
    waitMs: 60_000,
    origin: 'command',
    note: 'the demo: a candidate asked to be forgotten',
  });
  return { outcomes, changed, dropped, erased };
}

/** Runs each of `queries`, in order, with what it returned. */
async function askQueries(
  db: Kysely<Database>,
  queries: ReadonlyArray<{ title: string; sql: string }>,
): Promise<DemoQuery[]> {
  // The tables were filled seconds ago: autovacuum has not analyzed them yet,
  // and without statistics the analytics views' joins are planned blind
  // (source_of_hire took 98.5 s, and 0.97 s after an analyze, on a fresh cluster). An
  // analyst right after a first sync meets the same; docs/analytics.md says so.
  await sql`analyze`.execute(db);
  const answered: DemoQuery[] = [];
  for (const q of queries) {
    const { rows } = await sql.raw<Record<string, unknown>>(q.sql).execute(db);
    const columns = Object.keys(rows[0] ?? {});
    answered.push({ ...q, columns, rows: rows.map((r) => columns.map((c) => String(r[c] ?? ''))) });
  }
  return answered;
}

/** Deletes the demo's queue keys (`prefix`) from Redis. */
async function deleteQueueKeys(redisUrl: string, prefix: string): Promise<void> {
  // Once, without retrying: after a SIGINT the demo's own Redis is stopped already.
  const target = parseRedisUrl(redisUrl);
  const redis = connectRedis(target, { maxRetriesPerRequest: 0, failFastMs: 5000 });
  redis.on('error', () => {});
  await deletePrefix(redis, keyPrefix(prefix, target)).finally(() => redis.disconnect());
}
