import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT, schemaOf } from '../../account-name.js';
import { coerceError } from '../../errors.js';
import { ensureAccountAnalytics } from '../analytics/analytics-schemas.js';
import { PUBLIC_SCHEMA } from '../database.js';
import { registeredAccounts } from '../layout/all-accounts-members.js';
import { createListResourceTables, listResourcesIn } from '../layout/list-resource-tables.js';
import {
  CONTROL_MIGRATIONS_FOLDER,
  CONTROL_SCHEMA,
  type MigrateOutcome,
  migrateToLatest,
} from '../layout/migrate.js';
import { resourcesOfRegisteredAccounts } from '../layout/registered-resources.js';
import {
  foreignCreatorWarnings,
  refuseForeignCreatorsOfControl,
} from '../layout/schema-creators.js';
import { migrateSchemas, SchemaMigrationError } from '../layout/schema-layout.js';
import { LIST_RESOURCES_LOCK } from '../layout/shared-list-tables.js';
import { LOCK_SPACE } from '../lock-keys.js';
import type { Database } from '../tables.js';
import { rebuildViews, refreshAllAccountsViews } from './all-accounts-refresh.js';

export { migrateSchema, migrateSchemas, SchemaMigrationError } from '../layout/schema-layout.js';

/** Brings hiresync's control schema (`hiresync.accounts`, the shared tables) up to date. */
export function migrateControl(db: Kysely<Database>): Promise<MigrateOutcome> {
  return migrateToLatest(db, { schema: CONTROL_SCHEMA, folder: CONTROL_MIGRATIONS_FOLDER });
}

/** Options of {@link migrateAll}. */
export interface MigrateAllOptions {
  /**
   * List resources (HIRESYNC_RESOURCES beyond the declared ones) whose views
   * every schema must hold, besides those public holds already.
   */
  listResources?: readonly string[];
  /**
   * The declared resources (tables of their own, made by migrations): with
   * it, each account's list resources its settings name beyond these get
   * their views in its schema (and only there). Default: not looked at.
   */
  declared?: readonly string[];
}

/** Options of {@link ensureListResources}. */
export interface EnsureListResourcesOptions {
  /** Rebuild the all_accounts views when a list resource's shared tables were made. Default true (false: the caller rebuilds them). */
  refreshViews?: boolean;
  /**
   * Only this schema: the list resources one account's settings name beyond
   * HIRESYNC_RESOURCES have their views in its schema only. Default every schema.
   */
  schema?: string;
}

/**
 * Makes every schema (public and each registered account's; with `schema`,
 * that one alone) hold the views of each list resource in `names` and of
 * each one public holds already, over its shared tables (made once, see
 * createListResourceTables), creating only what is missing; rebuilds the
 * all_accounts views when shared tables were made (unless `refreshViews` is
 * false: the caller rebuilds them). One transaction under a
 * transaction-level advisory lock: concurrent calls from several processes
 * create each relation once. Returns the `schema.name` pairs created.
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
    const { rows: ready } = await sql<{ schema: string }>`
      select schema from hiresync.schema_layouts where schema = any(${schemas}::text[])`.execute(
      trx,
    );
    const made = new Set(ready.map((r) => r.schema));
    const { rows: present } = await sql<{ schema: string; name: string }>`
      select n.nspname as schema, substring(c.relname from '^(.*)_data$') as name
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = any(${schemas}::text[]) and c.relkind in ('r', 'v')
        and c.relname = any(${wanted.map((w) => `${w}_data`)}::text[])`.execute(trx);
    const have = new Set(present.map((r) => `${r.schema}.${r.name}`));
    const created: string[] = [];
    let shared = false;
    for (const schema of schemas) {
      // A schema not made yet (or of the earlier layout) gets them when migrated.
      if (!made.has(schema)) continue;
      for (const name of wanted) {
        if (have.has(`${schema}.${name}`)) continue;
        shared = (await createListResourceTables(trx, schema, name)) || shared;
        created.push(`${schema}.${name}`);
      }
    }
    if (shared && refreshViews) await rebuildViews(trx);
    return created;
  });
}

/** What {@link migrateAll} did. */
export interface MigrateAllOutcome {
  /** One entry per schema: `hiresync`, `public`, then each account's, in that order. */
  schemas: MigrateOutcome[];
  /** What the moves and the `all_accounts` views left to the operator (see {@link refreshAllAccountsViews}). */
  warnings: string[];
  /** The list resources whose views were made, as `schema.name` (see {@link ensureListResources}). */
  listResourceTables: string[];
  /** The analytics schemas built or rebuilt (see ensureAccountAnalytics). */
  analyticsSchemas: string[];
}

/**
 * Brings everything up to date: the control schema (with the shared
 * tables), `public`, then the schema of each account in `accounts` (default:
 * every registered account, read after the control schema is migrated),
 * the list resources' views, every account's analytics views (see
 * ensureAccountAnalytics), then the `all_accounts` views. Safe to run
 * concurrently (each step has its lock). A schema already at the layout is
 * not touched: an up-to-date deployment costs a few statements whatever the
 * number of accounts.
 *
 * The views are rebuilt whether or not the schemas' migrations succeed: when
 * one fails, a {@link SchemaMigrationError} carrying the warnings is thrown.
 *
 * Refuses, before anything, when another role may create objects in schema
 * hiresync; warns for each other schema it writes where one may (see
 * schema-creators.ts).
 */
export async function migrateAll(
  db: Kysely<Database>,
  accounts?: readonly string[],
  options: MigrateAllOptions = {},
): Promise<MigrateAllOutcome> {
  await refuseForeignCreatorsOfControl(db);
  const control = await migrateControl(db);
  const names = accounts ?? (await registeredAccounts(db));
  const moved: string[] = (await foreignCreatorWarnings(db, names)).map((w) => w.message);
  const warn = (warning: string) => moved.push(warning);
  let schemas: MigrateOutcome[];
  let created: string[];
  let analytics: string[];
  try {
    schemas = await migrateSchemas(db, [PUBLIC_SCHEMA, ...names.map(schemaOf)], { warn });
    created = await ensureListResources(db, options.listResources ?? [], { refreshViews: false });
    if (options.declared) {
      const declared = options.declared;
      for (const [account, resources] of await resourcesOfRegisteredAccounts(db)) {
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
    // Every account's analytics views (default's too), once its schema is ready.
    const built = await ensureAccountAnalytics(db, [DEFAULT_ACCOUNT, ...names]);
    analytics = built.schemas;
    moved.push(...built.warnings);
  } catch (error) {
    if (!(error instanceof SchemaMigrationError)) throw error;
    // The all_accounts views read shared storage: the rows of a schema still
    // in tables of its own are not in them until it moves.
    const { rows: behind } = await sql<{ schema: string }>`
      select n.nspname as schema from pg_namespace n
      where n.nspname = any(${[PUBLIC_SCHEMA, ...names.map(schemaOf)]}::text[])
        and (select relkind from pg_class where oid = to_regclass(quote_ident(n.nspname) || '.tracking_links')) = 'r'
      order by 1`.execute(db);
    if (behind.length > 0) {
      moved.push(
        `the all_accounts views leave out the rows of ${behind.map((b) => b.schema).join(', ')}, still in tables of their own (the earlier layout), until 'hiresync migrate' moves them to shared storage`,
      );
    }
    let warnings: string[];
    try {
      ({ warnings } = await refreshAllAccountsViews(db));
    } catch (refresh) {
      warnings = [
        `the all_accounts views could not be rebuilt (${coerceError(refresh).message}); run 'hiresync migrate' again`,
      ];
    }
    throw new SchemaMigrationError(error.schema, [control, ...error.schemas], error.cause, {
      warnings: [...moved, ...warnings],
      message: error.message,
    });
  }
  const { warnings } = await refreshAllAccountsViews(db);
  return {
    schemas: [control, ...schemas],
    warnings: [...moved, ...warnings],
    listResourceTables: created,
    analyticsSchemas: analytics,
  };
}
