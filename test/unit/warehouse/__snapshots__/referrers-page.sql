-- A page of a reference list, in "hiresync"."data_referrers", with their versions in "hiresync"."data_referrers_history".
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
upserted as (
  -- One row per id: the page's last record of that id. changed_at moves when the record
  -- differs from the one stored, or the row comes back from a deletion.
  insert into "hiresync"."data_referrers" as t (
    account, id, "name", "employee_id", raw, source_run_id, source_updated_at,
    deleted_at, synced_at, last_seen_run_id, changed_at
  )
  select distinct on ((r ->> 'id')::bigint)
    $6::text, (r ->> 'id')::bigint, r ->> 'name', r ->> 'employee_id', r, $3::bigint, null::timestamptz,
    null::timestamptz, now(), $3::bigint, statement_timestamp()
  from good
  order by (r ->> 'id')::bigint, idx desc
  on conflict (account, id) do update set
    "name" = case when excluded.raw ? 'name' then excluded."name" else t."name" end,
    "employee_id" = case when excluded.raw ? 'employee_id' then excluded."employee_id" else t."employee_id" end,
    raw = excluded.raw, source_run_id = excluded.source_run_id, source_updated_at = null,
    deleted_at = null, synced_at = excluded.synced_at,
    last_seen_run_id = excluded.last_seen_run_id,
    changed_at = case
      when t.raw is distinct from excluded.raw or t.deleted_at is not null
      then excluded.changed_at else t.changed_at end
  -- A changed record closes its open version, if it has one (none for a new id).
  returning id,
    changed_at = statement_timestamp() as changed,
    changed_at = statement_timestamp() as replaced,
    case when changed_at = statement_timestamp() then raw end as rec
),
closed_versions as (
  -- History ($5): the open version of each replaced row ends now, when the next begins.
  update "hiresync"."data_referrers_history" as h set valid_to = statement_timestamp()
  where $5::boolean and h.account = $6::text
    and h.id = any(array(select s.id from upserted as s where s.replaced))
    and h.valid_to is null
),
new_versions as (
  insert into "hiresync"."data_referrers_history" (account, id, valid_from, run_id, deleted, raw)
  select $6::text, s.id, statement_timestamp(), $3::bigint, false, s.rec
  from upserted as s where $5::boolean and s.changed
)
select count(*)::int as written, max(id)::text as max_id, min(id)::text as min_id from upserted