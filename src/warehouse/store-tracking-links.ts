import { type RawBuilder, sql } from 'kysely';
import { changedAtOnConflict, returningVersion, versionCtes } from './history.js';
import { type PageStatementInput, pageCte, type WrittenRow } from './page-statement.js';

/**
 * Upserts the nested rows (job boards, referrers, sources) of the good records.
 * A nested object with an id wins over a bare id of the flat shape; among
 * several objects for one id, the one on the most recently updated link wins,
 * within the page and against the table: a row remembers the run and the
 * updated_at of the link its copy came from, a later run's copy always wins,
 * and within a run a copy from an older link never overwrites it. A bare id (flat shape) creates the row if missing and
 * never blanks names.
 */
function nestedCte(
  runId: string,
  name: string,
  table: 'job_boards' | 'referrers' | 'sources',
  nested: string,
  flat: string,
  columns: Record<string, string>,
): RawBuilder<unknown> {
  const names = Object.keys(columns);
  const obj = sql.ref(nested);
  const select = names.map((c) => sql`${obj} ->> ${columns[c]} as ${sql.ref(c)}`);
  const nulls = names.map((c) => sql`null as ${sql.ref(c)}`);
  const assign = names.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`);
  const list = sql.join(names.map((c) => sql.ref(c)));
  return sql`${sql.ref(name)} as (
    insert into ${sql.table(table)} as t (id, ${list}, raw, source_run_id, source_updated_at)
    select distinct on (id) id, ${list}, raw, ${runId}::bigint, updated_at from (
      select (${obj} ->> 'id')::bigint as id, ${sql.join(select)}, ${obj} as raw, updated_at, idx
      from decoded where jsonb_typeof(${obj} -> 'id') = 'number'
      union all
      select ${sql.ref(flat)}, ${sql.join(nulls)}, null, null, idx
      from decoded where ${sql.ref(flat)} is not null
    ) s
    order by id, (raw is null), updated_at desc nulls last, idx desc
    on conflict (id) do update set ${sql.join(assign)}, raw = excluded.raw,
      source_run_id = excluded.source_run_id,
      source_updated_at = excluded.source_updated_at, synced_at = now()
    where excluded.raw is not null
      and (t.raw is null or t.source_run_id is null
        or excluded.source_run_id > t.source_run_id
        or (excluded.source_run_id = t.source_run_id
          and (t.source_updated_at is null or excluded.source_updated_at >= t.source_updated_at)))
      and (t.raw is distinct from excluded.raw
        or t.source_run_id is distinct from excluded.source_run_id
        or t.source_updated_at is distinct from excluded.source_updated_at)
  )`;
}

/**
 * Stores a page of tracking links: the nested job boards, referrers and
 * sources first, then the links, and a version of each link that changed, in
 * one statement.
 */
export function storeTrackingLinks(input: PageStatementInput): RawBuilder<WrittenRow> {
  return sql`with ${pageCte(input)},
  decoded as (
    -- Each record decoded once into typed columns (the validator has vouched for the types).
    select g.idx, g.r, x.*
    from good g, lateral jsonb_to_record(g.r) as x(
      id bigint, token text, job_id bigint, job_post_id bigint, job_board jsonb, job_board_id bigint,
      related_post_id bigint, related_post_type text, credited_to jsonb, referrer_id bigint,
      source jsonb, source_id bigint, created_at timestamptz, updated_at timestamptz
    )
  ),
  ${nestedCte(input.runId, 'boards', 'job_boards', 'job_board', 'job_board_id', { company_name: 'company_name', url_token: 'url_token' })},
  ${nestedCte(input.runId, 'people', 'referrers', 'credited_to', 'referrer_id', { name: 'name', employee_id: 'employee_id' })},
  ${nestedCte(input.runId, 'origins', 'sources', 'source', 'source_id', { public_name: 'public_name' })},
  links as (
    insert into tracking_links as t (
      id, token, job_id, job_post_id, job_board_id, related_post_id, related_post_type,
      credited_to_id, credited_to_name, credited_to_employee_id, source_id,
      created_at, updated_at, raw, deleted_at, synced_at, last_seen_run_id, changed_at
    )
    select ${input.distinctIds ? sql`` : sql`distinct on (id)`}
      id, token, job_id, job_post_id,
      coalesce((job_board ->> 'id')::bigint, job_board_id),
      related_post_id, related_post_type,
      coalesce((credited_to ->> 'id')::bigint, referrer_id),
      case when credited_to ->> 'id' is null then credited_to ->> 'name' end,
      case when credited_to ->> 'id' is null then credited_to ->> 'employee_id' end,
      coalesce((source ->> 'id')::bigint, source_id),
      created_at, updated_at, r, null::timestamptz, now(), ${input.runId}::bigint, statement_timestamp()
    from decoded
    ${input.distinctIds ? sql`` : sql`order by id, idx desc`}
    on conflict (id) do update set
      token = excluded.token, job_id = excluded.job_id, job_post_id = excluded.job_post_id,
      job_board_id = excluded.job_board_id, related_post_id = excluded.related_post_id,
      related_post_type = excluded.related_post_type, credited_to_id = excluded.credited_to_id,
      credited_to_name = excluded.credited_to_name, credited_to_employee_id = excluded.credited_to_employee_id,
      source_id = excluded.source_id, created_at = excluded.created_at, updated_at = excluded.updated_at,
      raw = excluded.raw, deleted_at = null, synced_at = excluded.synced_at,
      last_seen_run_id = excluded.last_seen_run_id, ${changedAtOnConflict('raw')}
    returning id, ${returningVersion('raw')}
  )${input.history ? sql`, ${versionCtes(input.history, 'links', input.runId, false)}` : sql``}
  select count(*)::int as written, max(id)::text as max_id, min(id)::text as min_id from links`;
}
