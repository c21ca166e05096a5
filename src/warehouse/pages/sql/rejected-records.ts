import { quoteIdentifier } from '../../quote-identifier.js';
import { sharedRelation } from '../../shared-relation.js';

/**
 * Stores the rejected records of a page in rejected_records, with their
 * reasons, once per run; and marks the rows of their ids as seen by the run
 * (synced_at now, after the run began), so the deletion sweep leaves them
 * alone: the API still lists them. A row keeps the last version hiresync
 * could store (the new one is in rejected_records); last_seen_run_id is left
 * alone, so the run's record count stays the records it stored. A row that
 * was deleted comes back: its history gets a live version again, holding the
 * record last stored (`record`: the column holding it in `table` and
 * `history`).
 *
 * Run in the page's transaction after the page statement when a page has
 * rejected records (a statement of its own: an insert that most pages would
 * run empty costs the page write about 5%); and by the record-by-record
 * fallback, which stores rejected records itself, to mark ids alone as seen.
 *
 * Parameters:
 * - `$1` the body (jsonb) and `$2` the property holding its records (text, or
 *   null when the body is the array);
 * - `$3` the positions of the rejected records in the page (int[]) and `$4`
 *   the reason of each (text[]): they are stored, and the rows of those whose
 *   id is an integer within bigint are marked seen;
 * - `$5` more ids whose rows to mark seen (bigint[]);
 * - `$6` the resource's name, `$7` the run's id (bigint), `$8` the page's
 *   number (int);
 * - `$9` whether to record versions in `history` (HIRESYNC_HISTORY);
 * - `$10` the account (text): the key of every shared table it writes.
 *
 * Returns one row: `seen`, the rows marked.
 */
export function rejectedRecords(tables: {
  table: string;
  history: string;
  record: string;
}): string {
  const table = sharedRelation(tables.table);
  const history = sharedRelation(tables.history);
  const record = quoteIdentifier(tables.record);
  return `-- Rejected records of a page, stored; the rows of ${table} whose records they are, marked as seen.
with page as (
  select e.value as r, (e.ord - 1)::int as idx
  from jsonb_array_elements(case when $2::text is null then $1::jsonb else $1::jsonb -> $2::text end)
    with ordinality as e(value, ord)
),
rejected as (
  insert into ${sharedRelation('rejected_records')} (account, resource, run_id, page, raw, record_key, reason)
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
  update ${table} as t
  set synced_at = now(), deleted_at = null,
    changed_at = case when t.deleted_at is not null then statement_timestamp() else t.changed_at end
  from ids s
  where t.account = $10::text and t.id = s.id
  returning t.id, t.changed_at = statement_timestamp() as changed,
    t.changed_at = statement_timestamp() as replaced,
    case when t.changed_at = statement_timestamp() then t.${record} end as rec
),
closed_versions as (
  update ${history} as h set valid_to = statement_timestamp()
  where $9::boolean and h.account = $10::text
    and h.id = any(array(select s.id from seen as s where s.replaced))
    and h.valid_to is null
),
new_versions as (
  insert into ${history} (account, id, valid_from, run_id, deleted, ${record})
  select $10::text, s.id, statement_timestamp(), $7::bigint, false, s.rec
  from seen as s where $9::boolean and s.changed
)
select count(*)::int as seen from seen`;
}
