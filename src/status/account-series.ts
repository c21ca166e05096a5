import type { Kysely } from 'kysely';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import { readLatestOutcomes } from '../warehouse/reports/latest-runs.js';
import { readEnabledAccounts } from '../warehouse/reports/status-reads.js';
import type { Database } from '../warehouse/tables.js';

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
 * Reads, in a constant number of statements whatever the number of accounts,
 * when each enabled account's resources last succeeded and whether their
 * latest finished run failed (hiresync.data_sync_runs, in one statement: see
 * src/warehouse/reports/latest-runs.ts), which partner accounts need re-authorizing and whose
 * credentials were refused (hiresync.accounts). Disabled accounts, and
 * resources without a finished run, are left out. Nothing before hiresync's
 * schema exists, no runs before its shared tables do; undefined when
 * Postgres cannot be read.
 */
export async function readAccountSeries(
  db: Kysely<Database>,
  options: AccountSeriesOptions = {},
): Promise<AccountSeries | undefined> {
  try {
    const accounts = await readEnabledAccounts(db);
    const withRuns = [
      ...((options.withDefault ?? true) ? [DEFAULT_ACCOUNT] : []),
      ...accounts.map((a) => a.name),
    ];
    const rows = await readLatestOutcomes(db, withRuns).catch((error: unknown) => {
      if (isMissing(error, 'hiresync.data_sync_runs')) return [];
      throw error;
    });
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
        .filter((a) => !a.partner)
        .map((a) => ({ account: a.name, credentialsRefused: a.state === 'credentials_refused' })),
    };
  } catch (error) {
    return isMissing(error, 'hiresync.accounts')
      ? { lastSuccesses: [], lastRuns: [], partners: [], credentialed: [] }
      : undefined;
  }
}

/** Whether `error` is Postgres's 42P01 about `table`: a database before `migrate` made it. */
function isMissing(error: unknown, table: string): boolean {
  return (
    (error as { code?: string }).code === '42P01' && (error as Error).message.includes(`"${table}"`)
  );
}
