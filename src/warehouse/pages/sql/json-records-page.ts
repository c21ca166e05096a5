import { sharedRelation } from '../../shared-relation.js';

/**
 * The page statement of records stored as sent (jobs, job posts, list
 * resources): one row per id in the account's rows of the shared table of
 * `table` with the record in `data`, and a version in the shared table of
 * `history` for each record that changed. Its parameters `$1` to `$6` (the
 * account) are those of every page statement (see pageParameters).
 */
export function jsonRecordsPage(tables: { table: string; history: string }): string {
  const table = sharedRelation(tables.table);
  const history = sharedRelation(tables.history);
  return `-- A page of records stored as sent, in ${table}, with their versions in ${history}.
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
  -- One row per id: the page's last record of that id (in id order, the rows go into the
  -- primary key at its right edge). changed_at moves when the record differs from the one
  -- stored, or the row comes back from a deletion.
  insert into ${table} as t (account, id, data, deleted_at, synced_at, last_seen_run_id, changed_at)
  select distinct on ((r ->> 'id')::bigint)
    $6::text, (r ->> 'id')::bigint, r, null::timestamptz, now(), $3::bigint, statement_timestamp()
  from good
  order by (r ->> 'id')::bigint, idx desc
  on conflict (account, id) do update set
    data = excluded.data, deleted_at = null, synced_at = excluded.synced_at,
    last_seen_run_id = excluded.last_seen_run_id,
    changed_at = case
      when t.data is distinct from excluded.data or t.deleted_at is not null
      then excluded.changed_at else t.changed_at end
  -- A changed record closes its open version, if it has one (none for a new id).
  returning id,
    changed_at = statement_timestamp() as changed,
    changed_at = statement_timestamp() as replaced,
    case when changed_at = statement_timestamp() then data end as rec
),
closed_versions as (
  -- History ($5): the open version of each replaced record ends now, when the next begins.
  -- The ids as an array: the planner probes the primary key for the few changed records.
  update ${history} as h set valid_to = statement_timestamp()
  where $5::boolean and h.account = $6::text
    and h.id = any(array(select s.id from upserted as s where s.replaced))
    and h.valid_to is null
),
new_versions as (
  insert into ${history} (account, id, valid_from, run_id, deleted, data)
  select $6::text, s.id, statement_timestamp(), $3::bigint, false, s.rec
  from upserted as s where $5::boolean and s.changed
)
select count(*)::int as written, max(id)::text as max_id, min(id)::text as min_id from upserted`;
}
