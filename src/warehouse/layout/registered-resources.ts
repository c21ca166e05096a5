import { type Kysely, sql } from 'kysely';
import type { Database } from '../tables.js';

/**
 * The resources each registered account's settings name
 * (hiresync.account_settings.resources, see `accounts add|update --resources`),
 * by account; accounts that sync the deployment's are absent, and so is
 * everything before the control schema has the table.
 */
export async function resourcesOfRegisteredAccounts(
  db: Kysely<Database>,
): Promise<Map<string, string[]>> {
  // Looked up rather than caught: a failed statement would abort the caller's transaction.
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.account_settings') is not null as present`.execute(db);
  if (!found[0]?.present) return new Map();
  const { rows } = await sql<{ account: string; resources: string[] }>`
    select account, resources from hiresync.account_settings
    where resources is not null order by account`.execute(db);
  return new Map(rows.map((r) => [r.account, r.resources]));
}
