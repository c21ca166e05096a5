import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { HiresyncError } from '../../errors.js';
import { PUBLIC_SCHEMA } from '../database.js';
import { lockKey } from '../lock-keys.js';
import type { Database } from '../tables.js';

/**
 * The warehouse migrations: `migrations/` beside `src/`, in the source tree and
 * in `dist/` alike. They name tables without a schema, so the same files build
 * `public` and every account's schema (search_path points them there).
 */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../migrations', import.meta.url));

/**
 * The migrations of hiresync's own control schema (`hiresync.accounts`): a
 * sub-folder, which the FileMigrationProvider of {@link MIGRATIONS_FOLDER}
 * skips (it reads files, not folders).
 */
export const CONTROL_MIGRATIONS_FOLDER = path.join(MIGRATIONS_FOLDER, 'hiresync');

/** hiresync's control schema. */
export const CONTROL_SCHEMA = 'hiresync';

/** The schema of the cross-account views (`all_accounts.tracking_links_flat`, …); hiresync's own. */
export const ALL_ACCOUNTS_SCHEMA = 'all_accounts';

/**
 * Second key of the transaction-level advisory lock that serialises every
 * change to the views of {@link ALL_ACCOUNTS_SCHEMA}: their refresh, and the
 * migrations that drop them first.
 */
export const ALL_ACCOUNTS_LOCK = lockKey('all_accounts views');

/** What {@link migrateToLatest} applied. */
export interface MigrateOutcome {
  /** The schema migrated. */
  schema: string;
  /** Names of the migrations applied, in order; empty when the schema was up to date. */
  applied: string[];
}

/** Options of {@link migrateToLatest}. */
export interface MigrateOptions {
  /** The schema the migrations build, and where their names are recorded. Default `public`. */
  schema?: string;
  /** The folder of migrations. Default {@link MIGRATIONS_FOLDER}. */
  folder?: string;
  /** The last migration to apply (as Kysely's `migrateTo`); default the folder's last. */
  upTo?: string;
}

/**
 * The lock key Kysely's Postgres adapter takes around a Migrator's run:
 * {@link migrateToLatest} takes it too, so it and any Kysely Migrator never
 * run at once.
 */
const KYSELY_MIGRATION_LOCK = '3853314791062309107';

/** The migrations of `folder`, by name (the file name without extension), as Kysely reads them. */
export async function migrationsIn(folder = MIGRATIONS_FOLDER): Promise<Record<string, Migration>> {
  // Imported when a migration is to run, not on every command that checks.
  const { FileMigrationProvider } = await import('kysely/migration');
  return new FileMigrationProvider({
    fs,
    path,
    migrationFolder: folder,
    // Imported from here, so a test runner that transforms TypeScript loads them too.
    import: (file: string) => import(file),
  }).getMigrations();
}

/**
 * Applies the pending migrations of `options.folder` to `options.schema`, in
 * name order, all in one transaction, recording each in the schema's own
 * `kysely_migration` table (name, ISO timestamp) and creating that table,
 * its `kysely_migration_lock` and the schema first if need be: Kysely's
 * Migrator semantics (the same tables, the same advisory lock, so the two
 * never run at once), without its introspection, which lists every column of
 * every relation of the database to find its own table, four times per run
 * (what made a migration of N accounts cost N²). Each migration runs with
 * `search_path` set to the schema alone, as its unqualified names expect.
 *
 * Safe to run any number of times and from several processes at once: the
 * advisory lock serialises them, and a schema's pending migrations commit
 * together or not at all.
 */
export async function migrateToLatest(
  db: Kysely<Database>,
  options: MigrateOptions = {},
): Promise<MigrateOutcome> {
  const schema = options.schema ?? PUBLIC_SCHEMA;
  const folder = options.folder ?? MIGRATIONS_FOLDER;
  // A schema of shared storage holds views, not the tables the warehouse
  // migrations build: they are behind it (see schema-layout.ts).
  if (folder === MIGRATIONS_FOLDER && (await inSharedStorage(db, schema))) {
    return { schema, applied: [] };
  }
  // Up to date (as at each `accounts add`, which migrates first): a listing
  // and two queries, no migration imported, no lock taken.
  const files = await migrationFileNames(folder, options.upTo);
  try {
    if (await recordsAll(db, schema, files)) return { schema, applied: [] };
  } catch (error) {
    throw migrationFailed(schema, undefined, error);
  }
  const migrations = await migrationsIn(folder);
  let current: string | undefined;
  try {
    if (folder === MIGRATIONS_FOLDER) await refuseForeignRoutines(db, schema);
    const applied = await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${sql.lit(KYSELY_MIGRATION_LOCK)}::bigint)`.execute(
        trx,
      );
      await sql`create schema if not exists ${sql.id(schema)}`.execute(trx);
      await sql`create table if not exists ${sql.id(schema, 'kysely_migration')} (
          name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(trx);
      await sql`create table if not exists ${sql.id(schema, 'kysely_migration_lock')} (
          id varchar(255) not null primary key, is_locked integer not null default 0)`.execute(trx);
      await sql`insert into ${sql.id(schema, 'kysely_migration_lock')} (id, is_locked)
          values ('migration_lock', 0) on conflict do nothing`.execute(trx);
      const { rows } = await sql<{ name: string }>`
          select name from ${sql.id(schema, 'kysely_migration')}`.execute(trx);
      const done = new Set(rows.map((r) => r.name));
      const pending = Object.keys(migrations)
        .sort()
        .filter((name) => !done.has(name) && (options.upTo === undefined || name <= options.upTo));
      for (const name of pending) {
        current = name;
        // The one place hiresync points a connection elsewhere: migrations
        // are frozen in time and name their tables without a schema. For
        // this transaction only (set_config's `true`), and only after
        // refuseForeignRoutines found no other role's function there.
        await sql`select set_config('search_path', ${`"${schema}"`}, true)`.execute(trx);
        await migrations[name]?.up(trx);
        await sql`insert into ${sql.id(schema, 'kysely_migration')} (name, timestamp)
            values (${name}, ${new Date().toISOString()})`.execute(trx);
      }
      return pending;
    });
    return { schema, applied };
  } catch (error) {
    throw migrationFailed(schema, current, error);
  }
}

/** The error of a migration run of `schema` that failed (in migration `current`, if one ran). */
function migrationFailed(schema: string, current: string | undefined, error: unknown) {
  return new HiresyncError(
    `migration ${current ?? ''} of schema ${schema} failed: ${(error as Error).message ?? String(error)}; the schema is left as it was (its pending migrations run in one transaction)`,
    { cause: error },
  );
}

/**
 * The names of the migration files of `folder` (up to `upTo`), as
 * FileMigrationProvider names them (the file name without extension; .js,
 * .ts, .mjs, .mts, .cjs and .cts, not declaration files), from the folder's
 * listing, without importing them.
 */
async function migrationFileNames(folder: string, upTo: string | undefined): Promise<string[]> {
  const names = (await fs.readdir(folder))
    .filter((file) => /\.[mc]?[jt]s$/.test(file) && !/\.d\.[mc]?ts$/.test(file))
    .map((file) => file.slice(0, file.lastIndexOf('.')))
    .filter((name) => upTo === undefined || name <= upTo);
  return [...new Set(names)];
}

/**
 * Whether `schema`'s `kysely_migration` records every one of `names`. False
 * when the table is missing or a name is not recorded (also that of a file
 * Kysely skips as no migration): {@link migrateToLatest} then imports the
 * migrations and decides under its lock.
 */
async function recordsAll(
  db: Kysely<Database>,
  schema: string,
  names: readonly string[],
): Promise<boolean> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass(format('%I.%I', ${schema}::text, 'kysely_migration')) is not null
      as present`.execute(db);
  if (!rows[0]?.present) return false;
  const { rows: recorded } = await sql<{ n: number }>`
    select count(*)::int as n from ${sql.id(schema, 'kysely_migration')}
    where name = any(${names}::text[])`.execute(db);
  return recorded[0]?.n === names.length;
}

/** Whether `schema` holds an account's views of shared storage (hiresync.schema_layouts). */
async function inSharedStorage(db: Kysely<Database>, schema: string): Promise<boolean> {
  const { rows } = await sql<{ shared: boolean }>`
    select to_regclass('hiresync.schema_layouts') is not null as shared`.execute(db);
  if (!rows[0]?.shared) return false;
  const { rows: layouts } = await sql`
    select 1 from hiresync.schema_layouts where schema = ${schema}`.execute(db);
  return layouts.length > 0;
}

/** Names of the migrations in `folder` (as Kysely names them: the file name without extension). */
export async function migrationNames(folder = MIGRATIONS_FOLDER): Promise<string[]> {
  return Object.keys(await migrationsIn(folder)).sort();
}

/**
 * Refuses to run the warehouse migrations of the earlier per-account layout
 * (which name their tables without a schema, so run with `search_path` set to
 * `schema`) while `schema` or `public` holds a function, procedure or
 * operator of a role other than hiresync's user and the superusers: with the
 * schema on the search path, such an object with exact argument types would
 * win over pg_catalog's and run with hiresync's privileges (CVE-2018-1058).
 */
async function refuseForeignRoutines(db: Kysely<Database>, schema: string): Promise<void> {
  const { rows } = await sql<{ object: string; owner: string }>`
    select format('%I.%s', n.nspname, o.signature) as object, r.rolname::text as owner
    from (
      select pronamespace as ns, proowner as owner, oid::regprocedure::text as signature from pg_catalog.pg_proc
      union all
      select oprnamespace, oprowner, oid::regoperator::text from pg_catalog.pg_operator
    ) o
    join pg_catalog.pg_namespace n on n.oid = o.ns
    join pg_catalog.pg_roles r on r.oid = o.owner
    where n.nspname = any(${[schema, PUBLIC_SCHEMA]}::text[])
      and r.rolname <> current_user and not r.rolsuper`.execute(db);
  if (rows.length === 0) return;
  throw new HiresyncError(
    `schema ${schema} holds the earlier per-account layout, whose migrations run with it on the search path, and ${rows
      .map((r) => `${r.object} (owned by ${r.owner})`)
      .join(
        ', ',
      )} could then run with hiresync's privileges: drop ${rows.length === 1 ? 'it' : 'them'} (or move ${rows.length === 1 ? 'it' : 'them'} to another schema), then run 'hiresync migrate' again`,
  );
}
