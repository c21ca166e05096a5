import { type Kysely, sql, type Transaction } from 'kysely';
import { PUBLIC_SCHEMA } from '../database.js';
import { LOCK_SPACE } from '../lock-keys.js';
import type { Database } from '../tables.js';
import { sharedTable, trackingLinksFlatSelect } from './account-views.js';
import { ACCOUNT_COLUMN, type Column, SHOWN_ACCOUNTS } from './all-accounts-members.js';
import { ALL_ACCOUNTS_LOCK, ALL_ACCOUNTS_SCHEMA, CONTROL_SCHEMA } from './migrate.js';
import { LIST_RESOURCE_MARKER, listResourceTable } from './shared-list-tables.js';
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

/**
 * Rebuilds, in the caller's transaction and under the views' advisory lock,
 * schema `all_accounts`: for each relation of {@link ALL_ACCOUNTS_VIEWS}
 * and each list resource, a view `all_accounts.<relation>` of every
 * account's rows (see {@link SHOWN_ACCOUNTS}), with a first column `account`, then the
 * columns of each account's view of that name. Each reads the shared table
 * (`hiresync.data_<relation>`; tracking_links_flat joins four of them on
 * account and id) once, whatever the number of accounts: a query across
 * accounts touches a fixed number of relations and locks. A view keeps its
 * identity (see placeView) so objects others built on it survive. The
 * unions of the typed views are not built here (see setup/all-accounts-refresh.ts),
 * nor a relation named in `leaveTo`, whose name another view takes.
 */
export async function rebuildUnionViews(
  trx: Transaction<Database>,
  { leaveTo = new Set() }: { leaveTo?: ReadonlySet<string> } = {},
): Promise<{ warnings: string[] }> {
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${ALL_ACCOUNTS_LOCK}::int)`.execute(
    trx,
  );
  const warnings: string[] = [];
  await sql`create schema if not exists ${sql.id(ALL_ACCOUNTS_SCHEMA)}`.execute(trx);
  await sql`comment on schema ${sql.id(ALL_ACCOUNTS_SCHEMA)} is ${sql.lit(
    "hiresync's views across accounts: each shows the relation of the same name of every account (default from schema public), with a first column account, read from the shared tables of schema hiresync. Rebuilt by hiresync migrate; hiresync owns this schema.",
  )}`.execute(trx);
  const relations = await unionRelations(trx);
  const lists = new Set(await sharedListResources(trx));
  const columns = await columnsOf(
    trx,
    [PUBLIC_SCHEMA, CONTROL_SCHEMA],
    [
      'tracking_links_flat',
      ...relations.map((r) => sharedTable(lists.has(r) ? listResourceTable(r) : r)),
    ],
  );
  for (const relation of relations) {
    // A name another view of all_accounts takes (the analytics view
    // rejection_reasons over the list resource's union): that one is built there.
    if (leaveTo.has(relation)) continue;
    const view = sql.id(ALL_ACCOUNTS_SCHEMA, relation);
    const target = { schema: ALL_ACCOUNTS_SCHEMA, name: relation };
    const source = sharedTable(lists.has(relation) ? listResourceTable(relation) : relation);
    const wanted =
      relation === 'tracking_links_flat'
        ? columns.get(PUBLIC_SCHEMA)?.get(relation)
        : columns
            .get(CONTROL_SCHEMA)
            ?.get(source)
            ?.filter((c) => c.name !== ACCOUNT_COLUMN.name);
    if (!wanted) {
      warnings.push(
        `${ALL_ACCOUNTS_SCHEMA}.${relation} not built: ${relation === 'tracking_links_flat' ? 'schema public has no tracking_links_flat' : `there is no shared table hiresync.${source}`} (run 'hiresync migrate')`,
      );
      // Objects of others built on it are kept, over an empty view.
      if ((await dependentsOf(trx, target)).length > 0) await emptyView(trx, target);
      else await sql`drop view if exists ${view}`.execute(trx);
      continue;
    }
    // A list resource's view NAME shows the columns of NAME_data but account.
    const shown = lists.has(relation)
      ? LIST_VIEW_COLUMNS.map((name) => wanted.find((c) => c.name === name)).filter(
          (c): c is Column => c !== undefined,
        )
      : wanted;
    const unionColumns = [ACCOUNT_COLUMN, ...shown];
    // Kept in place when objects of others depend on it (see placeView):
    // columns a migration added are appended, one whose type changed keeps its old type.
    const placed = await placeView(trx, target, unionColumns, (layout) => {
      const have = new Map(unionColumns.map((c) => [c.name, c.type]));
      const list = layout.map((c) =>
        have.get(c.name) === c.type
          ? sql.id(c.name)
          : sql`null::${sql.raw(c.type)} as ${sql.id(c.name)}`,
      );
      if (relation === 'tracking_links_flat') {
        return sql`select ${sql.join(list)} from (${sql.raw(
          trackingLinksFlatSelect(
            {
              links: `hiresync.${sharedTable('tracking_links')}`,
              boards: `hiresync.${sharedTable('job_boards')}`,
              referrers: `hiresync.${sharedTable('referrers')}`,
              sources: `hiresync.${sharedTable('sources')}`,
            },
            { column: 'account' },
          ),
        )}) flat where ${sql.raw(SHOWN_ACCOUNTS)}`;
      }
      return sql`select ${sql.join(list)} from ${sql.id(CONTROL_SCHEMA, source)} where ${sql.raw(SHOWN_ACCOUNTS)}`;
    });
    if (placed.kept) {
      warnings.push(
        `${ALL_ACCOUNTS_SCHEMA}.${relation} keeps column${placed.kept.conflicts.length > 1 ? 's' : ''} ${placed.kept.conflicts.join(', ')} at the old type, null, because ${placed.kept.dependents.join(', ')} depend${placed.kept.dependents.length === 1 ? 's' : ''} on it: drop ${placed.kept.dependents.join(', ')}, run 'hiresync migrate', then create ${placed.kept.dependents.length === 1 ? 'it' : 'them'} again`,
      );
    }
    await sql`comment on view ${view} is ${sql.lit(
      `${relation} of every account (default's, from schema public, and each registered account's; disabled accounts included), with the account first: one read of the shared storage in schema hiresync, whatever the number of accounts. Rebuilt by hiresync migrate.`,
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
  return { warnings };
}

/** The columns of a list resource's view NAME (see createListResourceViews). */
const LIST_VIEW_COLUMNS = [
  'id',
  'data',
  'deleted_at',
  'changed_at',
  'first_synced_at',
  'synced_at',
  'last_seen_run_id',
];

/** The list resources of shared storage: each `hiresync.data_NAME_data` marked so. */
async function sharedListResources(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ name: string | null }>`
    select substring(obj_description(c.oid, 'pg_class') from ${`^${LIST_RESOURCE_MARKER} ([a-z][a-z0-9_]*):`}) as name
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${CONTROL_SCHEMA} and c.relkind = 'p' and c.relname like 'data\\_%\\_data'
    order by 1`.execute(db);
  return rows.map((r) => r.name).filter((name): name is string => name !== null);
}

/** The relations {@link rebuildUnionViews} unions: ALL_ACCOUNTS_VIEWS and the list resources public holds, each with its view and its history. */
async function unionRelations(db: Kysely<Database>): Promise<string[]> {
  return [
    ...ALL_ACCOUNTS_VIEWS,
    ...(await sharedListResources(db)).flatMap((name) => [name, `${name}_history`]),
  ];
}

/**
 * The names of the views of schema `all_accounts` that hiresync builds and
 * rebuilds with the registered accounts (what refreshAllAccountsViews
 * makes: {@link ALL_ACCOUNTS_VIEWS}, the list resources' views and histories,
 * the unions of public's typed views). Anything else there is someone else's.
 */
export async function allAccountsViewNames(db: Kysely<Database>): Promise<string[]> {
  return [...(await unionRelations(db)), ...(await typedViewsOf(db))];
}

/** The typed views any account has (jobs_flat, job_posts_flat, each list resource's NAME_flat). */
export async function typedViewsOf(trx: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ view: string }>`
    select distinct view from hiresync.data_typed_views order by view`.execute(trx);
  return rows.map((r) => r.view);
}
