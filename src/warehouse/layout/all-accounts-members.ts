import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT } from '../../account-name.js';
import type { Database } from '../tables.js';

/** Names of the registered accounts (every state), sorted; none before the control schema exists. */
export async function registeredAccounts(db: Kysely<Database>): Promise<string[]> {
  // Looked up rather than caught: a failed statement would abort the caller's transaction.
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.accounts') is not null as present`.execute(db);
  if (!found[0]?.present) return [];
  const rows = await db.selectFrom('hiresync.accounts').select('name').orderBy('name').execute();
  return rows.map((r) => r.name);
}

/** A column of a relation the all_accounts views union, with its comment. */
export interface Column {
  name: string;
  type: string;
  comment: string | null;
}

/** The column every all_accounts view starts with: whose row it is. */
export const ACCOUNT_COLUMN: Column = {
  name: 'account',
  type: 'text',
  comment: "The account the row belongs to: 'default' (schema public) or a registered account.",
};

/**
 * The rows of accounts the all_accounts views show: `default`'s and each
 * registered account's (of every state: a disabled account's data stays
 * readable). The rows an account removed without --drop-data left in shared
 * storage are not shown (as its schema was not, before).
 */
export const SHOWN_ACCOUNTS = `(account = '${DEFAULT_ACCOUNT}' or account in (select name from hiresync.accounts))`;
