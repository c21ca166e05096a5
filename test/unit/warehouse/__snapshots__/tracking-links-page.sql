-- A page of tracking links, in "hiresync"."data_tracking_links" and their nested tables, with their versions in "hiresync"."data_tracking_links_history".
with page as (
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
),
boards as (
  -- job_board objects, and the bare job_board_id of the flat shape.
  insert into "hiresync"."data_job_boards" as t (
    account, id, company_name, url_token, raw, source_run_id, source_updated_at, changed_at
  )
  select distinct on (id) $6::text, id, raw ->> 'company_name', raw ->> 'url_token', raw, $3::bigint, updated_at, statement_timestamp()
  from (
    select (job_board ->> 'id')::bigint as id, job_board as raw, updated_at, idx
    from decoded where jsonb_typeof(job_board -> 'id') = 'number'
    union all
    select job_board_id, null, null, idx
    from decoded where job_board_id is not null
  ) s
  order by id, (raw is null), updated_at desc nulls last, idx desc
  on conflict (account, id) do update set
    company_name = excluded.company_name, url_token = excluded.url_token, raw = excluded.raw,
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
),
people as (
  -- credited_to objects, and the bare referrer_id of the flat shape.
  insert into "hiresync"."data_referrers" as t (
    account, id, name, employee_id, raw, source_run_id, source_updated_at, changed_at
  )
  select distinct on (id) $6::text, id, raw ->> 'name', raw ->> 'employee_id', raw, $3::bigint, updated_at, statement_timestamp()
  from (
    select (credited_to ->> 'id')::bigint as id, credited_to as raw, updated_at, idx
    from decoded where jsonb_typeof(credited_to -> 'id') = 'number'
    union all
    select referrer_id, null, null, idx
    from decoded where referrer_id is not null
  ) s
  order by id, (raw is null), updated_at desc nulls last, idx desc
  on conflict (account, id) do update set
    name = excluded.name, employee_id = excluded.employee_id, raw = excluded.raw,
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
),
origins as (
  -- source objects, and the bare source_id of the flat shape.
  insert into "hiresync"."data_sources" as t (
    account, id, public_name, raw, source_run_id, source_updated_at, changed_at
  )
  select distinct on (id) $6::text, id, raw ->> 'public_name', raw, $3::bigint, updated_at, statement_timestamp()
  from (
    select (source ->> 'id')::bigint as id, source as raw, updated_at, idx
    from decoded where jsonb_typeof(source -> 'id') = 'number'
    union all
    select source_id, null, null, idx
    from decoded where source_id is not null
  ) s
  order by id, (raw is null), updated_at desc nulls last, idx desc
  on conflict (account, id) do update set
    public_name = excluded.public_name, raw = excluded.raw,
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
),
links as (
  -- One row per id: the page's last link of that id, unless $7 says the ids are distinct.
  -- A nested object's id wins over the flat shape's bare id; credited_to's name and
  -- employee_id are kept on the link only when it has no id (an anonymous referrer).
  -- changed_at moves when the record differs from the one stored, or the row comes back
  -- from a deletion.
  insert into "hiresync"."data_tracking_links" as t (
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
),
boards_closed as (
  -- History ($5) of job_boards: the open version of each replaced row ends now.
  update "hiresync"."data_job_boards_history" as h set valid_to = statement_timestamp()
  where $5::boolean and h.account = $6::text
    and h.id = any(array(select s.id from boards as s where s.changed and s.replaced))
    and h.valid_to is null
),
boards_versions as (
  insert into "hiresync"."data_job_boards_history" (account, id, valid_from, run_id, deleted, raw)
  select $6::text, s.id, statement_timestamp(), $3::bigint, s.deleted, s.rec
  from boards as s where $5::boolean and s.changed
),
people_closed as (
  -- History ($5) of referrers: the open version of each replaced row ends now.
  update "hiresync"."data_referrers_history" as h set valid_to = statement_timestamp()
  where $5::boolean and h.account = $6::text
    and h.id = any(array(select s.id from people as s where s.changed and s.replaced))
    and h.valid_to is null
),
people_versions as (
  insert into "hiresync"."data_referrers_history" (account, id, valid_from, run_id, deleted, raw)
  select $6::text, s.id, statement_timestamp(), $3::bigint, s.deleted, s.rec
  from people as s where $5::boolean and s.changed
),
origins_closed as (
  -- History ($5) of sources: the open version of each replaced row ends now.
  update "hiresync"."data_sources_history" as h set valid_to = statement_timestamp()
  where $5::boolean and h.account = $6::text
    and h.id = any(array(select s.id from origins as s where s.changed and s.replaced))
    and h.valid_to is null
),
origins_versions as (
  insert into "hiresync"."data_sources_history" (account, id, valid_from, run_id, deleted, raw)
  select $6::text, s.id, statement_timestamp(), $3::bigint, s.deleted, s.rec
  from origins as s where $5::boolean and s.changed
),
closed_versions as (
  -- History ($5): the open version of each replaced link ends now, when the next begins.
  -- The ids as an array: the planner probes the primary key for the few changed links.
  update "hiresync"."data_tracking_links_history" as h set valid_to = statement_timestamp()
  where $5::boolean and h.account = $6::text
    and h.id = any(array(select s.id from links as s where s.replaced))
    and h.valid_to is null
),
new_versions as (
  insert into "hiresync"."data_tracking_links_history" (account, id, valid_from, run_id, deleted, raw)
  select $6::text, s.id, statement_timestamp(), $3::bigint, false, s.rec
  from links as s where $5::boolean and s.changed
)
select count(*)::int as written, max(id)::text as max_id, min(id)::text as min_id from links