import { type Kysely, sql, type Transaction } from 'kysely';
import { accountNameProblem, DEFAULT_ACCOUNT, schemaOf } from '../account-name.js';
import { ACCOUNT_COLUMN, type Column, registeredAccounts } from './all-accounts-members.js';
import { rebuildTypedUnion } from './all-accounts-typed-views.js';
import { PUBLIC_SCHEMA } from './database.js';
import { listResourcesIn } from './list-resource-tables.js';
import { ALL_ACCOUNTS_LOCK, ALL_ACCOUNTS_SCHEMA } from './migrate.js';
import { LOCK_SPACE } from './resource-lock.js';
import type { Database } from './schema.js';
import { dependentsOf, emptyView, placeView } from './view-placement.js';

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
  'job_boards',
  'sources',
  'referrers',
  'job_boards_history',
  'sources_history',
  'referrers_history',
];

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
export async function rebuildViews(
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
