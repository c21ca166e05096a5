import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import {
  FileMigrationProvider,
  type Migration,
  type MigrationProvider,
  type MigrationResult,
  Migrator,
} from 'kysely/migration';
import { HiresyncError } from '../errors.js';
import { inSchema, PUBLIC_SCHEMA } from './database.js';
import { LOCK_SPACE, lockKey } from './resource-lock.js';
import type { Database } from './schema.js';
import { dependentsOf, emptyView } from './view-placement.js';

/**
 * The warehouse migrations: `migrations/` beside `src/`, in the source tree and
 * in `dist/` alike. They name tables without a schema, so the same files build
 * `public` and every account's schema (search_path points them there).
 */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../migrations', import.meta.url));

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
  /** The schema the migrations build, and where Kysely records them. Default `public`. */
  schema?: string;
  /** The folder of migrations. Default {@link MIGRATIONS_FOLDER}. */
  folder?: string;
  /**
   * Rebuilds the `all_accounts` views, in the migration's transaction, after
   * each migration of a warehouse schema that dropped some of them (see
   * {@link dropAllAccountsViews}): no reader ever sees them dropped or empty.
   * When it fails, the migration still stands (savepoint) and the views stay
   * dropped until `migrateAll`'s own rebuild. Default: none.
   */
  // biome-ignore lint/suspicious/noExplicitAny: called with a migration's Kysely<any>
  rebuildViews?: (db: Kysely<any>) => Promise<unknown>;
}

/**
 * Drops the views of {@link ALL_ACCOUNTS_SCHEMA} that select from relations of
 * `schema`, under their lock: a migration of `schema` may drop or change those
 * relations. Runs inside the migration's transaction, so the lock is held
 * until it commits and no refresh rebuilds the views on relations being
 * changed; {@link MigrateOptions.rebuildViews} rebuilds them in the same
 * transaction once the migration is applied (and the refresh at the end of
 * `migrateAll` does again). A new account's schema, which no view selects
 * from yet, drops none. A view that objects of others are built on is not
 * dropped but emptied in place (see emptyView), so they survive. Returns how
 * many views it dropped or emptied.
 */
// biome-ignore lint/suspicious/noExplicitAny: called with a migration's Kysely<any>
export async function dropAllAccountsViews(db: Kysely<any>, schema: string): Promise<number> {
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${ALL_ACCOUNTS_LOCK}::int)`.execute(
    db,
  );
  const { rows } = await sql<{ name: string }>`
    select distinct v.relname as name
    from pg_depend d
    join pg_rewrite r on r.oid = d.objid
    join pg_class v on v.oid = r.ev_class
    join pg_namespace vn on vn.oid = v.relnamespace
    join pg_class t on t.oid = d.refobjid
    join pg_namespace tn on tn.oid = t.relnamespace
    where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass
      and vn.nspname = ${ALL_ACCOUNTS_SCHEMA} and tn.nspname = ${schema} and t.oid <> v.oid`.execute(
    db,
  );
  for (const { name } of rows) {
    const view = { schema: ALL_ACCOUNTS_SCHEMA, name };
    // An analyst's view on it must neither fail the migration nor be dropped
    // with it: it stays, over an empty view, until the refresh rebuilds it.
    if ((await dependentsOf(db, view)).length > 0) await emptyView(db, view);
    else await sql`drop view if exists ${sql.id(ALL_ACCOUNTS_SCHEMA, name)}`.execute(db);
  }
  return rows.length;
}

/**
 * The migrations of `folder`; with `around`, each pending migration's `up`
 * runs inside it (in the migration's transaction).
 */
function provider(
  folder: string,
  // biome-ignore lint/suspicious/noExplicitAny: a migration's Kysely<any>
  around?: (db: Kysely<any>, up: () => Promise<void>) => Promise<void>,
) {
  const files = new FileMigrationProvider({
    fs,
    path,
    migrationFolder: folder,
    // Imported from here, so a test runner that transforms TypeScript loads them too.
    import: (file: string) => import(file),
  });
  if (!around) return files;
  return {
    async getMigrations() {
      const migrations = await files.getMigrations();
      return Object.fromEntries(
        Object.entries(migrations).map(([name, migration]): [string, Migration] => [
          name,
          {
            ...migration,
            up: (db) => around(db, () => migration.up(db)),
          },
        ]),
      );
    },
  } satisfies MigrationProvider;
}

/**
 * Applies the pending migrations of `options.folder` to `options.schema`: the
 * one way hiresync migrates, for `public`, every account's schema and the
 * control schema. Kysely's Migrator runs over {@link inSchema}'s instance of
 * the schema (search_path = the schema alone), records what it applied in the
 * schema's own kysely_migration table (`migrationTableSchema`; without it,
 * Kysely's "does the table exist" check matches that table in any schema), and
 * creates the schema first if need be.
 *
 * Safe to run any number of times and from several processes at once: Kysely's
 * Postgres adapter serialises every migrator with one advisory lock, and runs
 * the pending migrations of a schema in one transaction. A migration of any
 * folder but the control schema's first drops the `all_accounts` views that
 * select from the schema (see {@link dropAllAccountsViews}), and with
 * `rebuildViews` builds them again right after it, in its transaction.
 */
export async function migrateToLatest(
  db: Kysely<Database>,
  options: MigrateOptions = {},
): Promise<MigrateOutcome> {
  const schema = options.schema ?? PUBLIC_SCHEMA;
  const folder = options.folder ?? MIGRATIONS_FOLDER;
  const rebuildViews = options.rebuildViews;
  const migrator = new Migrator({
    db: inSchema(db, schema),
    provider: provider(
      folder,
      folder === CONTROL_MIGRATIONS_FOLDER
        ? undefined
        : async (trx, up) => {
            const dropped = await dropAllAccountsViews(trx, schema);
            await up();
            if (dropped === 0 || !rebuildViews) return;
            await sql`savepoint rebuild_views`.execute(trx);
            try {
              await rebuildViews(trx);
              await sql`release savepoint rebuild_views`.execute(trx);
            } catch {
              await sql`rollback to savepoint rebuild_views`.execute(trx);
            }
          },
    ),
    migrationTableSchema: schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r: MigrationResult) => r.status === 'Error');
  if (error) {
    throw new HiresyncError(
      `migration ${failed?.migrationName ?? ''} of schema ${schema} failed: ${(error as Error).message ?? String(error)}; the schema is left as it was (its pending migrations run in one transaction)`,
      { cause: error },
    );
  }
  return {
    schema,
    applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
  };
}

/** Names of the migrations in `folder` (as Kysely names them: the file name without extension). */
export async function migrationNames(folder = MIGRATIONS_FOLDER): Promise<string[]> {
  return Object.keys(await provider(folder).getMigrations()).sort();
}
