import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT, schemaOf } from './account-name.js';
import type { Database } from './warehouse/schema.js';

/** What a scrape reads of the accounts in Postgres. */
export interface AccountSeries {
  /** When each (account, resource)'s newest succeeded run finished, epoch seconds. */
  lastSuccesses: Array<{ account: string; resource: string; at: number }>;
  /** Each partner account, and whether it must be authorized again. */
  partners: Array<{ account: string; needsReauthorization: boolean }>;
}

/** Options of {@link readAccountSeries}. */
export interface AccountSeriesOptions {
  /** Read `default`'s runs (schema public) too. Default true. */
  withDefault?: boolean;
}

/**
 * The newest succeeded run of each resource of one schema: the resources by a
 * loose index scan of sync_runs' (resource, id desc) index, then, for each,
 * the newest succeeded run by that index, so the cost grows with resources,
 * not with the runs kept.
 */
function lastSuccessesIn(schema: string, account: string) {
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
        order by s.id desc limit 1) as at
    from r where r.resource is not null)`;
}

/**
 * Reads, in two statements whatever the number of accounts, when each
 * enabled account's resources last succeeded (the accounts' sync_runs) and
 * which partner accounts need re-authorizing (hiresync.accounts). Disabled
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
    const lastSuccesses =
      withRuns.length === 0
        ? []
        : (
            await sql<{ account: string; resource: string; at: number | null }>`${sql.join(
              withRuns.map((a) => lastSuccessesIn(schemaOf(a.name), a.name)),
              sql` union all `,
            )}`.execute(db)
          ).rows.flatMap((r) =>
            r.at === null ? [] : [{ account: r.account, resource: r.resource, at: r.at }],
          );
    return {
      lastSuccesses,
      partners: accounts
        .filter((a) => a.partner)
        .map((a) => ({
          account: a.name,
          needsReauthorization: a.state === 'needs_reauthorization',
        })),
    };
  } catch (error) {
    return (error as { code?: string }).code === '42P01' &&
      /hiresync\.accounts/.test((error as Error).message)
      ? { lastSuccesses: [], partners: [] }
      : undefined;
  }
}
