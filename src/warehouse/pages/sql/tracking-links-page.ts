import { sharedRelation } from '../../shared-relation.js';

/**
 * A nested reference of a tracking link: the object (`job_board`), the flat
 * shape's bare id (`job_board_id`), the table both write, its CTE's name in
 * the page statements and the columns taken from the object.
 */
interface NestedReference {
  readonly cte: 'boards' | 'people' | 'origins';
  readonly table: 'job_boards' | 'referrers' | 'sources';
  readonly object: 'job_board' | 'credited_to' | 'source';
  readonly bareId: 'job_board_id' | 'referrer_id' | 'source_id';
  readonly columns: readonly string[];
}

const NESTED: readonly NestedReference[] = [
  {
    cte: 'boards',
    table: 'job_boards',
    object: 'job_board',
    bareId: 'job_board_id',
    columns: ['company_name', 'url_token'],
  },
  {
    cte: 'people',
    table: 'referrers',
    object: 'credited_to',
    bareId: 'referrer_id',
    columns: ['name', 'employee_id'],
  },
  {
    cte: 'origins',
    table: 'sources',
    object: 'source',
    bareId: 'source_id',
    columns: ['public_name'],
  },
];

/** The page's records, parsed once from the body, the good ones decoded into typed columns. */
const DECODED = `with page as (
  -- The page's records, parsed once by Postgres from the body as received.
  select e.value as r, (e.ord - 1)::int as idx
  from jsonb_array_elements(case when $2::text is null then $1::jsonb else $1::jsonb -> $2::text end)
    with ordinality as e(value, ord)
),
good as (
  -- The records validation let through ($4: the positions of those it rejected).
  select r, idx from page where not (idx = any($4::int[]))
),
decoded as (
  -- Each record decoded once into typed columns (the validator has vouched for the types).
  select g.idx, g.r, x.*
  from good g, lateral jsonb_to_record(g.r) as x(
    id bigint, token text, job_id bigint, job_post_id bigint, job_board jsonb, job_board_id bigint,
    related_post_id bigint, related_post_type text, credited_to jsonb, referrer_id bigint,
    source jsonb, source_id bigint, created_at timestamptz, updated_at timestamptz
  )
)`;

/**
 * The copies of `n` on the page, one row each (id, raw, updated_at, idx): the
 * nested objects with an id, and the flat shape's bare ids (raw null).
 */
function copiesOf(n: NestedReference): string {
  return `(
    select (${n.object} ->> 'id')::bigint as id, ${n.object} as raw, updated_at, idx
    from decoded where jsonb_typeof(${n.object} -> 'id') = 'number'
    union all
    select ${n.bareId}, null, null, idx
    from decoded where ${n.bareId} is not null
  ) s`;
}

/** Among a page's copies of one id, the one that wins: a nested object over a bare id, then the most recently updated link's, then the last. */
const WINNER_ORDER = 'id, (raw is null), updated_at desc nulls last, idx desc';

/**
 * The CTE that upserts the copies of `n` (`source`: a relation of one row per
 * id, or of several with `distinct on (id)` picking the winner by `order`).
 */
function nestedUpsert(n: NestedReference, source: string, winner: boolean): string {
  const columns = n.columns.join(', ');
  const values = n.columns.map((c) => `raw ->> '${c}'`).join(', ');
  const sets = n.columns.map((c) => `${c} = excluded.${c}`).join(', ');
  return `${n.cte} as (
  -- ${n.object} objects, and the bare ${n.bareId} of the flat shape.
  insert into ${sharedRelation(n.table)} as t (
    account, id, ${columns}, raw, source_run_id, source_updated_at, changed_at
  )
  select ${winner ? 'distinct on (id) ' : ''}$6::text, id, ${values}, raw, $3::bigint, updated_at, statement_timestamp()
  from ${source}
  order by ${winner ? WINNER_ORDER : 'id'}
  on conflict (account, id) do update set
    ${sets}, raw = excluded.raw,
    source_run_id = excluded.source_run_id, source_updated_at = excluded.source_updated_at,
    synced_at = now(),
    changed_at = case when t.raw is distinct from excluded.raw
      then excluded.changed_at else t.changed_at end
  where excluded.raw is not null
    and (t.raw is null or t.source_run_id is null
      -- A copy from the table's own list (its run wrote source_run_id and last_seen_run_id):
      -- the later copy wins.
      or t.source_run_id = t.last_seen_run_id
      or excluded.source_run_id > t.source_run_id
      or (excluded.source_run_id = t.source_run_id
        and (t.source_updated_at is null or excluded.source_updated_at >= t.source_updated_at)))
    and (t.raw is distinct from excluded.raw
      or t.source_run_id is distinct from excluded.source_run_id
      or t.source_updated_at is distinct from excluded.source_updated_at)
  -- A row known only by a bare id (raw null) has no version; a deleted one stays deleted.
  returning id, raw is not null and changed_at = statement_timestamp() as changed,
    changed_at = statement_timestamp() as replaced,
    deleted_at is not null as deleted, raw as rec
)`;
}

/** The CTEs that version the rows of `n` its upsert changed (history, $5). */
function nestedVersions(n: NestedReference): string {
  const history = sharedRelation(`${n.table}_history`);
  return `${n.cte}_closed as (
  -- History ($5) of ${n.table}: the open version of each replaced row ends now.
  update ${history} as h set valid_to = statement_timestamp()
  where $5::boolean and h.account = $6::text
    and h.id = any(array(select s.id from ${n.cte} as s where s.changed and s.replaced))
    and h.valid_to is null
),
${n.cte}_versions as (
  insert into ${history} (account, id, valid_from, run_id, deleted, raw)
  select $6::text, s.id, statement_timestamp(), $3::bigint, s.deleted, s.rec
  from ${n.cte} as s where $5::boolean and s.changed
)`;
}

/** The CTE that upserts the links of the page. */
function linksUpsert(table: string): string {
  return `links as (
  -- One row per id: the page's last link of that id, unless $7 says the ids are distinct.
  -- A nested object's id wins over the flat shape's bare id; credited_to's name and
  -- employee_id are kept on the link only when it has no id (an anonymous referrer).
  -- changed_at moves when the record differs from the one stored, or the row comes back
  -- from a deletion.
  insert into ${table} as t (
    account, id, token, job_id, job_post_id, job_board_id, related_post_id, related_post_type,
    credited_to_id, credited_to_name, credited_to_employee_id, source_id,
    created_at, updated_at, raw, deleted_at, synced_at, last_seen_run_id, changed_at
  )
  select $6::text, id, token, job_id, job_post_id,
    coalesce((job_board ->> 'id')::bigint, job_board_id),
    related_post_id, related_post_type,
    coalesce((credited_to ->> 'id')::bigint, referrer_id),
    case when credited_to ->> 'id' is null then credited_to ->> 'name' end,
    case when credited_to ->> 'id' is null then credited_to ->> 'employee_id' end,
    coalesce((source ->> 'id')::bigint, source_id),
    created_at, updated_at, r, null::timestamptz, now(), $3::bigint, statement_timestamp()
  from decoded
  where $7::boolean or idx in (select max(d.idx) from decoded d group by d.id)
  on conflict (account, id) do update set
    token = excluded.token, job_id = excluded.job_id, job_post_id = excluded.job_post_id,
    job_board_id = excluded.job_board_id, related_post_id = excluded.related_post_id,
    related_post_type = excluded.related_post_type, credited_to_id = excluded.credited_to_id,
    credited_to_name = excluded.credited_to_name,
    credited_to_employee_id = excluded.credited_to_employee_id,
    source_id = excluded.source_id, created_at = excluded.created_at,
    updated_at = excluded.updated_at, raw = excluded.raw, deleted_at = null,
    synced_at = excluded.synced_at, last_seen_run_id = excluded.last_seen_run_id,
    changed_at = case
      when t.raw is distinct from excluded.raw or t.deleted_at is not null
      then excluded.changed_at else t.changed_at end
  -- A changed record closes its open version, if it has one (none for a new id).
  returning id,
    changed_at = statement_timestamp() as changed,
    changed_at = statement_timestamp() as replaced,
    case when changed_at = statement_timestamp() then raw end as rec
)`;
}

/** The CTEs that version the links the page changed (history, $5). */
function linkVersions(history: string): string {
  return `closed_versions as (
  -- History ($5): the open version of each replaced link ends now, when the next begins.
  -- The ids as an array: the planner probes the primary key for the few changed links.
  update ${history} as h set valid_to = statement_timestamp()
  where $5::boolean and h.account = $6::text
    and h.id = any(array(select s.id from links as s where s.replaced))
    and h.valid_to is null
),
new_versions as (
  insert into ${history} (account, id, valid_from, run_id, deleted, raw)
  select $6::text, s.id, statement_timestamp(), $3::bigint, false, s.rec
  from links as s where $5::boolean and s.changed
)`;
}

const WRITTEN = 'count(*)::int as written, max(id)::text as max_id, min(id)::text as min_id';

/**
 * The page statement of tracking links: the nested job boards, referrers and
 * sources (job_boards, referrers, sources), the links in `table`, and a
 * version in `history` for each row that changed, each in the account's rows
 * of its shared table (hiresync.data_<table>). Its parameters `$1` to `$6`
 * (the account) are those of every page statement, and `$7` (see
 * pageParameters).
 *
 * A nested object with an id wins over a bare id of the flat shape; among
 * several objects for one id, the one on the most recently updated link wins,
 * within the page and against the table: a row remembers the run and the
 * updated_at of the link its copy came from, a later run's copy always wins,
 * and within a run a copy from an older link never overwrites it. A bare id
 * (flat shape) creates the row if missing and never blanks names. A copy
 * that came from the table's own list (job_boards, sources, referrers: see
 * reference-records-page.ts) is replaced by any later nested copy: the newest
 * one served wins. A nested copy that changes a row opens a version in
 * `job_boards_history`, `referrers_history` or `sources_history`; it never
 * brings back a row its list's full run deleted.
 */
export function trackingLinksPage(tables: { table: string; history: string }): string {
  const table = sharedRelation(tables.table);
  const history = sharedRelation(tables.history);
  const nested = NESTED.map((n) => nestedUpsert(n, copiesOf(n), true));
  return `-- A page of tracking links, in ${table} and their nested tables, with their versions in ${history}.
${DECODED},
${nested.join(',\n')},
${linksUpsert(table)},
${NESTED.map(nestedVersions).join(',\n')},
${linkVersions(history)}
select ${WRITTEN} from links`;
}

/**
 * The first of the two statements of a tracking-links page written beside the
 * page before it (see pipelined-page.ts): the links and their versions, as
 * {@link trackingLinksPage} writes them, and no nested row. It takes the same
 * parameters, and returns, beside the counts, the winning copy of each
 * nested id on the page (as {@link trackingLinksPage} picks it) for each
 * reference table: `boards`, `people` and `origins`, as JSON text (ids and
 * timestamps exact), the parameters of {@link trackingLinksNested}.
 */
export function trackingLinksRows(tables: { table: string; history: string }): string {
  const table = sharedRelation(tables.table);
  const history = sharedRelation(tables.history);
  const winners = NESTED.map(
    (n) => `(
    select coalesce(jsonb_agg(jsonb_build_object('id', id, 'raw', raw, 'updated_at', updated_at)
      order by id), '[]')::text
    from (select distinct on (id) id, raw, updated_at from ${copiesOf(n)} order by ${WINNER_ORDER}) w
  ) as ${n.cte}`,
  );
  return `-- The links of a page of tracking links, in ${table}, with their versions in ${history}.
${DECODED},
${linksUpsert(table)},
${linkVersions(history)}
select ${WRITTEN},
  ${winners.join(',\n  ')}
from links`;
}

/**
 * The second statement of a tracking-links page written beside the page
 * before it: the nested rows {@link trackingLinksRows} found, upserted and
 * versioned as {@link trackingLinksPage} does, after the page before it has
 * committed and the reference tables' locks are held (its snapshot is taken
 * after both). Its parameters: `$1` the job boards, `$2` the referrers and
 * `$4` the sources (JSON arrays of `{id, raw, updated_at}`, one per id), `$3`
 * the run's id, `$5` history, `$6` the account.
 */
export function trackingLinksNested(): string {
  const nested = NESTED.map((n, k) =>
    nestedUpsert(
      n,
      `jsonb_to_recordset($${[1, 2, 4][k]}::jsonb) as s(id bigint, raw jsonb, updated_at timestamptz)`,
      false,
    ),
  );
  return `-- The job boards, referrers and sources of a page of tracking links, with their versions.
with ${nested.join(',\n')},
${NESTED.map(nestedVersions).join(',\n')}
select 1 as done`;
}
