/**
 * Every read of Postgres that `status`, the console, /metrics, /healthz and
 * the checks before a command make, besides the runs' (latest-runs.ts): each
 * takes the pool and returns typed rows. What the rows mean (the accounts
 * shown, a table missing before `migrate`) is src/status/'s.
 */
import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT, schemaOf } from '../../account-name.js';
import type { Database } from '../tables.js';

/** Postgres answers (/healthz). */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

/** SQLSTATE of a relation that does not exist: hiresync's tables before `migrate`. */
const UNDEFINED_TABLE = '42P01';

/**
 * Reads hiresync.data_sync_runs once, throwing 42P01 before `migrate` made
 * it, and the identity of the database (see {@link databaseIdentity}), in
 * one statement: the checks before a command. Where that statement fails
 * otherwise (a role that may not run pg_control_system(), a server without
 * it), the checks are made one by one, as before: four statements, the
 * system null where it cannot be read.
 */
export async function probeSyncRuns(db: Kysely<Database>): Promise<DatabaseIdentity> {
  try {
    const { rows } = await sql<{ name: string; system: string | null }>`
      select current_database() as name,
        (select system_identifier::text from pg_catalog.pg_control_system()) as system,
        exists (select 1 from hiresync.data_sync_runs where account = ${DEFAULT_ACCOUNT}) as probed`.execute(
      db,
    );
    const row = rows[0] as { name: string; system: string | null };
    return { database: row.name, system: row.system };
  } catch (error) {
    if ((error as { code?: string }).code === UNDEFINED_TABLE) throw error;
  }
  await sql`select 1 from hiresync.data_sync_runs where account = ${DEFAULT_ACCOUNT} limit 1`.execute(
    db,
  );
  return databaseIdentity(db);
}

/** Which database a Redis prefix belongs to: the Postgres cluster's system identifier and the database's name. */
export interface DatabaseIdentity {
  /** `system_identifier` of pg_control_system(); null where the role may not read it. */
  system: string | null;
  database: string;
}

/** The identity of the database `db` is connected to. No credentials: a name and a number. */
export async function databaseIdentity(db: Kysely<Database>): Promise<DatabaseIdentity> {
  const database = (await sql<{ name: string }>`select current_database() as name`.execute(db))
    .rows[0]?.name as string;
  try {
    const { rows } = await sql<{
      system: string;
    }>`select system_identifier::text as system from pg_catalog.pg_control_system()`.execute(db);
    return { system: rows[0]?.system ?? null, database };
  } catch {
    // Executable by every role by default, but a server may have revoked it.
    return { system: null, database };
  }
}

/** Which of `accounts` have no view sync_runs in their schema (an add that could not make them), in one statement. */
export async function schemasWithoutRuns(
  db: Kysely<Database>,
  accounts: readonly string[],
): Promise<Set<string>> {
  if (accounts.length === 0) return new Set();
  const { rows } = await sql<{ account: string }>`
    select a.account from unnest(${accounts}::text[], ${accounts.map(schemaOf)}::text[]) a(account, schema)
    where to_regclass(format('%I.sync_runs', a.schema)) is null`.execute(db);
  return new Set(rows.map((r) => r.account));
}

/** Whether runs of `default` are stored; false before the shared table exists. */
export async function defaultAccountRan(db: Kysely<Database>): Promise<boolean> {
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.data_sync_runs') is not null as present`.execute(db);
  if (!found[0]?.present) return false;
  const { rows } = await sql<{ ran: boolean }>`
    select exists (select 1 from hiresync.data_sync_runs where account = ${DEFAULT_ACCOUNT}) as ran`.execute(
    db,
  );
  return rows[0]?.ran === true;
}

/** A row of hiresync.typed_view_blocks that blocks a view now. */
export interface TypedViewBlockRow {
  schema: string;
  view: string;
  message: string;
  since: string;
}

/** The blocked typed views of `schemas`, by schema and view; none before the control schema has the table. */
export async function readTypedViewBlockRows(
  db: Kysely<Database>,
  schemas: readonly string[],
): Promise<TypedViewBlockRow[]> {
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.typed_view_blocks') is not null as present`.execute(db);
  if (!found[0]?.present) return [];
  const { rows } = await sql<{ schema: string; view: string; message: string; since: string }>`
    select schema, view, message, blocked_since::text as since from hiresync.typed_view_blocks
    where message is not null and schema = any(${schemas}::text[])
    order by schema, view`.execute(db);
  return rows;
}

/**
 * Each typed view hiresync.typed_view_blocks knows, blocked or not, of
 * schema public (with `withDefault`), a registered account or the
 * all_accounts unions, by schema and view. Throws 42P01 before the table exists.
 */
export async function readTypedViewBlockStates(
  db: Kysely<Database>,
  withDefault: boolean,
): Promise<Array<{ schema: string; view: string; blocked: boolean }>> {
  const { rows } = await sql<{ schema: string; view: string; blocked: boolean }>`
      select schema, view, message is not null as blocked from hiresync.typed_view_blocks b
      where schema = 'all_accounts' or (schema = 'public' and ${withDefault})
        or exists (select 1 from hiresync.accounts a where a.name = b.schema)
      order by schema, view`.execute(db);
  return rows;
}

/** The accounts that are not disabled, by name: whether each is a partner account, and its state. Throws 42P01 before hiresync.accounts exists. */
export async function readEnabledAccounts(
  db: Kysely<Database>,
): Promise<Array<{ name: string; partner: boolean; state: string }>> {
  const { rows } = await sql<{ name: string; partner: boolean; state: string }>`
      select name, auth_mode = 'partner' as partner, state
      from hiresync.accounts where state <> 'disabled'
      order by name`.execute(db);
  return rows;
}
