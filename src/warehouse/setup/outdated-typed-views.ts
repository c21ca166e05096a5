import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT } from '../../account-name.js';
import type { Database } from '../tables.js';
import type { DeclaredColumns } from '../typed-views/column-plan.js';
import { refreshTypedView } from '../typed-views/refresh-typed-view.js';

/** A typed view a resource declares columns of (`jobs_flat` and jobs' columns). */
export interface TypedViewDeclaration {
  /** `jobs_flat`, … */
  readonly view: string;
  readonly columns: DeclaredColumns;
}

/**
 * Refreshes every typed view registered in hiresync.data_typed_views whose
 * schema holds it (with `accounts`, those accounts' only) that is not at today's layout: one
 * that lacks a column of its resource's `declarations`, or the row-state
 * columns `changed_at` and `synced_at` (a view made by an earlier release, or
 * a placeholder no refresh filled yet). So a declared column is there from
 * the view's making, before any full run, and an upgraded deployment's views
 * gain their columns at `migrate`. Which views are outdated is one query: a
 * deployment at the layout costs nothing per account. Returns the warnings
 * of the refreshes.
 */
export async function refreshOutdatedTypedViews(
  db: Kysely<Database>,
  declarations: readonly TypedViewDeclaration[],
  accounts?: readonly string[],
): Promise<string[]> {
  const declared = declarations.flatMap((d) =>
    Object.keys(d.columns).map((key) => ({ view: d.view, key })),
  );
  const { rows } = await sql<{ account: string; view: string; table: string }>`
    select tv.account, tv.view, tv.source_table as table
    from hiresync.data_typed_views tv
    where (${accounts === undefined}::boolean or tv.account = any(${[...(accounts ?? [])]}::text[]))
      and to_regclass(format('%I.%I', case when tv.account = ${DEFAULT_ACCOUNT} then 'public' else tv.account end,
        tv.view)) is not null
      and (not exists (
          select 1 from pg_catalog.pg_attribute a
          where a.attrelid = to_regclass(format('%I.%I',
            case when tv.account = ${DEFAULT_ACCOUNT} then 'public' else tv.account end, tv.view))
            and a.attname = 'synced_at' and not a.attisdropped)
        or exists (
          select 1 from unnest(${declared.map((d) => d.view)}::text[], ${declared.map((d) => d.key)}::text[])
            as d(view, key)
          where d.view = tv.view and not exists (
            select 1 from hiresync.data_typed_view_columns c
            where c.account = tv.account and c.view = tv.view and c.key = d.key)))
    order by tv.account, tv.view`.execute(db);
  const warnings: string[] = [];
  for (const { account, view, table } of rows) {
    const columns = declarations.find((d) => d.view === view)?.columns;
    const change = await refreshTypedView(db, { account, view, table, columns });
    if (change.warning) warnings.push(change.warning);
  }
  return warnings;
}
