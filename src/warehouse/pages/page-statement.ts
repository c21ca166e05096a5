import type { RejectedRecord, StorageKind } from '../../sync/ports.js';
import type { HistoryTarget } from './history.js';
import { jsonRecordsPage } from './sql/json-records-page.js';
import { REFERENCE_COLUMNS, referenceRecordsPage } from './sql/reference-records-page.js';
import { rejectedRecords } from './sql/rejected-records.js';
import {
  trackingLinksNested,
  trackingLinksPage,
  trackingLinksRows,
} from './sql/tracking-links-page.js';

/** What one page statement is given. */
export interface PageStatementInput {
  /** The account whose rows the page is (the key of every shared table it writes). */
  account: string;
  /** The resource's name, as stored in rejected_records.resource. */
  resource: string;
  runId: string;
  pageNumber: number;
  /** The response body (or one record's exact text in brackets). */
  body: string;
  /** Property of an object body that holds the records; null: the body is the array. */
  recordsKey: string | null;
  rejected: RejectedRecord[];
  /** Positions of records the table holds as they are, left alone (an incremental run); default none. */
  unchanged?: readonly number[];
  /** True when the good records are known to carry distinct ids: no de-duplication needed. */
  distinctIds: boolean;
  /** Record a version of each record that changed in the history table (HIRESYNC_HISTORY). */
  history: boolean;
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
  /** Keys its typed view always shows, with their types (see typed-views/column-plan.ts). */
  readonly columns?:
    | Readonly<
        Record<string, 'bigint' | 'numeric' | 'boolean' | 'timestamptz' | 'date' | 'text' | 'jsonb'>
      >
    | undefined;
  /**
   * The variable that sets its list path (`HIRESYNC_TRACKING_LINKS_PATH`,
   * `HIRESYNC_RESOURCE_PATHS`), named by the deletion guard's hint; undefined
   * for a fixed path.
   */
  readonly pathVariable?: string | undefined;
}

/** The statement of each storage kind, written out in src/warehouse/pages/sql. */
const STATEMENTS: Readonly<
  Record<StorageKind, (tables: { table: string; history: string }) => string>
> = {
  tracking_links: trackingLinksPage,
  json: jsonRecordsPage,
  // The reference lists: each writes the table the nested objects of tracking links fill.
  job_boards: (tables) =>
    referenceRecordsPage({ ...tables, columns: REFERENCE_COLUMNS.job_boards ?? [] }),
  sources: (tables) =>
    referenceRecordsPage({ ...tables, columns: REFERENCE_COLUMNS.sources ?? [] }),
  referrers: (tables) =>
    referenceRecordsPage({ ...tables, columns: REFERENCE_COLUMNS.referrers ?? [] }),
};

const texts = new Map<string, string>();

/**
 * The text of the statement that stores a page of `resource`: its storage
 * kind's, with its table and history table (made once per resource).
 */
export function pageStatementText(
  resource: Pick<StoredResource, 'storage' | 'table' | 'historyTable'>,
): string {
  const key = JSON.stringify([resource.storage, resource.table, resource.historyTable]);
  let text = texts.get(key);
  if (text === undefined) {
    text = STATEMENTS[resource.storage]({ table: resource.table, history: resource.historyTable });
    texts.set(key, text);
  }
  return text;
}

const besideTexts = new Map<string, { rows: string; nested: string | undefined }>();

/**
 * The statements of a page of `resource` written beside the page before it
 * (pipelined-page.ts): `rows`, run before its turn, writes the page's own
 * rows and versions, taking the page statement's parameters; `nested`, run
 * after it (tracking links only), the nested rows `rows` returned. Records
 * stored as sent have no nested rows: their page statement is `rows`.
 */
export function besideStatementTexts(
  resource: Pick<StoredResource, 'storage' | 'table' | 'historyTable'>,
): { rows: string; nested: string | undefined } {
  const key = JSON.stringify([resource.storage, resource.table, resource.historyTable]);
  let texts = besideTexts.get(key);
  if (texts === undefined) {
    const tables = { table: resource.table, history: resource.historyTable };
    texts =
      resource.storage === 'tracking_links'
        ? { rows: trackingLinksRows(tables), nested: trackingLinksNested() }
        : { rows: pageStatementText(resource), nested: undefined };
    besideTexts.set(key, texts);
  }
  return texts;
}

/**
 * The text of the statement that stores the rejected records of a page of
 * `resource` and marks their rows seen (sql/rejected-records.ts), made once
 * per resource.
 */
export function rejectedRecordsText(
  resource: Pick<StoredResource, 'table' | 'historyTable' | 'recordColumn'>,
): string {
  const key = JSON.stringify([
    'rejected',
    resource.table,
    resource.historyTable,
    resource.recordColumn,
  ]);
  let text = texts.get(key);
  if (text === undefined) {
    text = rejectedRecords({
      table: resource.table,
      history: resource.historyTable,
      record: resource.recordColumn,
    });
    texts.set(key, text);
  }
  return text;
}

/**
 * The values of the parameters of the page statement of `storage`:
 *
 * - `$1` the response body as received (jsonb: Postgres reads ids and
 *   timestamps from its text exactly), or one record's text in brackets;
 * - `$2` the property of an object body that holds the records (text), or
 *   null when the body is the array;
 * - `$3` the run's id (bigint);
 * - `$4` the positions in the page of the records the statement skips
 *   (int[], empty for none): those validation rejected (sql/rejected-records.ts
 *   stores them), and those an incremental run leaves alone because the
 *   table holds them as they are (sql/unchanged-records.ts);
 * - `$5` whether to record a version of each record that changed in the
 *   history table (HIRESYNC_HISTORY);
 * - `$6` the account (text): the key of every shared table the statement
 *   reads or writes, bound in each insert and filter (the statement names
 *   the shared tables `hiresync.data_<table>`, never an account's view);
 * - tracking links only, `$7`: whether the good records are known to carry
 *   distinct ids, so that no de-duplication is needed. Records stored as sent
 *   are sorted by id whatever their ids (inserts in id order are the faster
 *   ones there, sort included), and de-duplicated on the way.
 *
 * A page statement returns one {@link WrittenRow}.
 */
export function pageParameters(input: PageStatementInput, storage: StorageKind): unknown[] {
  const values = [
    input.body,
    input.recordsKey,
    input.runId,
    [...input.rejected.map((r) => r.index), ...(input.unchanged ?? [])],
    input.history,
    input.account,
  ];
  return storage === 'tracking_links' ? [...values, input.distinctIds] : values;
}
