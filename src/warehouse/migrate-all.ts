import { type Kysely, sql, type Transaction } from 'kysely';
import { accountNameProblem, schemaOf } from '../account-name.js';
import { coerceError, HiresyncError } from '../errors.js';
import { accountResources } from './account-resources.js';
import { claimAccountSchema } from './account-schema-owner.js';
import { registeredAccounts } from './all-accounts-members.js';
import { rebuildViews, refreshAllAccountsViews } from './all-accounts-views.js';
import { PUBLIC_SCHEMA } from './database.js';
import { createListResourceTables, listResourcesIn } from './list-resource-tables.js';
import {
  CONTROL_MIGRATIONS_FOLDER,
  CONTROL_SCHEMA,
  type MigrateOutcome,
  migrateToLatest,
  migrationNames,
} from './migrate.js';
import { LOCK_SPACE, lockKey } from './resource-lock.js';
import type { Database } from './schema.js';

/**
 * Brings `schema` (`public`, or an account's) up to date with the warehouse
 * migrations, creating it if need be (an account's schema created so is
 * marked as hiresync's, see {@link claimAccountSchema}); see {@link migrateToLatest}.
 * The `all_accounts` views a migration drops are rebuilt in its transaction,
 * so a union an analyst reads never shows an account's rows missing because
 * `migrate` was stopped before its end.
 */
export async function migrateSchema(db: Kysely<Database>, schema: string): Promise<MigrateOutcome> {
  if (schema !== PUBLIC_SCHEMA && accountNameProblem(schema) === undefined) {
    const { rows } = await sql<{ exists: boolean }>`
      select to_regnamespace(${schema}) is not null as exists`.execute(db);
    if (!rows[0]?.exists) await claimAccountSchema(db, schema);
  }
  return migrateToLatest(db, {
    schema,
    // The unions over the schema are back before its migration commits.
    rebuildViews: (trx) => rebuildViews(trx as Transaction<Database>, undefined),
  });
}

/** Brings hiresync's control schema (`hiresync.accounts`) up to date. */
export function migrateControl(db: Kysely<Database>): Promise<MigrateOutcome> {
  return migrateToLatest(db, { schema: CONTROL_SCHEMA, folder: CONTROL_MIGRATIONS_FOLDER });
}

/** Options of {@link migrateAll}. */
export interface MigrateAllOptions {
  /**
   * List resources (HIRESYNC_RESOURCES beyond the declared ones) whose tables
   * every schema must hold, besides those public holds already.
   */
  listResources?: readonly string[];
  /**
   * The declared resources (tables of their own, made by migrations): with
   * it, each account's list resources its settings name beyond these get
   * their tables in its schema (and only there). Default: not looked at.
   */
  declared?: readonly string[];
}

/** Options of {@link ensureListResources}. */
export interface EnsureListResourcesOptions {
  /** Rebuild the all_accounts views when anything was created. Default true (false: the caller rebuilds them). */
  refreshViews?: boolean;
  /**
   * Only this schema: the list resources one account's settings name beyond
   * HIRESYNC_RESOURCES have their tables in its schema only. Default every schema.
   */
  schema?: string;
}

/**
 * Makes every schema (public and each registered account's; with `schema`,
 * that one alone) hold the tables and view of each list resource in `names`
 * and of each one public holds already (see createListResourceTables),
 * creating only what is missing, then rebuilds the all_accounts views when
 * anything was created in public or every schema (unless `refreshViews` is
 * false: the caller rebuilds them; the views union public's list resources
 * only). One transaction under a transaction-level advisory lock: concurrent
 * calls from several processes create each table once. Returns the
 * `schema.name` pairs created.
 */
export async function ensureListResources(
  db: Kysely<Database>,
  names: readonly string[],
  { refreshViews = true, schema: only }: EnsureListResourcesOptions = {},
): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${LIST_RESOURCES_LOCK}::int)`.execute(
      trx,
    );
    const wanted = [...new Set([...names, ...(await listResourcesIn(trx, PUBLIC_SCHEMA))])];
    if (wanted.length === 0) return [];
    const schemas =
      only === undefined
        ? [PUBLIC_SCHEMA, ...(await registeredAccounts(trx)).map(schemaOf)]
        : [only];
    const created: string[] = [];
    for (const schema of schemas) {
      const { rows } = await sql<{ present: boolean }>`
        select to_regnamespace(${schema}) is not null as present`.execute(trx);
      // A registered account whose schema is not made yet gets it from its migration.
      if (!rows[0]?.present) continue;
      const have = new Set(await listResourcesIn(trx, schema));
      for (const name of wanted) {
        if (have.has(name)) continue;
        await createListResourceTables(trx, schema, name);
        created.push(`${schema}.${name}`);
      }
    }
    const unioned = only === undefined || only === PUBLIC_SCHEMA;
    if (created.length > 0 && refreshViews && unioned) await rebuildViews(trx, undefined);
    return created;
  });
}

/** Second key of the advisory lock serialising {@link ensureListResources}. */
const LIST_RESOURCES_LOCK = lockKey('list resource tables');

/** What {@link migrateAll} did. */
export interface MigrateAllOutcome {
  /** One entry per schema: `hiresync`, `public`, then each account's, in that order. */
  schemas: MigrateOutcome[];
  /** Accounts the `all_accounts` views leave out, and why (see {@link refreshAllAccountsViews}). */
  warnings: string[];
  /** The list resources whose tables were made, as `schema.name` (see {@link ensureListResources}). */
  listResourceTables: string[];
}

/**
 * Which of `schemas` have warehouse migrations pending: two statements, so an
 * up-to-date deployment with many accounts costs no Migrator per schema.
 */
async function schemasBehind(db: Kysely<Database>, schemas: readonly string[]): Promise<string[]> {
  if (schemas.length === 0) return [];
  const names = await migrationNames();
  const { rows: present } = await sql<{ schema: string }>`
    select nspname as schema from pg_namespace n
    where nspname = any(${schemas}::text[])
      and exists (select 1 from pg_class c
                  where c.relnamespace = n.oid and c.relname = 'kysely_migration' and c.relkind = 'r')`.execute(
    db,
  );
  const tracked = present.map((r) => r.schema);
  const applied = new Map<string, Set<string>>(tracked.map((s) => [s, new Set()]));
  if (tracked.length > 0) {
    const union = sql.join(
      tracked.map(
        (s) =>
          sql`select ${sql.lit(s)}::text as schema, name from ${sql.id(s, 'kysely_migration')}`,
      ),
      sql` union all `,
    );
    const { rows } = await sql<{ schema: string; name: string }>`${union}`.execute(db);
    for (const row of rows) applied.get(row.schema)?.add(row.name);
  }
  return schemas.filter((s) => {
    const done = applied.get(s);
    return !done || names.some((n) => !done.has(n));
  });
}

/**
 * A schema of {@link migrateSchemas} (or {@link migrateAll}) failed to migrate:
 * its pending migrations were rolled back, and the schemas after it were not
 * tried. The message is the failure's; `cause` the error thrown.
 */
export class SchemaMigrationError extends HiresyncError {
  /** The schema whose migration failed. */
  readonly schema: string;
  /** The schemas brought up to date (or found so) before it, in order. */
  readonly schemas: MigrateOutcome[];
  /** Of migrateAll: what the rebuild of the `all_accounts` views that followed left out. */
  readonly warnings: string[];

  constructor(
    schema: string,
    schemas: MigrateOutcome[],
    error: unknown,
    options: { warnings?: string[]; message?: string } = {},
  ) {
    super(options.message ?? coerceError(error).message, { cause: error });
    this.schema = schema;
    this.schemas = schemas;
    this.warnings = options.warnings ?? [];
  }
}

/**
 * Brings each of `schemas` (`public` or accounts' schemas) up to date, in
 * order, running a Migrator only for those with migrations pending. Stops at
 * the first that fails, throwing a {@link SchemaMigrationError}.
 */
export async function migrateSchemas(
  db: Kysely<Database>,
  schemas: readonly string[],
): Promise<MigrateOutcome[]> {
  const behind = new Set(await schemasBehind(db, schemas));
  const outcomes: MigrateOutcome[] = [];
  for (const schema of schemas) {
    if (!behind.has(schema)) {
      outcomes.push({ schema, applied: [] });
      continue;
    }
    try {
      outcomes.push(await migrateSchema(db, schema));
    } catch (error) {
      throw new SchemaMigrationError(schema, outcomes, error);
    }
  }
  return outcomes;
}

/**
 * Brings everything up to date: the control schema, `public`, then the schema
 * of each account in `accounts` (default: every registered account, read after
 * the control schema is migrated), then rebuilds the `all_accounts` views.
 * Safe to run concurrently (Kysely serialises migrators; the views have their
 * own lock). An account schema already up to date is not touched.
 *
 * The views are rebuilt whether or not the migrations succeed (a migration
 * drops the views over its schema first): when one schema fails, they are
 * rebuilt without that account (named in the warnings), and a
 * {@link SchemaMigrationError} carrying those warnings is thrown.
 */
export async function migrateAll(
  db: Kysely<Database>,
  accounts?: readonly string[],
  options: MigrateAllOptions = {},
): Promise<MigrateAllOutcome> {
  const control = await migrateControl(db);
  const names = accounts ?? (await registeredAccounts(db));
  let schemas: MigrateOutcome[];
  let created: string[];
  try {
    schemas = await migrateSchemas(db, [PUBLIC_SCHEMA, ...names.map(schemaOf)]);
    created = await ensureListResources(db, options.listResources ?? [], { refreshViews: false });
    if (options.declared) {
      const declared = options.declared;
      for (const [account, resources] of await accountResources(db)) {
        if (!names.includes(account)) continue;
        const own = resources.filter((name) => !declared.includes(name));
        if (own.length === 0) continue;
        created.push(
          ...(await ensureListResources(db, own, {
            refreshViews: false,
            schema: schemaOf(account),
          })),
        );
      }
    }
  } catch (error) {
    if (!(error instanceof SchemaMigrationError)) throw error;
    const failed = names.find((name) => schemaOf(name) === error.schema);
    const leaveOut = new Map<string, string>();
    if (failed !== undefined) {
      leaveOut.set(
        failed,
        `the migration of its schema failed; fix it and run 'hiresync migrate' again`,
      );
    }
    let warnings: string[];
    try {
      // Without a list, the views cover the accounts registered when they are built.
      ({ warnings } = await refreshAllAccountsViews(db, accounts, leaveOut));
    } catch (refresh) {
      warnings = [
        `the all_accounts views could not be rebuilt (${coerceError(refresh).message}); run 'hiresync migrate' again`,
      ];
    }
    throw new SchemaMigrationError(error.schema, [control, ...error.schemas], error.cause, {
      warnings,
      message: error.message,
    });
  }
  // Without a list, the views cover the accounts registered when they are built.
  const { warnings } = await refreshAllAccountsViews(db, accounts);
  return { schemas: [control, ...schemas], warnings, listResourceTables: created };
}
