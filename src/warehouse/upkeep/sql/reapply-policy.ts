import { quoteIdentifier } from '../../quote-identifier.js';
import { sharedRelation } from '../../shared-relation.js';

/**
 * The statements of reapply-policy, which rewrites stored records under the
 * current field policy in batches keyed by each relation's primary key. Each
 * names the shared table (hiresync.data_<relation>) and binds the account as
 * `$1` in its filter, the key's first column: it reads and writes that
 * account's rows only.
 *
 * A relation is one of:
 * - `table`: a resource's table (`jobs`, `candidates_data`, `tracking_links`,
 *   `referrers`, …), keyed by id, its record in `column` (`data` or `raw`),
 *   and for a reference table the text `columns` its records fill;
 * - `history`: a resource's history (`jobs_history`, …), keyed by (id, valid_from);
 * - `rejected`: rejected_records of one resource, keyed by id.
 */
export interface ReapplyShape {
  kind: 'table' | 'history' | 'rejected';
  /** The relation, as the account's schema names it (its shared table is hiresync.data_<relation>). */
  relation: string;
  /** The column holding the record as stored. */
  column: 'data' | 'raw';
  /** Text columns of a reference table filled from keys of its records (see REFERENCE_COLUMNS). */
  columns?: readonly string[] | undefined;
  /** The table of tracking links: its typed columns are read from its record. */
  trackingLinks?: boolean | undefined;
}

/** Where a row was last written: what a catch-up pass goes by (see reapplyRead). */
const WRITTEN_AT = { table: 'changed_at', history: 'valid_from', rejected: 'rejected_at' } as const;

function selectList(shape: ReapplyShape): string {
  const extra =
    shape.kind === 'history'
      ? ', valid_from::text as valid_from_text'
      : shape.kind === 'rejected'
        ? `, case when jsonb_typeof(raw) = 'string' then raw #>> '{}' end as string`
        : (shape.columns ?? []).map((c, i) => `, ${quoteIdentifier(c)} as cell_${i}`).join('');
  return `id::text as id, ${quoteIdentifier(shape.column)}::text as text${extra}`;
}

// The batch is ordered by the relation's own columns (r.id, not the text
// `id` of the select list, which would order 10 before 9 and let the keyset
// step over rows).

/**
 * The next batch of rows, without locking them: those after the key given,
 * in key order, at most a limit, that hold a record; in a catch-up pass only
 * those written since a time.
 *
 * Parameters: `$1` the account; table and rejected — `$2` the last id done
 * (bigint or null), `$3` since (timestamptz or null), `$4` the limit, and for
 * rejected `$5` the resource; history — `$2` the last id, `$3` its
 * valid_from, `$4` since, `$5` the limit.
 */
export function reapplyRead(shape: ReapplyShape): string {
  const relation = sharedRelation(shape.relation);
  const column = quoteIdentifier(shape.column);
  const written = WRITTEN_AT[shape.kind];
  if (shape.kind === 'history') {
    return `-- A batch of versions of ${relation} for reapply-policy.
select ${selectList(shape)} from ${relation} as r
where r.account = $1::text and ${column} is not null
  and ($2::bigint is null or (r.id, r.valid_from) > ($2::bigint, $3::timestamptz))
  and ($4::timestamptz is null or r.${written} >= $4::timestamptz)
order by r.id, r.valid_from limit $5`;
  }
  const resource = shape.kind === 'rejected' ? ' and resource = $5::text' : '';
  return `-- A batch of rows of ${relation} for reapply-policy.
select ${selectList(shape)} from ${relation} as r
where r.account = $1::text and ${column} is not null${resource}
  and ($2::bigint is null or r.id > $2::bigint)
  and ($3::timestamptz is null or r.${written} >= $3::timestamptz)
order by r.id limit $4`;
}

/**
 * How many rows the relation holds of the account (of the resource, for
 * rejected records): a pass's total. Parameters: `$1` the account; rejected —
 * `$2` the resource.
 */
export function reapplyCount(shape: ReapplyShape): string {
  const resource = shape.kind === 'rejected' ? ' and resource = $2::text' : '';
  return `-- Rows of ${sharedRelation(shape.relation)} for reapply-policy's total.
select count(*)::text as n from ${sharedRelation(shape.relation)} where account = $1::text${resource}`;
}

/**
 * The rows of the keys given, locked for update until the transaction ends,
 * read again under the lock. With `skipLocked`, rows another transaction
 * holds (a page of a run writing them) are left out rather than waited for:
 * a batch never waits while it holds locks, so it can never deadlock with
 * a page that locks the same rows in another order. The caller takes the
 * rows left out one at a time, each in a transaction of its own that waits.
 *
 * Parameters: `$1` the account; table — `$2` the ids (bigint[]); rejected —
 * `$2` the ids, `$3` the resource; history — `$2` the ids, `$3` their
 * valid_from (timestamptz[]).
 */
export function reapplyLock(shape: ReapplyShape, skipLocked: boolean): string {
  const relation = sharedRelation(shape.relation);
  const column = quoteIdentifier(shape.column);
  const keys =
    shape.kind === 'history'
      ? '(id, valid_from) in (select * from unnest($2::bigint[], $3::timestamptz[]))'
      : `id = any($2::bigint[])${shape.kind === 'rejected' ? ' and resource = $3::text' : ''}`;
  return `-- Rows of ${relation} to rewrite, locked.
select ${selectList(shape)} from ${relation}
where account = $1::text and ${keys} and ${column} is not null
for update${skipLocked ? ' skip locked' : ''}`;
}

/**
 * Writes the rewritten records (JSON text) back, and nothing else of the
 * row: no time moves (changed_at, valid_from, synced_at), since the record's
 * versions are the same versions, policed. The tracking links' typed columns
 * are read from the new record as their page statement reads them
 * (tracking-links-page.ts), so a dropped key's column is null and a hashed
 * one's holds the hash; a reference table's text columns are given.
 *
 * Parameters: `$1` the account; `$2` the ids (bigint[]); then history —
 * `$3` their valid_from (timestamptz[]), `$4` the texts (text[]); rejected —
 * `$3` the texts, `$4` whether each is kept as a JSON string (boolean[]: a
 * record Postgres could not hold as jsonb is stored as its text); table —
 * `$3` the texts, then one text[] per column of `columns`.
 */
export function reapplyWrite(shape: ReapplyShape): string {
  const relation = sharedRelation(shape.relation);
  const column = quoteIdentifier(shape.column);
  if (shape.kind === 'history') {
    return `-- Versions of ${relation} rewritten by reapply-policy.
update ${relation} as h set ${column} = u.text::jsonb
from unnest($2::bigint[], $3::timestamptz[], $4::text[]) as u(id, valid_from, text)
where h.account = $1::text and h.id = u.id and h.valid_from = u.valid_from`;
  }
  if (shape.kind === 'rejected') {
    return `-- Rejected records rewritten by reapply-policy.
update ${relation} as r
set raw = case when u.as_text then to_jsonb(u.text) else u.text::jsonb end
from unnest($2::bigint[], $3::text[], $4::boolean[]) as u(id, text, as_text)
where r.account = $1::text and r.id = u.id`;
  }
  if (shape.trackingLinks) return trackingLinksWrite(relation);
  const columns = shape.columns ?? [];
  const names = columns.map((_, i) => `c${i}`);
  const sets = columns.map((c, i) => `, ${quoteIdentifier(c)} = u.${names[i]}`).join('');
  const arrays = columns.map((_, i) => `, $${i + 4}::text[]`).join('');
  return `-- Rows of ${relation} rewritten by reapply-policy.
update ${relation} as t set ${column} = u.text::jsonb${sets}
from unnest($2::bigint[], $3::text[]${arrays}) as u(id, text${names.map((n) => `, ${n}`).join('')})
where t.account = $1::text and t.id = u.id`;
}

function trackingLinksWrite(relation: string): string {
  return `-- Tracking links rewritten by reapply-policy, their typed columns read from the new record.
with u as (
  select v.id, v.text::jsonb as r from unnest($2::bigint[], $3::text[]) as v(id, text)
),
decoded as (
  select u.id, u.r, x.*
  from u, lateral jsonb_to_record(u.r) as x(
    token text, job_id bigint, job_post_id bigint, job_board jsonb, job_board_id bigint,
    related_post_id bigint, related_post_type text, credited_to jsonb, referrer_id bigint,
    source jsonb, source_id bigint, created_at timestamptz, updated_at timestamptz
  )
)
update ${relation} as t set
  raw = d.r, token = d.token, job_id = d.job_id, job_post_id = d.job_post_id,
  job_board_id = coalesce((d.job_board ->> 'id')::bigint, d.job_board_id),
  related_post_id = d.related_post_id, related_post_type = d.related_post_type,
  credited_to_id = coalesce((d.credited_to ->> 'id')::bigint, d.referrer_id),
  credited_to_name = case when d.credited_to ->> 'id' is null then d.credited_to ->> 'name' end,
  credited_to_employee_id =
    case when d.credited_to ->> 'id' is null then d.credited_to ->> 'employee_id' end,
  source_id = coalesce((d.source ->> 'id')::bigint, d.source_id),
  created_at = d.created_at, updated_at = d.updated_at
from decoded as d
where t.account = $1::text and t.id = d.id`;
}
