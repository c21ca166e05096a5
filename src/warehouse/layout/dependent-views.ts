import { sql, type Transaction } from 'kysely';
import { HiresyncError } from '../../errors.js';
import type { Database } from '../tables.js';
import { ident, literal } from './account-views.js';

/**
 * A view (or materialized view) built, directly or through other views, on
 * relations about to be replaced, as {@link captureDependentViews} read it:
 * enough to make it again, the same, once they are back under the same names.
 */
export interface CapturedView {
  readonly schema: string;
  readonly name: string;
  readonly materialized: boolean;
  /** A materialized view that held data (refreshed again, as its owner); false for a view. */
  readonly populated: boolean;
  /** Its query, every relation named with its schema. */
  readonly definition: string;
  readonly options: readonly string[];
  readonly owner: string;
  readonly comment: string | null;
  readonly columnComments: ReadonlyArray<{ column: string; comment: string }>;
  readonly defaults: ReadonlyArray<{ column: string; expression: string }>;
  readonly grants: ReadonlyArray<{ grantee: string; privilege: string; grantable: boolean }>;
  readonly indexes: readonly string[];
  /** How deep in the chain of views it sits: made again in this order, dropped in reverse. */
  readonly depth: number;
}

/**
 * Something other than a view is built on the relations being replaced (an
 * analyst's trigger, rule, function or foreign key): hiresync does not drop
 * it, and does not leave it on a relation that will be gone. Names each.
 */
export class UnmovableDependentsError extends HiresyncError {
  constructor(what: string, objects: readonly string[]) {
    super(
      `${what}: ${objects.join(', ')} ${objects.length === 1 ? 'depends' : 'depend'} on it and cannot be carried over by hiresync (only views are): drop ${objects.length === 1 ? 'it' : 'them'}, run 'hiresync migrate' again, then create ${objects.length === 1 ? 'it' : 'them'} again on the new relations (see docs/tables.md, "Shared storage")`,
    );
  }
}

type Trx = Transaction<Database>;

/**
 * Reads every view built on `relations` (oids), directly or through other
 * views, wherever it lives, with what it takes to make it again; throws a
 * {@link UnmovableDependentsError} naming any trigger, rule, policy, function or
 * foreign key of others on them. `except` (oids) are views left out (the
 * caller's own, rebuilt otherwise).
 */
export async function captureDependentViews(
  trx: Trx,
  relations: readonly number[],
  what: string,
): Promise<CapturedView[]> {
  if (relations.length === 0) return [];
  await refuseOtherDependents(trx, relations, what);
  // pg_get_viewdef names a relation with its schema unless the search_path
  // finds it: hiresync's connections search pg_catalog only, so every
  // relation of a captured definition is named with its schema.
  const { rows } = await sql<{
    oid: number;
    schema: string;
    name: string;
    kind: string;
    definition: string;
    options: string[] | null;
    owner: string;
    comment: string | null;
    populated: boolean;
    depth: number;
  }>`
      with recursive deps (oid, depth) as (
        select r.ev_class, 1 from pg_depend d join pg_rewrite r on r.oid = d.objid
        where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass
          and d.refobjid = any(${relations}::oid[]) and r.ev_class <> d.refobjid
        union
        select r.ev_class, deps.depth + 1 from deps
        join pg_depend d on d.refobjid = deps.oid and d.classid = 'pg_rewrite'::regclass
          and d.refclassid = 'pg_class'::regclass
        join pg_rewrite r on r.oid = d.objid and r.ev_class <> deps.oid
      )
      select c.oid::int as oid, n.nspname as schema, c.relname as name, c.relkind as kind,
        pg_get_viewdef(c.oid) as definition, c.reloptions as options,
        pg_get_userbyid(c.relowner) as owner, obj_description(c.oid, 'pg_class') as comment,
        c.relkind = 'm' and c.relispopulated as populated, max(deps.depth)::int as depth
      from deps join pg_class c on c.oid = deps.oid join pg_namespace n on n.oid = c.relnamespace
      where not (c.oid = any(${relations}::oid[]))
      group by c.oid, n.nspname, c.relname
      order by depth, n.nspname, c.relname`.execute(trx);
  const captured: CapturedView[] = [];
  for (const row of rows) {
    const { rows: comments } = await sql<{ column: string; comment: string }>`
        select a.attname as column, col_description(a.attrelid, a.attnum) as comment
        from pg_attribute a where a.attrelid = ${row.oid}::oid and a.attnum > 0
          and col_description(a.attrelid, a.attnum) is not null`.execute(trx);
    const { rows: defaults } = await sql<{ column: string; expression: string }>`
        select a.attname as column, pg_get_expr(d.adbin, d.adrelid) as expression
        from pg_attrdef d join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
        where d.adrelid = ${row.oid}::oid`.execute(trx);
    const { rows: grants } = await sql<{
      grantee: string;
      privilege: string;
      grantable: boolean;
    }>`
        select case when x.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(x.grantee)) end as grantee,
          x.privilege_type as privilege, x.is_grantable as grantable
        from pg_class c, aclexplode(c.relacl) x
        where c.oid = ${row.oid}::oid and x.grantee <> c.relowner`.execute(trx);
    const { rows: indexes } = await sql<{ definition: string }>`
        select pg_get_indexdef(i.indexrelid) as definition from pg_index i
        where i.indrelid = ${row.oid}::oid`.execute(trx);
    captured.push({
      schema: row.schema,
      name: row.name,
      materialized: row.kind === 'm',
      populated: row.populated,
      definition: row.definition,
      options: row.options ?? [],
      owner: row.owner,
      comment: row.comment,
      columnComments: comments,
      defaults,
      grants,
      indexes: indexes.map((i) => i.definition),
      depth: row.depth,
    });
  }
  return captured;
}

/** Throws naming the objects other than views built on `relations`. */
async function refuseOtherDependents(trx: Trx, relations: readonly number[], what: string) {
  // A trigger, rule or policy goes with its table; a function whose body
  // reads it, or a foreign key of another table, would block the drop.
  const { rows } = await sql<{ object: string }>`
    select pg_describe_object('pg_trigger'::regclass, t.oid, 0) as object from pg_trigger t
    where t.tgrelid = any(${relations}::oid[]) and not t.tgisinternal
    union
    select pg_describe_object('pg_rewrite'::regclass, r.oid, 0) from pg_rewrite r
    where r.ev_class = any(${relations}::oid[]) and r.rulename <> '_RETURN'
    union
    select pg_describe_object('pg_policy'::regclass, p.oid, 0) from pg_policy p
    where p.polrelid = any(${relations}::oid[])
    union
    select pg_describe_object('pg_constraint'::regclass, k.oid, 0) from pg_constraint k
    where k.contype = 'f' and k.confrelid = any(${relations}::oid[])
      and not (k.conrelid = any(${relations}::oid[]))
    union
    select pg_describe_object(d.classid, d.objid, d.objsubid) from pg_depend d
    where d.classid = 'pg_proc'::regclass and d.refclassid = 'pg_class'::regclass
      and d.refobjid = any(${relations}::oid[])
    order by 1`.execute(trx);
  if (rows.length > 0)
    throw new UnmovableDependentsError(
      what,
      rows.map((r) => r.object),
    );
}

/** Drops `views` (captured by {@link captureDependentViews}), the most dependent first. */
export async function dropCapturedViews(trx: Trx, views: readonly CapturedView[]): Promise<void> {
  for (const view of [...views].sort((a, b) => b.depth - a.depth)) {
    await sql`drop ${sql.raw(view.materialized ? 'materialized view' : 'view')} if exists ${sql.id(view.schema, view.name)}`.execute(
      trx,
    );
  }
}

/**
 * Makes `views` again, the least dependent first, each with its options,
 * owner, comments, column defaults, grants and (materialized) indexes. A
 * definition that no longer fits the new relations fails the transaction
 * with Postgres's message, naming the view. A materialized view is made
 * `with no data` and handed to its owner first, then refreshed if it held
 * data: Postgres runs a refresh (and its indexes' expressions) as the
 * view's owner, so another role's query never runs with hiresync's
 * privileges (`create … with data` would run it as hiresync).
 */
export async function restoreCapturedViews(
  trx: Trx,
  views: readonly CapturedView[],
): Promise<void> {
  for (const view of [...views].sort((a, b) => a.depth - b.depth)) {
    const name = `${ident(view.schema)}.${ident(view.name)}`;
    const options = view.options.length > 0 ? ` with (${view.options.join(', ')})` : '';
    const statements = view.materialized
      ? [
          `create materialized view ${name}${options} as ${stripSemicolon(view.definition)} with no data`,
        ]
      : [`create view ${name}${options} as ${stripSemicolon(view.definition)}`];
    statements.push(
      `alter ${view.materialized ? 'materialized view' : 'view'} ${name} owner to ${ident(view.owner)}`,
    );
    if (view.comment !== null) {
      statements.push(
        `comment on ${view.materialized ? 'materialized view' : 'view'} ${name} is ${literal(view.comment)}`,
      );
    }
    for (const { column, comment } of view.columnComments) {
      statements.push(`comment on column ${name}.${ident(column)} is ${literal(comment)}`);
    }
    for (const { column, expression } of view.defaults) {
      statements.push(`alter view ${name} alter column ${ident(column)} set default ${expression}`);
    }
    for (const { grantee, privilege, grantable } of view.grants) {
      statements.push(
        `grant ${privilege} on ${name} to ${grantee}${grantable ? ' with grant option' : ''}`,
      );
    }
    statements.push(...view.indexes);
    if (view.populated) statements.push(`refresh materialized view ${name}`);
    try {
      await sql.raw(`${statements.join(';\n')};`).execute(trx);
    } catch (error) {
      throw new HiresyncError(
        `view ${view.schema}.${view.name}, built on relations replaced by shared storage, could not be made again (${(error as Error).message}); its definition was: ${view.definition}`,
        { cause: error },
      );
    }
  }
}

function stripSemicolon(definition: string): string {
  return definition.trim().replace(/;$/, '');
}
