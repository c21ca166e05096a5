/**
 * What bench/accounts-thousands.ts assumes about where account data lives,
 * in one place, so that a new storage layout changes this file only:
 *
 * - {@link releaseMigrationFolders}: the folder(s) of a built copy where a
 *   release's migration of account data goes, and {@link writeReleaseMigration},
 *   the trivial migration written there;
 * - {@link seedRows}: a few job boards and tracking links per account,
 *   written with SQL into the tables behind the views;
 * - {@link CROSS_ACCOUNT_QUERIES}: the analyst's reads that are timed;
 * - {@link firstRunsSucceeded}: how the benchmark sees that first syncs are done;
 * - {@link seedRuns}: a history of runs per account and resource, written with
 *   SQL where the runs live (hiresync.data_sync_runs, shared by every account).
 *
 * The layout (shared storage, migrations/hiresync/0009): every account's
 * rows live in tables hiresync.data_<table> keyed by account, hash-partitioned;
 * each account's schema (public for default) holds views of the same names
 * as the tables it held before. A release's migration changes a shared table
 * once; `migrate` then makes again the views of the changed table in each
 * account's schema.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { schemaOf } from '../src/account-name.js';

/** Name of the release's migration, sorting after every real one. */
export const RELEASE_MIGRATION = '9999_bench_release';

/**
 * The folders of the built copy `distRoot` (a copy of dist/) whose
 * migrations `hiresync migrate` applies to account data: the control
 * schema's, dist/migrations/hiresync, which holds the shared tables.
 */
export function releaseMigrationFolders(distRoot: string): string[] {
  return [path.join(distRoot, 'migrations', 'hiresync')];
}

/**
 * Writes the release's one new migration into `folder`: a nullable column
 * added to the shared tracking links (every account's view of them gains it
 * when `migrate` makes them again). Plain JavaScript, no import, as the
 * FileMigrationProvider loads the built migrations.
 */
export function writeReleaseMigration(folder: string): void {
  writeFileSync(
    path.join(folder, `${RELEASE_MIGRATION}.js`),
    `// A release's one new migration, written by bench/accounts-thousands.ts.
export async function up(db) {
  await db.schema.withSchema('hiresync').alterTable('data_tracking_links').addColumn('bench_release_note', 'text').execute();
}
export async function down(db) {
  await db.schema.withSchema('hiresync').alterTable('data_tracking_links').dropColumn('bench_release_note').execute();
}
`,
  );
}

/** Seed rows per account: job boards (company names shared by every account) and links over them. */
export const SEED = { boards: 3, links: 10 } as const;

/** Ids far above the simulator's (10^6 · account index + a few thousand). */
const SEED_ID = 9_000_000_000_000;

/**
 * Writes {@link SEED} job boards and tracking links into each of `accounts`,
 * through each account's views job_boards and tracking_links (which write
 * the shared tables, with the account), 50 accounts a statement batch. Rows
 * already there (a second seeding) are left alone.
 */
export async function seedRows(db: pg.Client, accounts: readonly string[]): Promise<void> {
  const statements = accounts.map((account) => {
    const schema = `"${schemaOf(account)}"`;
    return `
      insert into ${schema}.job_boards (id, company_name, url_token, raw)
      select ${SEED_ID} + g, 'Company ' || g, 'board_' || g, jsonb_build_object('id', ${SEED_ID} + g)
      from generate_series(1, ${SEED.boards}) g
      on conflict (account, id) do nothing;
      insert into ${schema}.tracking_links (id, token, job_board_id, created_at, updated_at, raw)
      select ${SEED_ID} + g, 'seed' || g, ${SEED_ID} + 1 + g % ${SEED.boards}, now(), now(),
             jsonb_build_object('id', ${SEED_ID} + g, 'token', 'seed' || g)
      from generate_series(1, ${SEED.links}) g
      on conflict (account, id) do nothing;`;
  });
  for (let i = 0; i < statements.length; i += 50) {
    await db.query(statements.slice(i, i + 50).join('\n'));
  }
}

/** A read an analyst makes, timed and its locks counted. `one` marks the reads of one account. */
export interface TimedQuery {
  name: string;
  text: (firstAccount: string) => string;
  one?: boolean;
}

/** The reads of the benchmark: across every account (the lock target), and one account's view. */
export const CROSS_ACCOUNT_QUERIES: readonly TimedQuery[] = [
  {
    name: 'select count(*) from all_accounts.tracking_links_flat',
    text: () => 'select count(*) from all_accounts.tracking_links_flat',
  },
  {
    name: 'tracking links per job board company, all accounts (all_accounts.tracking_links_flat join all_accounts.job_boards)',
    text: () => `
      select b.company_name, count(*) as links
      from all_accounts.tracking_links_flat l
      join all_accounts.job_boards b on b.account = l.account and b.id = l.job_board_id
      group by b.company_name
      order by links desc
      limit 20`,
  },
  {
    name: "one account's view: select count(*) from ACCOUNT.tracking_links_flat",
    text: (first) => `select count(*) from "${schemaOf(first)}".tracking_links_flat`,
    one: true,
  },
];

/**
 * How many (account, resource) pairs among `resources` have a succeeded full
 * run, read from all_accounts.sync_runs (the contract's view, whatever is
 * behind it).
 */
export async function firstRunsSucceeded(
  db: pg.Client,
  resources: readonly string[],
): Promise<{ succeeded: number; failed: number }> {
  const { rows } = await db.query<{ succeeded: number; failed: number }>(
    `select count(distinct (account, resource)) filter (where outcome = 'succeeded')::int as succeeded,
            count(*) filter (where outcome = 'failed')::int as failed
     from all_accounts.sync_runs
     where mode = 'full' and resource = any($1::text[]) and account <> 'default'`,
    [resources],
  );
  return rows[0] ?? { succeeded: 0, failed: 0 };
}

/**
 * Writes `runs` runs of each of `resources` for each of `accounts` into
 * hiresync.data_sync_runs (shared storage: every account's sync_runs), a
 * quarter of an hour apart, the newest ending now, 500 accounts a statement:
 * mostly succeeded incremental runs, a full run every tenth, one run in
 * eleven failed (a 500, with its error), and the newest run of one account
 * in seven still running. What `status`, `accounts list` and a /metrics
 * scrape read, without syncing.
 */
export async function seedRuns(
  db: pg.Client,
  accounts: readonly string[],
  resources: readonly string[],
  runs: number,
): Promise<void> {
  for (let i = 0; i < accounts.length; i += 500) {
    await db.query(
      `insert into hiresync.data_sync_runs
         (account, resource, mode, started_at, finished_at, pages, records, outcome, error)
       select a.account, r.resource, case when k % 10 = 0 then 'full' else 'incremental' end,
         now() - ($3::int - k) * interval '15 minutes',
         case when k = $3 and a.n % 7 = 0 then null
           else now() - ($3::int - k) * interval '15 minutes' + interval '20 seconds' end,
         2, 40,
         case when k = $3 and a.n % 7 = 0 then 'running'
           when (k + a.n) % 11 = 0 then 'failed' else 'succeeded' end,
         case when (k + a.n) % 11 = 0 and not (k = $3 and a.n % 7 = 0)
           then '500 from /v3/' || r.resource || ': internal error (after 3 attempts)' end
       from unnest($1::text[]) with ordinality a(account, n), unnest($2::text[]) r(resource),
         generate_series(1, $3::int) k
       order by a.n, r.resource, k`,
      [accounts.slice(i, i + 500), resources, runs],
    );
  }
  await db.query('analyze hiresync.data_sync_runs');
}
