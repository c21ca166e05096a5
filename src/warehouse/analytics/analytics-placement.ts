import { sql, type Transaction } from 'kysely';
import { ACCOUNT_BOUNDARY, ident, literal } from '../layout/account-views.js';
import type { Database } from '../tables.js';
import { type AnalyticsColumn, scopeColumns } from './analytics-view.js';
import {
  ANALYTICS_VIEWS,
  analyticsSelect,
  PIPELINE_AS_OF,
  PIPELINE_AS_OF_COMMENT,
  pipelineAsOfColumns,
  pipelineAsOfText,
} from './analytics-views.js';
import type { Scope } from './scope.js';

type Trx = Transaction<Database>;

/** A relation or function of the schema as it stands: its columns (or result) and its grants. */
interface Present {
  /** `name type, …` of a view; pg_get_function_result of a function. */
  shape: string;
  /** `grant …` statements giving back what was granted on it (restored when it must be dropped). */
  grants: string[];
}

/** What `schema` holds of the analytics views and pipeline_as_of. */
async function presentIn(trx: Trx, schema: string): Promise<Map<string, Present>> {
  const { rows } = await sql<{ kind: string; name: string; shape: string; grants: string[] }>`
    select 'view' as kind, c.relname as name,
      (select string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' order by a.attnum)
        from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as shape,
      coalesce((select array_agg(format('grant %s on %I.%I to %s', x.privilege_type, ${schema}::text, c.relname,
          case when x.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(x.grantee)) end))
        from aclexplode(c.relacl) x where x.grantee <> c.relowner), '{}') as grants
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind = 'v'
    union all
    select 'function', p.proname, pg_get_function_result(p.oid),
      coalesce((select array_agg(format('grant %s on function %I.%I(timestamptz) to %s', x.privilege_type, ${schema}::text, p.proname,
          case when x.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(x.grantee)) end))
        from aclexplode(p.proacl) x where x.grantee <> p.proowner), '{}')
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = ${schema} and p.proname = ${PIPELINE_AS_OF}
      and pg_get_function_identity_arguments(p.oid) = 'at timestamp with time zone'`.execute(trx);
  return new Map(rows.map((r) => [`${r.kind} ${r.name}`, { shape: r.shape, grants: r.grants }]));
}

function shapeOf(columns: readonly AnalyticsColumn[]): string {
  return columns.map((c) => `${c.name} ${c.type}`).join(', ');
}

/**
 * The statements that put the analytics views and pipeline_as_of of `scope`
 * in `schema` (which exists), as `present` finds them: a view whose columns
 * stay is made again in place (`create or replace`: its grants and the views
 * others built on it stay); one whose columns change is dropped and made
 * again with its grants given back (an analyst's view built on it makes the
 * drop fail, naming it: nothing of theirs goes silently). Every view a
 * security barrier; every view and column commented; pipeline_as_of granted
 * to no one but whom it was granted to (never PUBLIC, Postgres's default
 * for a function).
 */
function placementText(schema: string, scope: Scope, present: Map<string, Present>): string {
  const s = ident(schema);
  const statements: string[] = [];
  for (const view of ANALYTICS_VIEWS) {
    const name = `${s}.${ident(view.name)}`;
    const columns = scopeColumns(view.columns, scope);
    const before = present.get(`view ${view.name}`);
    const kept = before === undefined || before.shape === shapeOf(columns);
    if (!kept) statements.push(`drop view ${name}`);
    statements.push(
      `create or replace view ${name} with (${ACCOUNT_BOUNDARY}) as\n${analyticsSelect(view, scope)}`,
      `comment on view ${name} is ${literal(view.comment)}`,
      ...columns.map((c) => `comment on column ${name}.${ident(c.name)} is ${literal(c.comment)}`),
      ...(kept ? [] : (before?.grants ?? [])),
    );
  }
  const fn = `${s}.${ident(PIPELINE_AS_OF)}`;
  const before = present.get(`function ${PIPELINE_AS_OF}`);
  const result = `TABLE(${shapeOf(pipelineAsOfColumns(scope))})`;
  const kept = before === undefined || before.shape === result;
  if (!kept) statements.push(`drop function ${fn}(timestamptz)`);
  statements.push(
    pipelineAsOfText(fn, scope),
    `revoke all on function ${fn}(timestamptz) from public`,
    `comment on function ${fn}(timestamptz) is ${literal(PIPELINE_AS_OF_COMMENT)}`,
    ...(kept ? [] : (before?.grants ?? [])),
  );
  return `${statements.join(';\n')};`;
}

/** Puts the analytics views and pipeline_as_of of `scope` in `schema`, which exists (see placementText). */
export async function placeAnalytics(trx: Trx, schema: string, scope: Scope): Promise<void> {
  const present = await presentIn(trx, schema);
  await sql.raw(placementText(schema, scope, present)).execute(trx);
}

/** The statements {@link placeAnalytics} runs in an empty schema: what its definitions are (their fingerprint). */
export function definitionsText(schema: string, scope: Scope): string {
  return placementText(schema, scope, new Map());
}
