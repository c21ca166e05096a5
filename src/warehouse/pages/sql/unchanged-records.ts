import { quoteIdentifier } from '../../quote-identifier.js';
import { sharedRelation } from '../../shared-relation.js';

/** How a storage kind tells that a record is stored as it is (see {@link unchangedRecords}). */
export type UnchangedTest = 'json' | 'tracking_links' | 'reference';

/**
 * The account's (`$8`) live row of `table` with the id of the page record
 * `l`, when it `holds` (a condition on `t` and `l`): probed by its primary
 * key (account, id) once per record of the page. A lateral subquery with a
 * limit is never flattened into a join, so the planner cannot turn it round:
 * on a table without statistics yet (filled by its first run, not analyzed)
 * it would otherwise estimate the account's rows at one and compare each of
 * them with every record of the page (2,000 rows × 500 records: a million
 * jsonb comparisons). The primary key gives at most one row: the limit
 * changes nothing of what the statement decides.
 */
function storedAsIs(table: string, holds: string): string {
  return `cross join lateral (
    select 1 from ${table} t
    where t.account = $8::text and t.id = l.id and t.deleted_at is null and ${holds}
    limit 1
  ) as stored`;
}

/**
 * For each test, the CTE `kept`: the ids of `latest` (columns `id`, `r`,
 * `positions`) whose record the account's (`$8`) rows of `table` (the
 * shared table, qualified) hold as it is, so that its page statement would
 * change no content and add no version, with their positions.
 */
const KEPT: Readonly<Record<UnchangedTest, (table: string) => string>> = {
  // Records stored as sent: the row holds the record, live.
  json: (table) => `kept as (
  select l.id, l.positions from latest l
  ${storedAsIs(table, 't.data = l.r')}
)`,
  // A tracking link: the row holds the record, live, and each nested object with an id is
  // its row's copy as it is (a bare id of the flat shape: its row exists).
  tracking_links: (table) => `kept as (
  select l.id, l.positions from latest l
  ${storedAsIs(table, 't.raw = l.r')}
  where (jsonb_typeof(l.r -> 'job_board' -> 'id') is distinct from 'number'
      or exists (select 1 from ${sharedRelation('job_boards')} b
        where b.account = $8::text and b.id = (l.r -> 'job_board' ->> 'id')::bigint
          and b.raw = l.r -> 'job_board'))
    and (l.r ->> 'job_board_id' is null
      or exists (select 1 from ${sharedRelation('job_boards')} b
        where b.account = $8::text and b.id = (l.r ->> 'job_board_id')::bigint))
    and (jsonb_typeof(l.r -> 'credited_to' -> 'id') is distinct from 'number'
      or exists (select 1 from ${sharedRelation('referrers')} p
        where p.account = $8::text and p.id = (l.r -> 'credited_to' ->> 'id')::bigint
          and p.raw = l.r -> 'credited_to'))
    and (l.r ->> 'referrer_id' is null
      or exists (select 1 from ${sharedRelation('referrers')} p
        where p.account = $8::text and p.id = (l.r ->> 'referrer_id')::bigint))
    and (jsonb_typeof(l.r -> 'source' -> 'id') is distinct from 'number'
      or exists (select 1 from ${sharedRelation('sources')} o
        where o.account = $8::text and o.id = (l.r -> 'source' ->> 'id')::bigint
          and o.raw = l.r -> 'source'))
    and (l.r ->> 'source_id' is null
      or exists (select 1 from ${sharedRelation('sources')} o
        where o.account = $8::text and o.id = (l.r ->> 'source_id')::bigint))
)`,
  // A reference list's record: the row holds it, live, as the list's copy (a nested copy
  // written since is replaced by the list's: see reference-records-page.ts).
  reference: (table) => `kept as (
  select l.id, l.positions from latest l
  ${storedAsIs(table, 't.raw = l.r and t.source_run_id = t.last_seen_run_id')}
)`,
};

/**
 * The statement that finds the records of a page that `table` already holds
 * as they are, for an incremental run, which leaves them alone: their rows
 * are not written again (no `synced_at` or `last_seen_run_id` bump, no new
 * row version), and the page statement is given their positions to skip.
 * When that is every record of the page and none was rejected, there is
 * nothing to write: the statement adds the page to its run's counts itself
 * (what the page's transaction would do), and no transaction is needed.
 * It reads the records as the page statement does: validation's rejects
 * left out, and of several records of one id, the page's last.
 *
 * Parameters:
 * - `$1` the body (jsonb) and `$2` the property holding its records (text,
 *   or null when the body is the array);
 * - `$3` the run's id (bigint); `$4` the positions of the records validation
 *   rejected (int[]); `$5` the page's number (int);
 * - `$6` and `$7` the API's clock at the run's first response
 *   (`api_started_at`, timestamptz, and `api_clock_skew_ms`, bigint), or
 *   nulls: kept only if the run has none yet;
 * - `$8` the account (text): the key of every shared table it reads or writes.
 *
 * Returns one row: `unchanged` (int[], the positions of the records left
 * alone), `nothing_to_write` (boolean), and `max_id` and `min_id` (text) of
 * all the page's records but the rejected.
 */
export function unchangedRecords(test: UnchangedTest, table: string): string {
  return `-- The records of a page that ${quoteIdentifier(table)} holds as they are; a page of only those, added to its run's counts.
with page as (
  select e.value as r, (e.ord - 1)::int as idx
  from jsonb_array_elements(case when $2::text is null then $1::jsonb else $1::jsonb -> $2::text end)
    with ordinality as e(value, ord)
),
good as (
  select r, idx, (r ->> 'id')::bigint as id from page where not (idx = any($4::int[]))
),
latest as (
  -- The record of each id that the page statement would store (the page's last), and the
  -- positions of every record of that id.
  select distinct on (id) id, r, array_agg(idx) over (partition by id) as positions
  from good order by id, idx desc
),
${KEPT[test](sharedRelation(table))},
verdict as (
  select
    coalesce((select array_agg(p order by p) from kept, unnest(kept.positions) as p), '{}')
      as unchanged,
    (select count(*) from kept) = count(*) and cardinality($4::int[]) = 0 as nothing_to_write,
    max(id)::text as max_id, min(id)::text as min_id
  from latest
),
progress as (
  -- Nothing to write: the page counts as read, as a written page's transaction would count it.
  update ${sharedRelation('sync_runs')} as s set pages = $5::int,
    max_id = greatest(s.max_id, (select max_id from verdict)::bigint),
    api_started_at = coalesce(s.api_started_at, $6::timestamptz),
    api_clock_skew_ms = coalesce(s.api_clock_skew_ms, $7::bigint)
  where s.account = $8::text and s.id = $3::bigint and s.pages < $5::int
    and (select nothing_to_write from verdict)
)
select unchanged, nothing_to_write, max_id, min_id from verdict`;
}
