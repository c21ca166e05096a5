import { type Kysely, sql, type Transaction } from 'kysely';
import { accountNameProblem, accountOfSchema } from '../../account-name.js';
import { coerceError, HiresyncError } from '../../errors.js';
import { PUBLIC_SCHEMA } from '../database.js';
import { LOCK_SPACE, lockKey } from '../lock-keys.js';
import type { Database } from '../tables.js';
import { claimAccountSchema } from './account-schema-owner.js';
import {
  accountViewsText,
  layoutEntry,
  layoutOf,
  recordLayout,
  registerFirstTypedViews,
  type SharedTable,
  sharedTables,
} from './account-views.js';
import { DERIVED_VIEWS_ENTRY, derivedViewsText, derivedViewsUpgradeText } from './derived-views.js';
import { convertToSharedStorage } from './legacy-upgrade.js';
import { type MigrateOutcome, migrateToLatest } from './migrate.js';
import { LIST_RESOURCE_MARKER, listResourceTable } from './shared-list-tables.js';

type Db = Kysely<Database> | Transaction<Database>;

/** What an account schema's outcome names when its views were made or made again. */
export const VIEWS_MADE = 'shared storage views';

/** What a schema of the earlier layout's outcome names once its tables moved to shared storage. */
export const MOVED_TO_SHARED = 'moved to shared storage';

/**
 * The shared tables every account schema has a view of: all but the list
 * resources' (whose views a schema holds only for the list resources it
 * syncs, see ensureListResources).
 */
export async function coreTables(db: Db): Promise<SharedTable[]> {
  const tables = await sharedTables(db);
  const lists = new Set(
    tables
      .filter((t) => t.comment?.startsWith(`${LIST_RESOURCE_MARKER} `))
      .flatMap((t) => {
        const name = t.table.replace(/_data$/, '');
        return [listResourceTable(name), `${name}_history`];
      }),
  );
  return tables.filter((t) => !lists.has(t.table));
}

/** Second key of the lock that serialises the making of one schema's views. */
function layoutLock(schema: string): number {
  return lockKey(`schema layout ${schema}`);
}

/** Options of {@link migrateSchema}. */
export interface MigrateSchemaOptions {
  /** Where warnings go (an index of others that went with a moved table). */
  warn?: (warning: string) => void;
}

/**
 * Brings `schema` (`public` for `default`, or an account's) to shared
 * storage's layout, creating it if need be (an account's schema created so
 * is marked as hiresync's, see {@link claimAccountSchema}):
 *
 * - a schema of the earlier layout (its own tables, recorded in its
 *   `kysely_migration`) first gets the warehouse migrations it lacks, then
 *   its tables move to shared storage (see convertToSharedStorage);
 * - a new schema gets the views of its account's rows, `tracking_links_flat`
 *   and its first typed views: a few statements in one round trip, whatever
 *   the number of accounts;
 * - a schema whose views were made over other columns (a release changed a
 *   shared table) gets them made again in place.
 *
 * Each in one transaction, under a lock of the schema's, and recorded in
 * hiresync.schema_layouts; a schema already at the layout is not touched.
 */
export async function migrateSchema(
  db: Kysely<Database>,
  schema: string,
  { warn, tables: given }: MigrateSchemaOptions & { tables?: readonly SharedTable[] } = {},
): Promise<MigrateOutcome> {
  const account = accountOfSchema(schema);
  const tracking = `"${schema}".tracking_links`;
  const { rows: found } = await sql<{ exists: boolean; legacy: boolean }>`
    select to_regnamespace(${schema}) is not null as exists,
      coalesce(to_regclass(${`"${schema}".kysely_migration`}) is not null
        and (select relkind from pg_class where oid = to_regclass(${tracking})) = 'r', false) as legacy`.execute(
    db,
  );
  if (!found[0]?.exists && schema !== PUBLIC_SCHEMA && accountNameProblem(schema) === undefined) {
    await claimAccountSchema(db, schema);
  }
  const applied: string[] = [];
  // The earlier layout: its migrations first, as they always ran.
  if (found[0]?.legacy) applied.push(...(await migrateToLatest(db, { schema })).applied);
  const tables = given ?? (await coreTables(db));
  const layout = schemaLayout(tables);
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${layoutLock(schema)}::int)`.execute(
      trx,
    );
    // Read once the lock is held (a statement's snapshot is taken before it
    // waits): what another migrate committed meanwhile is seen.
    const { rows: state } = await sql<{ recorded: string | null; kind: string | null }>`
      select (select layout from hiresync.schema_layouts where schema = ${schema}) as recorded,
        (select relkind::text from pg_class where oid = to_regclass(${tracking})) as kind`.execute(
      trx,
    );
    const kind = state[0]?.kind ?? null;
    // A layout recorded for views that are gone (a schema dropped by hand) is no layout.
    const recorded = kind === null ? null : (state[0]?.recorded ?? null);
    if (recorded === layout) return { schema, applied };
    const before = new Set((recorded ?? '').split(';'));
    if (kind === 'r') {
      const conversion = await convertToSharedStorage(trx, schema, account);
      for (const warning of conversion.warnings) warn?.(warning);
      applied.push(MOVED_TO_SHARED);
    } else {
      // Only the views of tables whose columns changed since they were made:
      // a release that adds a column costs one view per account.
      const changed = tables.filter((t) => !before.has(layoutEntry(t)));
      if (changed.length > 0) {
        const existing =
          kind === null
            ? new Map<string, string[]>()
            : await viewColumnsIn(
                trx,
                schema,
                changed.map((t) => t.table),
              );
        await sql.raw(accountViewsText(schema, account, changed, existing)).execute(trx);
      }
      if (kind === null) {
        await registerFirstTypedViews(trx, account);
        await sql.raw(derivedViewsText(schema)).execute(trx);
      }
      applied.push(VIEWS_MADE);
    }
    // Views of an earlier release's derived views: brought to today's in place.
    if (kind !== null && !before.has(DERIVED_VIEWS_ENTRY)) {
      await sql.raw(derivedViewsUpgradeText(schema)).execute(trx);
    }
    await recordLayout(trx, schema, account, layout);
    return { schema, applied };
  });
}

/**
 * A schema of {@link migrateSchemas} (or migrateAll) failed to migrate: its
 * pending migrations were rolled back, and the schemas after it were not
 * tried. The message is the failure's; `cause` the error thrown.
 */
export class SchemaMigrationError extends HiresyncError {
  /** The schema whose migration failed. */
  readonly schema: string;
  /** The schemas brought up to date (or found so) before it, in order. */
  readonly schemas: MigrateOutcome[];
  /** Warnings of what ran before (see migrateAll). */
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
 * Brings each of `schemas` (`public` or accounts' schemas) to the layout, in
 * order (see {@link migrateSchema}). Which are at it already is one query,
 * so an up-to-date deployment costs no work per schema. Stops at the first
 * that fails, throwing a {@link SchemaMigrationError}.
 */
export async function migrateSchemas(
  db: Kysely<Database>,
  schemas: readonly string[],
  options: MigrateSchemaOptions = {},
): Promise<MigrateOutcome[]> {
  const tables = await coreTables(db);
  const layout = schemaLayout(tables);
  const { rows } = await sql<{ schema: string }>`
    select schema from hiresync.schema_layouts
    where schema = any(${[...schemas]}::text[]) and layout = ${layout}
      and to_regclass(quote_ident(schema) || '.tracking_links') is not null`.execute(db);
  const current = new Set(rows.map((r) => r.schema));
  const outcomes: MigrateOutcome[] = [];
  for (const schema of schemas) {
    if (current.has(schema)) {
      outcomes.push({ schema, applied: [] });
      continue;
    }
    try {
      outcomes.push(await migrateSchema(db, schema, { ...options, tables }));
    } catch (error) {
      throw new SchemaMigrationError(schema, outcomes, error);
    }
  }
  return outcomes;
}

/** The columns of `schema`'s views named `views`, in order, by view. */
async function viewColumnsIn(
  db: Db,
  schema: string,
  views: readonly string[],
): Promise<Map<string, string[]>> {
  // By oid (to_regclass), through pg_attribute's index: a scan of pg_class,
  // which holds every account's views, would cost each schema more as
  // accounts are added.
  const names = views.map((view) => `"${schema}"."${view}"`);
  const { rows } = await sql<{ view: string; name: string }>`
    select c.relname as view, a.attname as name
    from unnest(${names}::text[]) as v(name)
    join pg_class c on c.oid = to_regclass(v.name) and c.relkind = 'v'
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    order by c.relname, a.attnum`.execute(db);
  const columns = new Map<string, string[]>();
  for (const { view, name } of rows) columns.set(view, [...(columns.get(view) ?? []), name]);
  return columns;
}

/**
 * What a schema's views are recorded at (hiresync.schema_layouts.layout):
 * the shared tables' layout (see layoutOf) and the version of the derived
 * views (DERIVED_VIEWS_ENTRY).
 */
function schemaLayout(tables: readonly SharedTable[]): string {
  return `${layoutOf(tables)};${DERIVED_VIEWS_ENTRY}`;
}
