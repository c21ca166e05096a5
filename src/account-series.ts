import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT, schemaOf } from './account-name.js';
import type { Database } from './warehouse/schema.js';

/** What a scrape reads of the accounts in Postgres. */
export interface AccountSeries {
  /** When each (account, resource)'s newest succeeded run finished, epoch seconds. */
  lastSuccesses: Array<{ account: string; resource: string; at: number }>;
  /**
   * Whether each (account, resource)'s latest finished run failed (a 403, not
   * permitted, included); a run in flight leaves the one before it standing.
   */
  lastRuns: Array<{ account: string; resource: string; failed: boolean }>;
  /** Each partner account, and whether it must be authorized again. */
  partners: Array<{ account: string; needsReauthorization: boolean }>;
  /** Each registered client-credentials or API-key account, and whether its credentials were refused. */
  credentialed: Array<{ account: string; credentialsRefused: boolean }>;
}

/** Options of {@link readAccountSeries}. */
export interface AccountSeriesOptions {
  /** Read `default`'s runs (schema public) too. Default true. */
  withDefault?: boolean;
}

/**
 * The newest succeeded run and the newest finished run of each resource of
 * one schema: the resources by a loose index scan of sync_runs' (resource,
 * id desc) index, then, for each, those runs by that index, so the cost grows
 * with resources, not with the runs kept.
 */
function resourceRunsIn(schema: string, account: string) {
  const runs = sql`${sql.id(schema)}.sync_runs`;
  return sql`(with recursive r(resource) as (
      (select resource from ${runs} order by resource limit 1)
      union all
      select (select s.resource from ${runs} s where s.resource > r.resource order by s.resource limit 1)
      from r where r.resource is not null
    )
    select ${account}::text as account, r.resource,
      (select extract(epoch from s.finished_at)::float8 from ${runs} s
        where s.resource = r.resource and s.outcome = 'succeeded' and s.finished_at is not null
        order by s.id desc limit 1) as at,
      (select s.outcome = 'failed' from ${runs} s
        where s.resource = r.resource and s.outcome <> 'running' and s.finished_at is not null
        order by s.id desc limit 1) as failed
    from r where r.resource is not null)`;
}

/**
 * Reads, in two statements whatever the number of accounts, when each
 * enabled account's resources last succeeded and whether their latest
 * finished run failed (the accounts' sync_runs), which partner accounts
 * need re-authorizing and whose credentials were refused (hiresync.accounts). Disabled
 * accounts, and accounts whose schema has no sync_runs yet, are left out.
 * Nothing before hiresync's schema exists; undefined when Postgres cannot be
 * read (or an account went away between the two statements: the next scrape
 * reads it right).
 */
export async function readAccountSeries(
  db: Kysely<Database>,
  options: AccountSeriesOptions = {},
): Promise<AccountSeries | undefined> {
  try {
    const { rows: accounts } = await sql<{
      name: string;
      partner: boolean;
      state: string;
      has_runs: boolean;
    }>`
      select name, auth_mode = 'partner' as partner, state,
        to_regclass(format('%I.sync_runs', name)) is not null as has_runs
      from hiresync.accounts where state <> 'disabled'
      union all
      select ${DEFAULT_ACCOUNT}, false, 'enabled', to_regclass('public.sync_runs') is not null
      order by name`.execute(db);
    const withRuns = accounts.filter(
      (a) => a.has_runs && (a.name !== DEFAULT_ACCOUNT || (options.withDefault ?? true)),
    );
    const rows =
      withRuns.length === 0
        ? []
        : (
            await sql<{
              account: string;
              resource: string;
              at: number | null;
              failed: boolean | null;
            }>`${sql.join(
              withRuns.map((a) => resourceRunsIn(schemaOf(a.name), a.name)),
              sql` union all `,
            )}`.execute(db)
          ).rows;
    return {
      lastSuccesses: rows.flatMap((r) =>
        r.at === null ? [] : [{ account: r.account, resource: r.resource, at: r.at }],
      ),
      lastRuns: rows.flatMap((r) =>
        r.failed === null ? [] : [{ account: r.account, resource: r.resource, failed: r.failed }],
      ),
      partners: accounts
        .filter((a) => a.partner)
        .map((a) => ({
          account: a.name,
          needsReauthorization: a.state === 'needs_reauthorization',
        })),
      credentialed: accounts
        .filter((a) => !a.partner && a.name !== DEFAULT_ACCOUNT)
        .map((a) => ({ account: a.name, credentialsRefused: a.state === 'credentials_refused' })),
    };
  } catch (error) {
    return (error as { code?: string }).code === '42P01' &&
      /hiresync\.accounts/.test((error as Error).message)
      ? { lastSuccesses: [], lastRuns: [], partners: [], credentialed: [] }
      : undefined;
  }
}
