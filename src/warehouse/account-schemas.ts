import { type Kysely, sql, type Transaction } from 'kysely';
import { accountNameProblem, DEFAULT_ACCOUNT, schemaOf } from '../accounts/account.js';
import { coerceError, HiresyncError } from '../errors.js';
import { PUBLIC_SCHEMA } from './database.js';
import { createListResourceTables, listResourcesIn } from './list-resource-tables.js';
import {
  ALL_ACCOUNTS_LOCK,
  ALL_ACCOUNTS_SCHEMA,
  CONTROL_MIGRATIONS_FOLDER,
  CONTROL_SCHEMA,
  type MigrateOutcome,
  migrateToLatest,
  migrationNames,
} from './migrate.js';
import { LOCK_SPACE, lockKey } from './resource-lock.js';
import type { Database } from './schema.js';
import { dependentsOutside } from './schema-dependents.js';
import {
  blockMessage,
  type ColumnType,
  columnNamesOf,
  columnSelect,
  noteTypedViewBlock,
  PG_TYPES,
  type TypedColumn,
  widen,
} from './typed-view.js';
import {
  dependentsOf,
  emptyView,
  placeView,
  type ViewColumn,
  viewColumns,
} from './view-placement.js';

export { ALL_ACCOUNTS_SCHEMA, CONTROL_SCHEMA, type MigrateOutcome } from './migrate.js';

/**
 * The analysts' relations that schema `all_accounts` unions across accounts,
 * one view each, named as in the account schemas.
 */
export const ALL_ACCOUNTS_VIEWS: readonly string[] = [
  'tracking_links_flat',
  'jobs',
  'job_posts',
  'sync_runs',
  'rejected_records',
  'tracking_links_history',
  'jobs_history',
  'job_posts_history',
];

/**
 * The comment that marks a schema as an account schema of hiresync's own: set
 * on the schemas hiresync creates for accounts, and read by {@link schemaOwner}.
 */
export function accountSchemaComment(schema: string): string {
  return `hiresync account schema: the tables of account ${schema}, built by hiresync's migrations. hiresync owns this schema ('hiresync accounts remove ${schema} --drop-data' drops it).`;
}

/**
 * Creates `schema` when it does not exist and marks it as an account schema
 * of hiresync's ({@link accountSchemaComment}), both in one transaction: no
 * schema of hiresync's is ever seen unmarked. A schema that exists already is
 * taken only when {@link schemaOwner} finds it hiresync's (one hiresync built
 * before it marked its schemas gets the mark now); any other, even an empty
 * one, is refused with a {@link ForeignSchemaError}, marking nothing.
 */
export async function claimAccountSchema(db: Kysely<Database>, schema: string): Promise<void> {
  const problem = accountNameProblem(schema);
  if (problem) throw new Error(`refusing to claim schema ${JSON.stringify(schema)}: ${problem}`);
  const mark = sql`comment on schema ${sql.id(schema)} is ${sql.lit(accountSchemaComment(schema))}`;
  try {
    await db.transaction().execute(async (trx) => {
      await sql`create schema ${sql.id(schema)}`.execute(trx);
      await mark.execute(trx);
    });
    return;
  } catch (error) {
    // Another's, or made by a concurrent claim: judged below.
    const code = (error as { code?: string }).code;
    if (code !== DUPLICATE_SCHEMA && code !== UNIQUE_VIOLATION) throw error;
  }
  if ((await schemaOwner(db, schema)) !== 'hiresync') throw new ForeignSchemaError(schema);
  const { rows } = await sql<{ comment: string | null }>`
    select obj_description(oid, 'pg_namespace') as comment
    from pg_namespace where nspname = ${schema}`.execute(db);
  if (rows[0]?.comment != null) return;
  try {
    await mark.execute(db);
  } catch (error) {
    // Its migrations, once applied, still tell it as hiresync's.
    if ((error as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw error;
  }
}

const DUPLICATE_SCHEMA = '42P06';
const UNIQUE_VIOLATION = '23505';

/**
 * A schema of an account's name exists and hiresync did not create it: it
 * carries neither hiresync's mark nor only hiresync's migrations. hiresync
 * neither builds an account's tables in it nor drops it, even when it is empty
 * (another application's comment or grants may be all it holds yet).
 */
export class ForeignSchemaError extends HiresyncError {
  readonly schema: string;
  constructor(schema: string) {
    super(
      `schema ${schema} already exists and hiresync did not create it (it carries no hiresync account-schema mark), so hiresync does not take it, even empty: choose another name for the account, or, if that schema is unused, drop it ('drop schema ${schema}') and add the account again`,
    );
    this.schema = schema;
  }
}

const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Brings `schema` (`public`, or an account's) up to date with the warehouse
 * migrations, creating it if need be (an account's schema created so is
 * marked as hiresync's, see {@link claimAccountSchema}); see {@link migrateToLatest}.
 */
export async function migrateSchema(db: Kysely<Database>, schema: string): Promise<MigrateOutcome> {
  if (schema !== PUBLIC_SCHEMA && accountNameProblem(schema) === undefined) {
    const { rows } = await sql<{ exists: boolean }>`
      select to_regnamespace(${schema}) is not null as exists`.execute(db);
    if (!rows[0]?.exists) await claimAccountSchema(db, schema);
  }
  return migrateToLatest(db, { schema });
}

/** Brings hiresync's control schema (`hiresync.accounts`) up to date. */
export function migrateControl(db: Kysely<Database>): Promise<MigrateOutcome> {
  return migrateToLatest(db, { schema: CONTROL_SCHEMA, folder: CONTROL_MIGRATIONS_FOLDER });
}

/** Names of the registered accounts (every state), sorted; none before the control schema exists. */
export async function registeredAccounts(db: Kysely<Database>): Promise<string[]> {
  // Looked up rather than caught: a failed statement would abort the caller's transaction.
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.accounts') is not null as present`.execute(db);
  if (!found[0]?.present) return [];
  const rows = await db.selectFrom('hiresync.accounts').select('name').orderBy('name').execute();
  return rows.map((r) => r.name);
}

/** Options of {@link migrateAll}. */
export interface MigrateAllOptions {
  /**
   * List resources (HIRESYNC_RESOURCES beyond the declared ones) whose tables
   * every schema must hold, besides those public holds already.
   */
  listResources?: readonly string[];
}

/**
 * Makes every schema (public and each registered account's) hold the tables
 * and view of each list resource in `names` and of each one public holds
 * already (see createListResourceTables), creating only what is missing, then
 * rebuilds the all_accounts views when anything was created (unless
 * `refreshViews` is false: the caller rebuilds them). One transaction under a
 * transaction-level advisory lock: concurrent calls from several processes
 * create each table once. Returns the `schema.name` pairs created.
 */
export async function ensureListResources(
  db: Kysely<Database>,
  names: readonly string[],
  { refreshViews = true }: { refreshViews?: boolean } = {},
): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${LIST_RESOURCES_LOCK}::int)`.execute(
      trx,
    );
    const wanted = [...new Set([...names, ...(await listResourcesIn(trx, PUBLIC_SCHEMA))])];
    if (wanted.length === 0) return [];
    const schemas = [PUBLIC_SCHEMA, ...(await registeredAccounts(trx)).map(schemaOf)];
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
    if (created.length > 0 && refreshViews) await rebuildViews(trx, undefined);
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

/**
 * Whose schema `schema` is:
 * - `absent` when it does not exist: hiresync may create it for an account;
 * - `hiresync` when it is an account schema of hiresync's: marked so by its
 *   comment ({@link accountSchemaComment}), or (schemas hiresync built before
 *   it marked them) its own `kysely_migration` lists only hiresync's warehouse
 *   migrations, at least one. So is one kept by `remove` without
 *   --drop-data, which an `add` of the same name takes back;
 * - `other` for any other schema, even an empty one (another application may
 *   have made it, with its comment or grants, for tables yet to come), and
 *   whether or not another application keeps its own Kysely migrations there:
 *   hiresync must neither build its tables in it nor drop it.
 */
export async function schemaOwner(
  db: Kysely<Database>,
  schema: string,
): Promise<'absent' | 'hiresync' | 'other'> {
  const { rows } = await sql<{ comment: string | null; tracked: boolean }>`
    select obj_description(n.oid, 'pg_namespace') as comment,
           exists (select 1 from pg_class c
                   join pg_attribute a on a.attrelid = c.oid and a.attname = 'name'
                                      and not a.attisdropped
                   where c.relnamespace = n.oid and c.relname = 'kysely_migration'
                     and c.relkind in ('r', 'p') and has_table_privilege(c.oid, 'select')) as tracked
    from pg_namespace n where nspname = ${schema}`.execute(db);
  const row = rows[0];
  if (!row) return 'absent';
  if (row.comment === accountSchemaComment(schema)) return 'hiresync';
  if (!row.tracked) return 'other';
  const known = new Set(await migrationNames());
  const { rows: applied } = await sql<{ name: string | null }>`
    select name::text as name from ${sql.id(schema, 'kysely_migration')}`.execute(db);
  return applied.length > 0 && applied.every((r) => r.name !== null && known.has(r.name))
    ? 'hiresync'
    : 'other';
}

interface Column {
  name: string;
  type: string;
  comment: string | null;
}

/** Columns of `relations` in `schemas`, by schema then relation, in column order. */
async function columnsOf(
  db: Kysely<Database>,
  schemas: readonly string[],
  relations: readonly string[],
): Promise<Map<string, Map<string, Column[]>>> {
  const { rows } = await sql<Column & { schema: string; relation: string }>`
    select n.nspname as schema, c.relname as relation, a.attname as name,
           format_type(a.atttypid, a.atttypmod) as type, col_description(c.oid, a.attnum) as comment
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = any(${[...schemas]}::text[]) and c.relname = any(${[...relations]}::text[])
      and c.relkind in ('r', 'p', 'v', 'm')
    order by n.nspname, c.relname, a.attnum`.execute(db);
  const bySchema = new Map<string, Map<string, Column[]>>();
  for (const { schema, relation, ...column } of rows) {
    const byRelation = bySchema.get(schema) ?? new Map<string, Column[]>();
    bySchema.set(schema, byRelation);
    byRelation.set(relation, [...(byRelation.get(relation) ?? []), column]);
  }
  return bySchema;
}

const ACCOUNT_COLUMN: Column = {
  name: 'account',
  type: 'text',
  comment: "The account the row belongs to: 'default' (schema public) or a registered account.",
};

/** Why `columns` (an account's copy of a relation) cannot stand beside `wanted` (public's), or undefined. */
function mismatch(
  wanted: readonly Column[],
  columns: readonly Column[] | undefined,
): string | undefined {
  if (!columns) return 'has no such relation';
  const have = new Map(columns.map((c) => [c.name, c.type]));
  const missing = wanted.filter((c) => have.get(c.name) !== c.type).map((c) => c.name);
  return missing.length === 0
    ? undefined
    : `lacks column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (or holds another type)`;
}

/**
 * Rebuilds schema `all_accounts`: for each relation of {@link ALL_ACCOUNTS_VIEWS},
 * a view `all_accounts.<relation>` that unions `default`'s (schema public) and
 * each account's of `accounts` (default: the registered accounts, of every
 * state, read once the lock is held, so concurrent adds and removes never
 * leave an account out; a disabled account's data stays readable), with a
 * first column `account`. The column
 * list is public's; an account whose schema lacks one of them (another
 * migration level) is left out of that view and named in the returned
 * warnings, instead of failing the whole refresh.
 *
 * In one transaction, under a transaction-level advisory lock shared with the
 * migrations (which drop these views first): a view keeps its identity
 * (`create or replace`) while its columns stay the same, so objects built on it
 * survive an account being added or removed.
 *
 * `leaveOut` names accounts to leave out of every view, each with the reason
 * given in its warning (a schema whose migration failed).
 */
export function refreshAllAccountsViews(
  db: Kysely<Database>,
  accounts?: readonly string[],
  leaveOut?: ReadonlyMap<string, string>,
): Promise<{ warnings: string[] }> {
  return db.transaction().execute((trx) => rebuildViews(trx, accounts, { leaveOut }));
}

/** The body of {@link refreshAllAccountsViews}, in the caller's transaction. */
async function rebuildViews(
  trx: Transaction<Database>,
  accounts: readonly string[] | undefined,
  { without, leaveOut }: { without?: string; leaveOut?: ReadonlyMap<string, string> } = {},
): Promise<{ warnings: string[] }> {
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${ALL_ACCOUNTS_LOCK}::int)`.execute(
    trx,
  );
  const names = accounts ?? (await registeredAccounts(trx));
  if (without !== undefined && names.includes(without)) {
    throw new Error(`refusing to drop schema ${without}: account ${without} is still registered`);
  }
  const warnings: string[] = [];
  const members = [
    { account: DEFAULT_ACCOUNT, schema: PUBLIC_SCHEMA },
    ...[...new Set(names)]
      .sort()
      .filter((account) => {
        const why = leaveOut?.get(account);
        if (why !== undefined) {
          warnings.push(`the ${ALL_ACCOUNTS_SCHEMA} views leave out account ${account}: ${why}`);
        }
        return why === undefined;
      })
      .map((account) => {
        const problem = accountNameProblem(account);
        if (problem) throw new Error(problem);
        return { account, schema: schemaOf(account) };
      }),
  ];
  await sql`create schema if not exists ${sql.id(ALL_ACCOUNTS_SCHEMA)}`.execute(trx);
  await sql`comment on schema ${sql.id(ALL_ACCOUNTS_SCHEMA)} is ${sql.lit(
    "hiresync's views across accounts: each unions the relation of the same name of every account (default from schema public), with a first column account. Rebuilt by hiresync migrate and accounts add/remove; hiresync owns this schema.",
  )}`.execute(trx);
  const relations = await unionRelations(trx);
  const columns = await columnsOf(
    trx,
    [ALL_ACCOUNTS_SCHEMA, ...members.map((m) => m.schema)],
    relations,
  );
  for (const relation of relations) {
    const view = sql.id(ALL_ACCOUNTS_SCHEMA, relation);
    const target = { schema: ALL_ACCOUNTS_SCHEMA, name: relation };
    const wanted = columns.get(PUBLIC_SCHEMA)?.get(relation);
    if (!wanted) {
      warnings.push(
        `${ALL_ACCOUNTS_SCHEMA}.${relation} not built: schema public has no ${relation} (run 'hiresync migrate')`,
      );
      // Objects of others built on it are kept, over an empty view.
      if ((await dependentsOf(trx, target)).length > 0) await emptyView(trx, target);
      else await sql`drop view if exists ${view}`.execute(trx);
      continue;
    }
    const parts: Array<{ account: string; schema: string; have: Map<string, string> }> = [];
    for (const { account, schema } of members) {
      const own = columns.get(schema)?.get(relation);
      const problem = schema === PUBLIC_SCHEMA ? undefined : mismatch(wanted, own);
      if (problem) {
        warnings.push(
          `${ALL_ACCOUNTS_SCHEMA}.${relation} leaves out account ${account}: its ${relation} ${problem} (run 'hiresync migrate')`,
        );
        continue;
      }
      parts.push({ account, schema, have: new Map((own ?? []).map((c) => [c.name, c.type])) });
    }
    const unionColumns = [ACCOUNT_COLUMN, ...wanted];
    // Kept in place when objects of others depend on it (see placeView):
    // columns a migration added are appended, one whose type changed keeps its old type.
    const placed = await placeView(trx, target, unionColumns, (layout) =>
      sql.join(
        parts.map(({ account, schema, have }) => {
          const list = layout.map((c) =>
            c.name === ACCOUNT_COLUMN.name
              ? sql`${sql.lit(account)}::text as account`
              : have.get(c.name) === c.type
                ? sql.id(c.name)
                : sql`null::${sql.raw(c.type)} as ${sql.id(c.name)}`,
          );
          return sql`select ${sql.join(list)} from ${sql.id(schema, relation)}`;
        }),
        sql` union all `,
      ),
    );
    if (placed.kept) {
      warnings.push(
        `${ALL_ACCOUNTS_SCHEMA}.${relation} keeps column${placed.kept.conflicts.length > 1 ? 's' : ''} ${placed.kept.conflicts.join(', ')} at the old type, null, because ${placed.kept.dependents.join(', ')} depend${placed.kept.dependents.length === 1 ? 's' : ''} on it: drop ${placed.kept.dependents.join(', ')}, run 'hiresync migrate', then create ${placed.kept.dependents.length === 1 ? 'it' : 'them'} again`,
      );
    }
    await sql`comment on view ${view} is ${sql.lit(
      `${relation} of every account, one after another (default's from schema public, each registered account's from the schema of its name; disabled accounts included), with the account first. Rebuilt by hiresync migrate and accounts add/remove.`,
    )}`.execute(trx);
    const notes = new Map(unionColumns.map((c) => [c.name, c.comment]));
    for (const column of placed.layout) {
      const note =
        notes.get(column.name) ?? `${column.name} of ${relation}, as in each account's schema.`;
      await sql`comment on column ${sql.id(ALL_ACCOUNTS_SCHEMA, relation, column.name)} is ${sql.lit(
        note,
      )}`.execute(trx);
    }
  }
  for (const view of await typedViewsOf(trx)) {
    const { warning } = await rebuildTypedUnion(trx, view);
    if (warning) warnings.push(warning);
  }
  return { warnings };
}

/**
 * Builds `all_accounts.<view>` over the typed view `view` (jobs_flat, …) of
 * `default` and every registered account whose schema has it. Typed views
 * follow each account's data, so their columns differ: the union has
 * `account`, `id`, a column for every key any account's view has (named as
 * in every account, see columnNamesOf; sorted; null where an account lacks
 * the key), then `deleted_at`. A column takes the widest type of the
 * accounts' (see widen: bigint and numeric give numeric, date and
 * timestamptz timestamptz, text only when kinds conflict), and each account's
 * rows are read from its table (`data`) at that type, so the union depends on
 * no account's view. Objects of others built on the union are kept (see
 * placeView): new columns are appended; a column that must widen keeps its
 * type, and `warning` (and hiresync.typed_view_blocks) say so and what
 * resolves it. Runs in the caller's transaction; takes the views' lock.
 */
export async function rebuildTypedUnion(
  trx: Transaction<Database>,
  view: string,
): Promise<{ warning?: string }> {
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${ALL_ACCOUNTS_LOCK}::int)`.execute(
    trx,
  );
  const members = [
    { account: DEFAULT_ACCOUNT, schema: PUBLIC_SCHEMA },
    ...(await registeredAccounts(trx)).map((account) => ({ account, schema: schemaOf(account) })),
  ];
  const present: Array<{ account: string; schema: string; table: string; columns: TypedColumn[] }> =
    [];
  for (const { account, schema } of members) {
    const { rows: found } = await sql<{ present: boolean }>`
      select to_regclass(${`${schema}.typed_views`}) is not null
        and to_regclass(${`${schema}.typed_view_columns`}) is not null as present`.execute(trx);
    if (!found[0]?.present) continue;
    const { rows: made } = await sql<{ table: string }>`
      select source_table as table from ${sql.id(schema, 'typed_views')}
      where view = ${view} and to_regclass(${schema} || '.' || source_table) is not null`.execute(
      trx,
    );
    const table = made[0]?.table;
    // A view not made in this schema yet (no full run of its resource).
    if (table === undefined || (await viewColumns(trx, { schema, name: view })) === undefined) {
      continue;
    }
    const { rows: columns } = await sql<TypedColumn>`
      select key, column_name, type from ${sql.id(schema, 'typed_view_columns')}
      where view = ${view} order by key`.execute(trx);
    present.push({ account, schema, table, columns });
  }
  const target = { schema: ALL_ACCOUNTS_SCHEMA, name: view };
  await sql`create schema if not exists ${sql.id(ALL_ACCOUNTS_SCHEMA)}`.execute(trx);
  if (present.length === 0) {
    if ((await dependentsOf(trx, target)).length > 0) await emptyView(trx, target);
    else await sql`drop view if exists ${sql.id(ALL_ACCOUNTS_SCHEMA, view)}`.execute(trx);
    return {};
  }
  const names = await columnNamesOf(
    trx,
    view,
    present.flatMap((m) => m.columns.map((c) => c.key)),
  );
  const union = new Map<string, { key: string; type: ColumnType }>();
  for (const { columns } of present) {
    for (const column of columns) {
      const name = names.get(column.key) ?? column.column_name;
      const seen = union.get(name);
      union.set(name, {
        key: column.key,
        type: seen ? widen(seen.type, column.type) : column.type,
      });
    }
  }
  const ordered = [...union.keys()].sort();
  const desired: ViewColumn[] = [
    { name: ACCOUNT_COLUMN.name, type: 'text' },
    { name: 'id', type: 'bigint' },
    ...ordered.map((name) => ({ name, type: PG_TYPES[union.get(name)?.type ?? 'text'] })),
    { name: 'deleted_at', type: 'timestamp with time zone' },
  ];
  const select = (layout: readonly ViewColumn[]) =>
    sql.join(
      present.map(({ account, schema, table, columns }) => {
        const has = new Set(columns.map((c) => c.key));
        const list = layout.map((c) => {
          if (c.name === ACCOUNT_COLUMN.name) return sql`${sql.lit(account)}::text as account`;
          if (c.name === 'id' || c.name === 'deleted_at') return sql.id(c.name);
          const key = union.get(c.name)?.key;
          return sql`${columnSelect(key !== undefined && has.has(key) ? key : undefined, c.type)} as ${sql.id(c.name)}`;
        });
        return sql`select ${sql.join(list)} from ${sql.id(schema, table)}`;
      }),
      sql` union all `,
    );
  const placed = await placeView(trx, target, desired, select);
  await sql`comment on view ${sql.id(ALL_ACCOUNTS_SCHEMA, view)} is ${sql.lit(
    `${view} of every account, one after another, with the account first: a column for every key any account's view has, named the same in every account (null where an account's data never had the key), at the widest type of the accounts' (text only where kinds conflict), read from each account's records. Columns added while objects of others depended on it come last. Rebuilt when one of them changes, and by hiresync migrate and accounts add/remove.`,
  )}`.execute(trx);
  for (const column of placed.layout) {
    const key = union.get(column.name)?.key;
    const note =
      column.name === ACCOUNT_COLUMN.name
        ? (ACCOUNT_COLUMN.comment ?? '')
        : column.name === 'id'
          ? 'Record id (API).'
          : column.name === 'deleted_at'
            ? 'Set when a completed full sync no longer saw the record (soft delete).'
            : key === undefined
              ? 'No account has this key any more.'
              : `Key ${JSON.stringify(key)} of the record as sent (data -> ${JSON.stringify(key)}), as ${column.type}${column.type === 'timestamp with time zone' ? ' (without a UTC offset: read as UTC)' : ''}.`;
    await sql`comment on column ${sql.id(ALL_ACCOUNTS_SCHEMA, view, column.name)} is ${sql.lit(note)}`.execute(
      trx,
    );
  }
  if (!placed.kept) {
    await noteTypedViewBlock(trx, ALL_ACCOUNTS_SCHEMA, view);
    return {};
  }
  const message = blockMessage(
    `${ALL_ACCOUNTS_SCHEMA}.${view}`,
    placed.kept.conflicts,
    placed.kept.dependents,
    'hiresync migrate',
  );
  await noteTypedViewBlock(trx, ALL_ACCOUNTS_SCHEMA, view, {
    message,
    blocking: placed.kept.dependents,
  });
  return { warning: message };
}

/** The relations {@link rebuildViews} unions: ALL_ACCOUNTS_VIEWS and the list resources public holds, each with its view and its history. */
async function unionRelations(db: Kysely<Database>): Promise<string[]> {
  return [
    ...ALL_ACCOUNTS_VIEWS,
    ...(await listResourcesIn(db, PUBLIC_SCHEMA)).flatMap((name) => [name, `${name}_history`]),
  ];
}

/**
 * The names of the views of schema `all_accounts` that hiresync builds and
 * rebuilds with the registered accounts (what {@link refreshAllAccountsViews}
 * makes: {@link ALL_ACCOUNTS_VIEWS}, the list resources' views and histories,
 * the unions of public's typed views). Anything else there is someone else's.
 */
export async function allAccountsViewNames(db: Kysely<Database>): Promise<string[]> {
  return [...(await unionRelations(db)), ...(await typedViewsOf(db))];
}

/** The typed views of public (jobs_flat, job_posts_flat, each list resource's NAME_flat). */
async function typedViewsOf(trx: Kysely<Database>): Promise<string[]> {
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('public.typed_views') is not null as present`.execute(trx);
  if (!found[0]?.present) return [];
  const { rows } = await sql<{ view: string }>`
    select view from public.typed_views order by view`.execute(trx);
  return rows.map((r) => r.view);
}

/**
 * Drops an account's schema and everything in it. The `all_accounts` views are
 * rebuilt first, over `accounts` (default: the registered accounts, which must
 * no longer include this one), so nothing of hiresync's depends on it; both in
 * one transaction, under the views' lock. Refuses, changing nothing, a schema
 * that is not hiresync's (see {@link schemaOwner}), and one that objects of
 * other schemas depend on (see {@link DependentObjectsError}).
 */
export async function dropSchema(
  db: Kysely<Database>,
  schema: string,
  accounts?: readonly string[],
): Promise<{ warnings: string[] }> {
  const problem = accountNameProblem(schema);
  if (problem) throw new Error(`refusing to drop schema ${JSON.stringify(schema)}: ${problem}`);
  return db.transaction().execute(async (trx) => {
    const refreshed = await rebuildViews(trx, accounts, { without: schema });
    await dropAccountSchema(trx, schema, []);
    return refreshed;
  });
}

/**
 * Objects of other schemas depend on the schema `accounts remove --drop-data`
 * would drop (an analyst's view, a foreign key, ...): it is not dropped unless
 * they may go too (`--cascade`).
 */
export class DependentObjectsError extends HiresyncError {
  readonly schema: string;
  /** As {@link dependentsOutside} names them. */
  readonly objects: readonly string[];
  constructor(schema: string, objects: readonly string[]) {
    super(
      `schema ${schema} is not dropped: objects outside it depend on it: ${objects.join(', ')}; drop or change them first, or give --cascade to drop them with it`,
    );
    this.schema = schema;
    this.objects = objects;
  }
}

/** Options of {@link unregisterAccount}. */
export interface UnregisterAccountOptions {
  /** Deletes the account's registration (its row of hiresync.accounts), in the transaction given. */
  unregister: (trx: Transaction<Database>) => Promise<unknown>;
  /** Drop the account's schema too. */
  dropData: boolean;
  /**
   * With `dropData`: the objects of other schemas that may be dropped with it,
   * as {@link dependentsOutside} names them (what the operator was shown and
   * agreed to with --cascade). Any other dependent refuses the drop.
   */
  cascade?: readonly string[];
}

/**
 * The Postgres part of `accounts remove`, all or nothing in one transaction:
 * deletes the account's registration (`unregister`), rebuilds the
 * `all_accounts` views without it, and with `dropData` drops its schema, which
 * must be hiresync's and have no dependents outside it but those of `cascade`.
 * Any failure rolls all of it back. Returns the views' warnings and the
 * objects of other schemas dropped with the schema.
 */
export async function unregisterAccount(
  db: Kysely<Database>,
  schema: string,
  options: UnregisterAccountOptions,
): Promise<{ warnings: string[]; cascaded: string[] }> {
  const problem = accountNameProblem(schema);
  if (problem) throw new Error(`refusing to remove schema ${JSON.stringify(schema)}: ${problem}`);
  return db.transaction().execute(async (trx) => {
    await options.unregister(trx);
    if (!options.dropData) return { ...(await rebuildViews(trx, undefined)), cascaded: [] };
    const { warnings } = await rebuildViews(trx, undefined, { without: schema });
    const cascaded = await dropAccountSchema(trx, schema, options.cascade ?? []);
    return { warnings, cascaded };
  });
}

/** Locks, for the rest of `trx`, every table, view and foreign table of `schema` in access exclusive mode. */
async function lockRelations(trx: Transaction<Database>, schema: string): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v', 'm', 'f')
    order by c.relname`.execute(trx);
  if (rows.length === 0) return;
  await sql`lock table ${sql.join(rows.map((r) => sql.id(schema, r.name)))} in access exclusive mode`.execute(
    trx,
  );
}

/**
 * Drops `schema` in `trx`, after checking that it is hiresync's and that
 * nothing outside it depends on it but the objects of `cascade`, which go
 * with it; returns those dropped so.
 */
async function dropAccountSchema(
  trx: Transaction<Database>,
  schema: string,
  cascade: readonly string[],
): Promise<string[]> {
  if ((await schemaOwner(trx, schema)) === 'other') {
    throw new HiresyncError(
      `refusing to drop schema ${schema}: it holds objects hiresync did not create (it is not marked as, nor migrated as, one of hiresync's account schemas)`,
    );
  }
  // The check and the drop must see the same dependents. In read committed, a
  // view (or foreign key) on one of its relations committed between them would
  // go with `drop schema ... cascade` unnamed and unasked. Creating one locks
  // the relation it reads (access share; a foreign key, share row exclusive),
  // so its relations are locked first, as the drop would lock them anyway:
  // one being created waits for this transaction, and one created meanwhile
  // is committed before the check, which then sees it. (A default using one
  // of its sequences is not covered: a sequence cannot be locked.)
  await lockRelations(trx, schema);
  const outside = await dependentsOutside(trx, schema);
  const allowed = new Set(cascade);
  const refused = outside.filter((object) => !allowed.has(object));
  if (refused.length > 0) throw new DependentObjectsError(schema, refused);
  await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(trx);
  // Its typed views are gone: nothing of theirs is blocked any more.
  const { rows: blocks } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.typed_view_blocks') is not null as present`.execute(trx);
  if (blocks[0]?.present) {
    await sql`delete from hiresync.typed_view_blocks where schema = ${schema}`.execute(trx);
  }
  return outside;
}
