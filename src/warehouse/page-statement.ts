import { type RawBuilder, sql } from 'kysely';
import type { RejectedRecord, StorageKind } from '../sync/ports.js';
import type { HistoryTarget } from './history.js';

/** What one page statement is given. */
export interface PageStatementInput {
  /** The resource's name, as stored in rejected_records.resource. */
  resource: string;
  runId: string;
  pageNumber: number;
  /** The response body (or one record's exact text in brackets). */
  body: string;
  /** Property of an object body that holds the records; null: the body is the array. */
  recordsKey: string | null;
  rejected: RejectedRecord[];
  /** True when the good records are known to carry distinct ids: no de-duplication sort needed. */
  distinctIds?: boolean;
  /**
   * Where to record a version of each record that changed; undefined when
   * history is off (HIRESYNC_HISTORY=off).
   */
  history?: HistoryTarget | undefined;
}

/** What a page statement returns: one row. */
export interface WrittenRow {
  written: number;
  max_id: string | null;
  min_id: string | null;
}

/**
 * What the warehouse needs of a resource: where its records go, how one is
 * checked, and how they are stored (the warehouse holds the statement of each
 * storage kind). The resource declarations (src/resources) provide it.
 */
export interface StoredResource extends HistoryTarget {
  /** The resource's name (rejected_records.resource, sync_runs.resource). */
  readonly name: string;
  /** The table its records land in; full runs sweep it. */
  readonly table: string;
  /** Undefined when the record can be stored, else every reason it cannot. */
  validate(record: unknown): string | undefined;
  /** Which page statement stores its records. */
  readonly storage: StorageKind;
  /** Whether a completed, unfiltered full run soft-deletes the rows it did not see. */
  readonly sweeps: boolean;
  /**
   * True for a list resource named only in HIRESYNC_RESOURCES: its tables are
   * created when first needed (ensureListResources), not by a migration.
   */
  readonly onDemand: boolean;
  /** Its typed view (`jobs_flat`, …), for records stored as sent in `data`; undefined for none. */
  readonly typedView?: string | undefined;
  /**
   * The variable that sets its list path (`HIRESYNC_TRACKING_LINKS_PATH`,
   * `HIRESYNC_RESOURCE_PATHS`), named by the deletion guard's hint; undefined
   * for a fixed path.
   */
  readonly pathVariable?: string | undefined;
}

/**
 * The one statement that stores a page's good records (its CTEs start with
 * {@link pageCte}) and returns {@link WrittenRow}: rows written, highest and
 * lowest id.
 */
export type PageStatement = (input: PageStatementInput) => RawBuilder<WrittenRow>;

/** The page's records as (r jsonb, idx int), parsed once by Postgres from the body text. */
export function pageRows(
  input: Pick<PageStatementInput, 'body' | 'recordsKey'>,
): RawBuilder<unknown> {
  const records =
    input.recordsKey === null
      ? sql`${input.body}::jsonb`
      : sql`${input.body}::jsonb -> ${input.recordsKey}::text`;
  return sql`select e.value as r, (e.ord - 1)::int as idx
    from jsonb_array_elements(${records}) with ordinality as e(value, ord)`;
}

/** Stores the rejected records of the page, once per run. */
function insertRejected(input: PageStatementInput): RawBuilder<unknown> {
  return sql`insert into rejected_records (resource, run_id, page, raw, record_key, reason)
    select ${input.resource}, ${input.runId}::bigint, ${input.pageNumber}::int, p.r,
      concat_ws(':', ${input.pageNumber}::int, p.idx, md5(p.r::text)), x.reason
    from page p
    join unnest(${input.rejected.map((r) => r.index)}::int[], ${input.rejected.map((r) => r.reason)}::text[]) as x(idx, reason)
      on x.idx = p.idx
    on conflict do nothing`;
}

/** CTEs `page` (every record), `good` (the valid ones) and, when there are any, `rejected` (stores the others). */
export function pageCte(input: PageStatementInput): RawBuilder<unknown> {
  // Most pages reject nothing: they skip the filter and the insert altogether.
  if (input.rejected.length === 0) {
    return sql`page as (${pageRows(input)}),
  good as (select r, idx from page)`;
  }
  return sql`page as (${pageRows(input)}),
  good as (
    select r, idx from page where not (idx = any(${input.rejected.map((r) => r.index)}::int[]))
  ),
  rejected as (${insertRejected(input)})`;
}
