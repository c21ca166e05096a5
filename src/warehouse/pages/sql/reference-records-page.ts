import { quoteIdentifier } from '../../quote-identifier.js';
import { sharedRelation } from '../../shared-relation.js';

/** A column of a reference table and the key of the list's record it holds. */
export type ReferenceColumn = readonly [column: string, key: string];

/** The reference tables, each with the columns its list's records fill (v3 keys). */
export const REFERENCE_COLUMNS: Readonly<Record<string, readonly ReferenceColumn[]>> = {
  job_boards: [
    ['company_name', 'company_name'],
    ['url_token', 'url_token'],
  ],
  // A source's `name` is the column public_name (the nested object's key).
  sources: [['public_name', 'name']],
  // A referrer of the list has no employee_id: a nested copy's stays.
  referrers: [
    ['name', 'name'],
    ['employee_id', 'employee_id'],
  ],
};

/**
 * The page statement of a reference list (`/v3/job_boards`, `/v3/sources`,
 * `/v3/referrers`): one row per id in the account's rows of the shared
 * table of `table` (the same table the objects nested in tracking links
 * fill), the record as sent in `raw`, and a version in that of `history` for
 * each row that changed. Its parameters `$1` to `$6` (the account) are those
 * of every page statement (see pageParameters).
 *
 * The newest copy served wins: a list's record always replaces the row's
 * values (a nested copy written later replaces them again, see
 * tracking-links-page.ts), except a column whose key the record does not
 * carry, which keeps its value. The row remembers the run in
 * `source_run_id` and `last_seen_run_id` (equal: the copy came from the
 * list), and comes back from a deletion.
 */
export function referenceRecordsPage(tables: {
  table: string;
  history: string;
  columns: readonly ReferenceColumn[];
}): string {
  const table = sharedRelation(tables.table);
  const history = sharedRelation(tables.history);
  const names = tables.columns.map(([column]) => quoteIdentifier(column));
  const values = tables.columns.map(([, key]) => `r ->> '${key.replaceAll("'", "''")}'`);
  const sets = tables.columns.map(
    ([column, key]) =>
      `${quoteIdentifier(column)} = case when excluded.raw ? '${key.replaceAll("'", "''")}' then excluded.${quoteIdentifier(column)} else t.${quoteIdentifier(column)} end,`,
  );
  return `-- A page of a reference list, in ${table}, with their versions in ${history}.
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
  insert into ${table} as t (
    account, id, ${names.join(', ')}, raw, source_run_id, source_updated_at,
    deleted_at, synced_at, last_seen_run_id, changed_at
  )
  select distinct on ((r ->> 'id')::bigint)
    $6::text, (r ->> 'id')::bigint, ${values.join(', ')}, r, $3::bigint, null::timestamptz,
    null::timestamptz, now(), $3::bigint, statement_timestamp()
  from good
  order by (r ->> 'id')::bigint, idx desc
  on conflict (account, id) do update set
    ${sets.join('\n    ')}
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
  update ${history} as h set valid_to = statement_timestamp()
  where $5::boolean and h.account = $6::text
    and h.id = any(array(select s.id from upserted as s where s.replaced))
    and h.valid_to is null
),
new_versions as (
  insert into ${history} (account, id, valid_from, run_id, deleted, raw)
  select $6::text, s.id, statement_timestamp(), $3::bigint, false, s.rec
  from upserted as s where $5::boolean and s.changed
)
select count(*)::int as written, max(id)::text as max_id, min(id)::text as min_id from upserted`;
}
