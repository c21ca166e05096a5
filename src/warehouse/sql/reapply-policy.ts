import { quoteIdentifier } from './quote-identifier.js';

/**
 * The statements of reapply-policy, which rewrites stored records under the
 * current field policy in batches keyed by each relation's primary key (the
 * account leads it; the statements run through the account's views, pointed
 * at its schema, so they read and write that account's rows only).
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
  /** The relation, as the account's schema names it. */
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
 * Parameters: table and rejected — `$1` the last id done (bigint or null),
 * `$2` since (timestamptz or null), `$3` the limit, and for rejected `$4`
 * the resource; history — `$1` the last id, `$2` its valid_from, `$3` since,
 * `$4` the limit.
 */
export function reapplyRead(shape: ReapplyShape): string {
  const relation = quoteIdentifier(shape.relation);
  const column = quoteIdentifier(shape.column);
  const written = WRITTEN_AT[shape.kind];
  if (shape.kind === 'history') {
    return `-- A batch of versions of ${relation} for reapply-policy.
select ${selectList(shape)} from ${relation} as r
where ${column} is not null
  and ($1::bigint is null or (r.id, r.valid_from) > ($1::bigint, $2::timestamptz))
  and ($3::timestamptz is null or r.${written} >= $3::timestamptz)
order by r.id, r.valid_from limit $4`;
  }
  const resource = shape.kind === 'rejected' ? ' and resource = $4::text' : '';
  return `-- A batch of rows of ${relation} for reapply-policy.
select ${selectList(shape)} from ${relation} as r
where ${column} is not null${resource}
  and ($1::bigint is null or r.id > $1::bigint)
  and ($2::timestamptz is null or r.${written} >= $2::timestamptz)
order by r.id limit $3`;
}

/**
 * The rows of the keys given, locked for update until the transaction ends,
 * read again under the lock. With `skipLocked`, rows another transaction
 * holds (a page of a run writing them) are left out rather than waited for:
 * a batch never waits while it holds locks, so it can never deadlock with
 * a page that locks the same rows in another order. The caller takes the
 * rows left out one at a time, each in a transaction of its own that waits.
 *
 * Parameters: table — `$1` the ids (bigint[]); rejected — `$1` the ids, `$2`
 * the resource; history — `$1` the ids, `$2` their valid_from (timestamptz[]).
 */
export function reapplyLock(shape: ReapplyShape, skipLocked: boolean): string {
  const relation = quoteIdentifier(shape.relation);
  const column = quoteIdentifier(shape.column);
  const keys =
    shape.kind === 'history'
      ? '(id, valid_from) in (select * from unnest($1::bigint[], $2::timestamptz[]))'
      : `id = any($1::bigint[])${shape.kind === 'rejected' ? ' and resource = $2::text' : ''}`;
  return `-- Rows of ${relation} to rewrite, locked.
select ${selectList(shape)} from ${relation}
where ${keys} and ${column} is not null
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
 * Parameters: `$1` the ids (bigint[]); then history — `$2` their valid_from
 * (timestamptz[]), `$3` the texts (text[]); rejected — `$2` the texts, `$3`
 * whether each is kept as a JSON string (boolean[]: a record Postgres could
 * not hold as jsonb is stored as its text); table — `$2` the texts, then one
 * text[] per column of `columns`.
 */
export function reapplyWrite(shape: ReapplyShape): string {
  const relation = quoteIdentifier(shape.relation);
  const column = quoteIdentifier(shape.column);
  if (shape.kind === 'history') {
    return `-- Versions of ${relation} rewritten by reapply-policy.
update ${relation} as h set ${column} = u.text::jsonb
from unnest($1::bigint[], $2::timestamptz[], $3::text[]) as u(id, valid_from, text)
where h.id = u.id and h.valid_from = u.valid_from`;
  }
  if (shape.kind === 'rejected') {
    return `-- Rejected records rewritten by reapply-policy.
update ${relation} as r
set raw = case when u.as_text then to_jsonb(u.text) else u.text::jsonb end
from unnest($1::bigint[], $2::text[], $3::boolean[]) as u(id, text, as_text)
where r.id = u.id`;
  }
  if (shape.trackingLinks) return trackingLinksWrite(relation);
  const columns = shape.columns ?? [];
  const names = columns.map((_, i) => `c${i}`);
  const sets = columns.map((c, i) => `, ${quoteIdentifier(c)} = u.${names[i]}`).join('');
  const arrays = columns.map((_, i) => `, $${i + 3}::text[]`).join('');
  return `-- Rows of ${relation} rewritten by reapply-policy.
update ${relation} as t set ${column} = u.text::jsonb${sets}
from unnest($1::bigint[], $2::text[]${arrays}) as u(id, text${names.map((n) => `, ${n}`).join('')})
where t.id = u.id`;
}

function trackingLinksWrite(relation: string): string {
  return `-- Tracking links rewritten by reapply-policy, their typed columns read from the new record.
with u as (
  select v.id, v.text::jsonb as r from unnest($1::bigint[], $2::text[]) as v(id, text)
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
where t.id = d.id`;
}
