import { type Kysely, type RawBuilder, sql } from 'kysely';

/** A column of a view: its name and its type as Postgres's format_type writes it. */
export interface ViewColumn {
  name: string;
  type: string;
}

/** A view named with its schema. */
export interface QualifiedView {
  schema: string;
  name: string;
}

const qualified = (view: QualifiedView) => sql.id(view.schema, view.name);

/** The columns of `view` in order, or undefined when there is no such relation. */
export async function viewColumns(
  // biome-ignore lint/suspicious/noExplicitAny: also called with a migration's Kysely<any>
  db: Kysely<any>,
  view: QualifiedView,
): Promise<ViewColumn[] | undefined> {
  const { rows } = await sql<ViewColumn & { present: boolean }>`
    select a.attname as name, format_type(a.atttypid, a.atttypmod) as type
    from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = ${view.schema} and c.relname = ${view.name}
    order by a.attnum`.execute(db);
  return rows.length === 0 ? undefined : rows.map((r) => ({ name: r.name, type: r.type }));
}

/**
 * What others built on `view`, which dropping it would take along (or refuse
 * for): every object pg_depend lists as depending on it but its own
 * definition. Views and materialized views as `schema.name`; any other kind
 * as Postgres names it (`function public.job_count()`, a SQL function whose
 * body reads the view; `trigger t on public.v`; `rule r on public.v`).
 * Sorted; none when nothing depends on it.
 */
export async function dependentsOf(
  // biome-ignore lint/suspicious/noExplicitAny: also called with a migration's Kysely<any>
  db: Kysely<any>,
  view: QualifiedView,
): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select distinct case
        when w.rulename = '_RETURN' then vn.nspname || '.' || v.relname
        else o.type || ' ' || o.identity
      end as name
    from pg_catalog.pg_depend d
    left join pg_catalog.pg_rewrite w on d.classid = 'pg_catalog.pg_rewrite'::regclass and w.oid = d.objid
    left join pg_catalog.pg_class v on v.oid = w.ev_class
    left join pg_catalog.pg_namespace vn on vn.oid = v.relnamespace
    cross join lateral pg_identify_object(d.classid, d.objid, 0) o
    where d.refclassid = 'pg_catalog.pg_class'::regclass
      and d.refobjid = to_regclass(${`${quoteIdent(view.schema)}.${quoteIdent(view.name)}`})
      and d.deptype in ('n', 'a')
      and not coalesce(w.rulename = '_RETURN' and w.ev_class = d.refobjid, false)
    order by 1`.execute(db);
  return rows.map((r) => r.name);
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** What {@link placeView} did. */
export interface PlacedView {
  /** The view's columns now, in order. */
  layout: ViewColumn[];
  /**
   * When objects of others depend on the view and a column could not take its
   * new type: those objects, and each such column as `name: old → new`. The
   * view keeps the old type of those columns (see {@link placeView}).
   */
  kept?: { dependents: string[]; conflicts: string[] };
  /** The objects of others that depend on the view (none when it was dropped and created). */
  dependents: string[];
}

/** Options of {@link placeView}. */
export interface PlaceViewOptions {
  /**
   * Whether a column kept at type `kept` shows every value of a column of
   * type `wanted` (a text column holds numbers); a column that does not is a
   * conflict. Default: the same type only.
   */
  holds?: (kept: string, wanted: string) => boolean;
}

/**
 * Puts `view` in place with the columns `desired`, selected by `select`
 * (which must give each column of the layout it is handed that column's name
 * and type), without ever dropping what others built on it:
 * - no view yet: created;
 * - nothing depends on it: dropped and created as desired (column order included);
 * - something depends on it: `create or replace`, which Postgres allows when
 *   the existing columns keep their names, types and places: the existing
 *   columns stay where they are, with their types, and the desired columns it
 *   lacks are appended. A column whose type differs keeps its old type, and is
 *   reported in `kept.conflicts`; the caller signals it.
 */
export async function placeView(
  // biome-ignore lint/suspicious/noExplicitAny: also called with a migration's Kysely<any>
  db: Kysely<any>,
  view: QualifiedView,
  desired: readonly ViewColumn[],
  select: (layout: readonly ViewColumn[]) => RawBuilder<unknown>,
  { holds = (kept, wanted) => kept === wanted }: PlaceViewOptions = {},
): Promise<PlacedView> {
  const existing = await viewColumns(db, view);
  if (!existing) {
    await sql`create view ${qualified(view)} as ${select(desired)}`.execute(db);
    return { layout: [...desired], dependents: [] };
  }
  const dependents = await dependentsOf(db, view);
  if (dependents.length === 0) {
    await sql`drop view ${qualified(view)}`.execute(db);
    await sql`create view ${qualified(view)} as ${select(desired)}`.execute(db);
    return { layout: [...desired], dependents };
  }
  const wanted = new Map(desired.map((c) => [c.name, c.type]));
  const have = new Set(existing.map((c) => c.name));
  const conflicts = existing
    .filter((c) => {
      const type = wanted.get(c.name);
      return type !== undefined && !holds(c.type, type);
    })
    .map((c) => `${c.name}: ${c.type} → ${wanted.get(c.name)}`);
  const layout = [...existing, ...desired.filter((c) => !have.has(c.name))];
  await sql`create or replace view ${qualified(view)} as ${select(layout)}`.execute(db);
  return conflicts.length > 0
    ? { layout, dependents, kept: { dependents, conflicts } }
    : { layout, dependents };
}

/**
 * Empties `view` in place, keeping its columns (`select null::type as name, …
 * where false`), so that it no longer depends on anything and what others
 * built on it survives; used where hiresync would drop a view of its own to
 * change what it selects from. Returns false (changing nothing) when there
 * is no such view.
 */
export async function emptyView(
  // biome-ignore lint/suspicious/noExplicitAny: also called with a migration's Kysely<any>
  db: Kysely<any>,
  view: QualifiedView,
): Promise<boolean> {
  const columns = await viewColumns(db, view);
  if (!columns) return false;
  const list = sql.join(columns.map((c) => sql`null::${sql.raw(c.type)} as ${sql.id(c.name)}`));
  await sql`create or replace view ${qualified(view)} as select ${list} where false`.execute(db);
  return true;
}
