import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
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

const same = (a: readonly Column[], b: readonly Column[] | undefined) =>
  b !== undefined &&
  a.length === b.length &&
  a.every((c, i) => c.name === b[i]?.name && c.type === b[i]?.type);

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
  // The list resources public holds, each with its view and its history.
  const relations = [
    ...ALL_ACCOUNTS_VIEWS,
    ...(await listResourcesIn(trx, PUBLIC_SCHEMA)).flatMap((name) => [name, `${name}_history`]),
  ];
  const columns = await columnsOf(
    trx,
    [ALL_ACCOUNTS_SCHEMA, ...members.map((m) => m.schema)],
    relations,
  );
  for (const relation of relations) {
    const view = sql.id(ALL_ACCOUNTS_SCHEMA, relation);
    const wanted = columns.get(PUBLIC_SCHEMA)?.get(relation);
    if (!wanted) {
      warnings.push(
        `${ALL_ACCOUNTS_SCHEMA}.${relation} not built: schema public has no ${relation} (run 'hiresync migrate')`,
      );
      await sql`drop view if exists ${view}`.execute(trx);
      continue;
    }
    const list = sql.join(wanted.map((c) => sql.id(c.name)));
    const parts: RawBuilder<unknown>[] = [];
    for (const { account, schema } of members) {
      const problem =
        schema === PUBLIC_SCHEMA ? undefined : mismatch(wanted, columns.get(schema)?.get(relation));
      if (problem) {
        warnings.push(
          `${ALL_ACCOUNTS_SCHEMA}.${relation} leaves out account ${account}: its ${relation} ${problem} (run 'hiresync migrate')`,
        );
        continue;
      }
      parts.push(
        sql`select ${sql.lit(account)}::text as account, ${list} from ${sql.id(schema, relation)}`,
      );
    }
    const body = sql.join(parts, sql` union all `);
    const viewColumns = [ACCOUNT_COLUMN, ...wanted];
    if (same(viewColumns, columns.get(ALL_ACCOUNTS_SCHEMA)?.get(relation))) {
      await sql`create or replace view ${view} as ${body}`.execute(trx);
    } else {
      await sql`drop view if exists ${view}`.execute(trx);
      await sql`create view ${view} as ${body}`.execute(trx);
    }
    await sql`comment on view ${view} is ${sql.lit(
      `${relation} of every account, one after another (default's from schema public, each registered account's from the schema of its name; disabled accounts included), with the account first. Rebuilt by hiresync migrate and accounts add/remove.`,
    )}`.execute(trx);
    for (const column of viewColumns) {
      const note = column.comment ?? `${column.name} of ${relation}, as in each account's schema.`;
      await sql`comment on column ${sql.id(ALL_ACCOUNTS_SCHEMA, relation, column.name)} is ${sql.lit(
        note,
      )}`.execute(trx);
    }
  }
  for (const view of await typedViewsOf(trx)) await rebuildTypedUnion(trx, view);
  return { warnings };
}

/**
 * Builds `all_accounts.<view>` over the typed view `view` (jobs_flat, …) of
 * `default` and every registered account whose schema has it. Typed views
 * follow each account's data, so their columns differ: the union has
 * `account`, `id`, every column any account's view has (by name, sorted;
 * null where an account lacks it; text where accounts' types differ), then
 * `deleted_at`. Runs in the caller's transaction; takes the views' lock.
 */
export async function rebuildTypedUnion(trx: Transaction<Database>, view: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${ALL_ACCOUNTS_LOCK}::int)`.execute(
    trx,
  );
  const members = [
    { account: DEFAULT_ACCOUNT, schema: PUBLIC_SCHEMA },
    ...(await registeredAccounts(trx)).map((account) => ({ account, schema: schemaOf(account) })),
  ];
  const columns = await columnsOf(
    trx,
    members.map((m) => m.schema),
    [view],
  );
  const present = members.filter((m) => columns.get(m.schema)?.has(view));
  const target = sql.id(ALL_ACCOUNTS_SCHEMA, view);
  await sql`create schema if not exists ${sql.id(ALL_ACCOUNTS_SCHEMA)}`.execute(trx);
  await sql`drop view if exists ${target}`.execute(trx);
  if (present.length === 0) return;
  const types = new Map<string, Set<string>>();
  for (const { schema } of present) {
    for (const column of columns.get(schema)?.get(view) ?? []) {
      if (column.name === 'id' || column.name === 'deleted_at') continue;
      types.set(column.name, (types.get(column.name) ?? new Set()).add(column.type));
    }
  }
  const union = [...types.keys()].sort();
  const typeOfColumn = (name: string) => {
    const seen = types.get(name) ?? new Set<string>();
    return seen.size === 1 ? ([...seen][0] ?? 'text') : 'text';
  };
  const parts = present.map(({ account, schema }) => {
    const own = new Map((columns.get(schema)?.get(view) ?? []).map((c) => [c.name, c.type]));
    const list = union.map((name) => {
      const type = typeOfColumn(name);
      const own_type = own.get(name);
      const value =
        own_type === undefined
          ? sql`null::${sql.raw(type)}`
          : own_type === type
            ? sql.id(name)
            : sql`${sql.id(name)}::text`;
      return sql`${value} as ${sql.id(name)}`;
    });
    return sql`select ${sql.lit(account)}::text as account, id, ${sql.join([...list, sql`deleted_at`])}
      from ${sql.id(schema, view)}`;
  });
  await sql`create view ${target} as ${sql.join(parts, sql` union all `)}`.execute(trx);
  await sql`comment on view ${target} is ${sql.lit(
    `${view} of every account, one after another, with the account first: every column any account's view has (null where an account's data never had the key; text where accounts' types differ). Rebuilt when one of them changes, and by hiresync migrate and accounts add/remove.`,
  )}`.execute(trx);
  // Each column keeps the comment an account's view gives it (the key it shows).
  const notes = new Map<string, string>([[ACCOUNT_COLUMN.name, ACCOUNT_COLUMN.comment ?? '']]);
  for (const { schema } of present) {
    for (const column of columns.get(schema)?.get(view) ?? []) {
      if (!notes.has(column.name) && column.comment) notes.set(column.name, column.comment);
    }
  }
  for (const name of [ACCOUNT_COLUMN.name, 'id', ...union, 'deleted_at']) {
    await sql`comment on column ${sql.id(ALL_ACCOUNTS_SCHEMA, view, name)} is ${sql.lit(
      notes.get(name) ?? `${name} of ${view}, as in each account's schema.`,
    )}`.execute(trx);
  }
}

/** The typed views of public (jobs_flat, job_posts_flat, each list resource's NAME_flat). */
async function typedViewsOf(trx: Transaction<Database>): Promise<string[]> {
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
  const outside = await dependentsOutside(trx, schema);
  const allowed = new Set(cascade);
  const refused = outside.filter((object) => !allowed.has(object));
  if (refused.length > 0) throw new DependentObjectsError(schema, refused);
  await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(trx);
  return outside;
}
