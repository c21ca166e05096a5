import { sharedRelation } from '../../shared-relation.js';

/**
 * The statement that erases records of one resource of one account: the
 * rows of `table`, every version in `history`, and the rejected records of
 * the resource whose record carries one of the ids, and that records each
 * id in `hiresync.erasures` (counts, never content), all in one statement
 * of the caller's transaction. It names the shared tables
 * (hiresync.data_<table>, data_<history>, data_rejected_records) and binds
 * the account (`$3`) in every filter, so no other account's row is touched.
 *
 * A rejected record is the id's when its `raw` is an object whose `id` is
 * that number (`123`, `123.0`) or that number as a string (`"123"`, the
 * wrong type it was rejected for). A rejected record kept as a JSON string
 * (text Postgres could not hold as jsonb) cannot be read here: the caller
 * reads its top-level id from the text and passes it in `$6`/`$7`.
 *
 * Parameters:
 * - `$1` the ids to erase (bigint[]);
 * - `$2` the resource's name (rejected_records.resource, erasures.resource);
 * - `$3` the account's name (the shared tables' key, erasures.account);
 * - `$4` the origin (`command` or `deleted_after`) and `$5` the note (text or null);
 * - `$6` ids of rejected records kept as text whose record is one of `$1`
 *   (bigint[]), and `$7` that record's id for each (bigint[]).
 *
 * Returns one row per id of `$1`: `erasure_id` and `id` (text),
 * `rows_erased`, `history_versions_erased`, `rejected_records_erased` (int).
 */
export function eraseRecords(tables: { table: string; history: string }): string {
  const table = sharedRelation(tables.table);
  const history = sharedRelation(tables.history);
  const rejected = sharedRelation('rejected_records');
  return `-- Erases records of ${table}: rows, their versions in ${history}, their rejected records; logs each id.
with ids as (
  select distinct unnest($1::bigint[]) as id
),
erased_rows as (
  delete from ${table} as t where t.account = $3::text and t.id = any($1::bigint[]) returning t.id
),
erased_versions as (
  delete from ${history} as h where h.account = $3::text and h.id = any($1::bigint[])
  returning h.id
),
rejected_ids as (
  -- The id each rejected record of the resource carries, as a number: an id of the wrong
  -- type (a string of digits) counts as that number.
  select r.id as rejected_id,
    case jsonb_typeof(r.raw -> 'id')
      when 'number' then (r.raw -> 'id')::numeric
      when 'string' then case when btrim(r.raw ->> 'id') ~ '^-?[0-9]+$'
        then btrim(r.raw ->> 'id')::numeric end
    end as n
  from ${rejected} as r
  where r.account = $3::text and r.resource = $2::text
),
rejected_of as (
  select x.rejected_id, i.id from rejected_ids as x join ids as i on i.id::numeric = x.n
  union
  select x.rejected_id, x.id
  from unnest($6::bigint[], $7::bigint[]) as x(rejected_id, id)
),
erased_rejected as (
  delete from ${rejected} as r using rejected_of as o
  where r.account = $3::text and r.id = o.rejected_id and r.resource = $2::text
  returning o.id
),
counted as (
  select id, sum(r)::int as rows_erased, sum(v)::int as versions, sum(j)::int as rejected
  from (
    select id, 1 as r, 0 as v, 0 as j from erased_rows
    union all select id, 0, 1, 0 from erased_versions
    union all select id, 0, 0, 1 from erased_rejected
  ) as e
  group by id
),
logged as (
  -- One row per id asked for, found or not: the request was honoured either way.
  insert into hiresync.erasures (
    account, resource, record_id, rows_erased, history_versions_erased,
    rejected_records_erased, origin, note
  )
  select $3::text, $2::text, i.id, coalesce(c.rows_erased, 0), coalesce(c.versions, 0),
    coalesce(c.rejected, 0), $4::text, $5::text
  from ids as i left join counted as c on c.id = i.id
  order by i.id
  returning id, record_id, rows_erased, history_versions_erased, rejected_records_erased
)
select id::text as erasure_id, record_id::text as id, rows_erased, history_versions_erased,
  rejected_records_erased
from logged order by record_id`;
}
