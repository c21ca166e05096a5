-- Rejected records of a page, stored; the rows of "hiresync"."data_tracking_links" whose records they are, marked as seen.
with page as (
  select e.value as r, (e.ord - 1)::int as idx
  from jsonb_array_elements(case when $2::text is null then $1::jsonb else $1::jsonb -> $2::text end)
    with ordinality as e(value, ord)
),
rejected as (
  insert into "hiresync"."data_rejected_records" (account, resource, run_id, page, raw, record_key, reason)
  select $10::text, $6::text, $7::bigint, $8::int, p.r,
    concat_ws(':', $8::int, p.idx, md5(p.r::text)), x.reason
  from page p
  join unnest($3::int[], $4::text[]) as x(idx, reason) on x.idx = p.idx
  on conflict (account, resource, run_id, record_key) do nothing
),
ids as (
  select distinct n::bigint as id from (
    select case when jsonb_typeof(r -> 'id') = 'number' then (r ->> 'id')::numeric end as n
    from page where idx = any($3::int[])
    union all
    select unnest($5::bigint[])::numeric
  ) given
  where n = trunc(n) and n between -9223372036854775808 and 9223372036854775807
),
seen as (
  update "hiresync"."data_tracking_links" as t
  set synced_at = now(), deleted_at = null,
    changed_at = case when t.deleted_at is not null then statement_timestamp() else t.changed_at end
  from ids s
  where t.account = $10::text and t.id = s.id
  returning t.id, t.changed_at = statement_timestamp() as changed,
    t.changed_at = statement_timestamp() as replaced,
    case when t.changed_at = statement_timestamp() then t."raw" end as rec
),
closed_versions as (
  update "hiresync"."data_tracking_links_history" as h set valid_to = statement_timestamp()
  where $9::boolean and h.account = $10::text
    and h.id = any(array(select s.id from seen as s where s.replaced))
    and h.valid_to is null
),
new_versions as (
  insert into "hiresync"."data_tracking_links_history" (account, id, valid_from, run_id, deleted, "raw")
  select $10::text, s.id, statement_timestamp(), $7::bigint, false, s.rec
  from seen as s where $9::boolean and s.changed
)
select count(*)::int as seen from seen