import type { ColumnType, Generated, Selectable } from 'kysely';
import type { RunMode } from '../sync/ports.js';

/**
 * Row types of every table. bigint columns are strings (pg returns them so, and
 * ids above 2^53 must survive); timestamptz columns are strings too, so the
 * microseconds the API sent are never rounded through a JS Date.
 */
type Id = ColumnType<string, string | number, string | number>;
type Timestamp = ColumnType<string, string | undefined, string>;
type NullableTimestamp = ColumnType<string | null, string | null | undefined, string | null>;
type Json = ColumnType<unknown, string, string>;

interface Bookkeeping {
  first_synced_at: Generated<string>;
  synced_at: Generated<string>;
}

/** The columns every synced record table has besides its record's own. */
interface SyncedRow extends Bookkeeping {
  id: Id;
  /** Set when a full run of the table's own list no longer saw the id (migration 0010). */
  deleted_at: NullableTimestamp;
  /** The run of the table's own list that last saw the id. */
  last_seen_run_id: string | null;
  /** When the current version began (valid_from of its open version in `<table>_history`). */
  changed_at: Generated<string>;
}

/** A job board, referrer or source: raw null for an id known only from a flat link. */
interface ReferenceRow extends SyncedRow {
  raw: Json | null;
  source_run_id: string | null;
  source_updated_at: string | null;
}

export interface JobBoardsTable extends ReferenceRow {
  company_name: string | null;
  url_token: string | null;
}

export interface ReferrersTable extends ReferenceRow {
  name: string | null;
  employee_id: string | null;
}

export interface SourcesTable extends ReferenceRow {
  public_name: string | null;
}

export interface TrackingLinksTable extends SyncedRow {
  token: string | null;
  job_id: string | null;
  job_post_id: string | null;
  job_board_id: string | null;
  related_post_id: string | null;
  related_post_type: string | null;
  credited_to_id: string | null;
  credited_to_name: string | null;
  credited_to_employee_id: string | null;
  source_id: string | null;
  created_at: NullableTimestamp;
  updated_at: NullableTimestamp;
  raw: Json;
}

export interface RecordTable extends SyncedRow {
  data: Json;
}

/** A row of a `<resource>_history` table: one version of a record (migrations/0005_history.ts). */
export interface HistoryRow {
  id: string;
  valid_from: string;
  /** Null for the current version. */
  valid_to: string | null;
  run_id: string | null;
  /** True for the version that records a deletion. */
  deleted: Generated<boolean>;
}

/** History of a JSON-stored resource: the record as sent in `data`. */
export interface RecordHistoryTable extends HistoryRow {
  data: Json;
}

/** History of tracking links: the record as sent in `raw`. */
export interface TrackingLinksHistoryTable extends HistoryRow {
  raw: Json;
}

/** A version of a job board, source or referrer; raw null for an id known only from a flat link. */
export interface ReferenceHistoryTable extends HistoryRow {
  raw: Json | null;
}

export type RunOutcome = 'running' | 'succeeded' | 'failed';

export interface SyncRunsTable {
  id: Generated<string>;
  resource: string;
  mode: RunMode;
  filter: string | null;
  started_at: Timestamp;
  finished_at: NullableTimestamp;
  pages: Generated<number>;
  records: ColumnType<string, never, string | number>;
  rejected: ColumnType<string, never, string | number>;
  deleted: ColumnType<string, never, string | number>;
  max_id: string | null;
  outcome: Generated<RunOutcome>;
  error: string | null;
  /** What a succeeded run could not do, and what resolves it (migration 0007). */
  warnings: string | null;
  /** The `Date` of the run's first response (the API's clock); null when unknown. */
  api_started_at: NullableTimestamp;
  /** The API's clock less the worker's at the run's first response, in ms; null when unknown. */
  api_clock_skew_ms: ColumnType<string | null, string | number | null | undefined, string | number>;
}

export interface RejectedRecordsTable {
  id: Generated<string>;
  resource: string;
  run_id: string | null;
  page: number | null;
  raw: Json;
  record_key: string;
  reason: string;
  rejected_at: Timestamp;
}

export interface TrackingLinksFlatView {
  id: string;
  token: string | null;
  job_id: string | null;
  job_post_id: string | null;
  job_board_id: string | null;
  job_board_company_name: string | null;
  job_board_url_token: string | null;
  related_post_id: string | null;
  related_post_type: string | null;
  credited_to_id: string | null;
  credited_to_name: string | null;
  credited_to_employee_id: string | null;
  source_id: string | null;
  source_public_name: string | null;
  created_at: string | null;
  updated_at: string | null;
  deleted_at: string | null;
  synced_at: string;
  last_seen_run_id: string | null;
  /** When the link as stored last changed (its current version's valid_from). */
  changed_at: string;
}

/** A row of `hiresync.accounts`, hiresync's control table (migrations/hiresync). */
export interface AccountsTable {
  name: string;
  auth_mode: 'client_credentials' | 'api_key' | 'partner';
  base_url: string;
  auth_url: string | null;
  client_id: string | null;
  sub: string | null;
  /** Sealed by SecretBox (`hs1.…`); never plaintext. */
  secret: string | null;
  credential_namespace: string | null;
  state: Generated<'enabled' | 'disabled' | 'needs_reauthorization' | 'credentials_refused'>;
  /** Why it is in state credentials_refused (the token endpoint's refusal); null otherwise. */
  refusal_reason: Generated<string | null>;
  created_at: Generated<string>;
  updated_at: Generated<string>;
  /** bigint, as text; the trigger increments it on every update. */
  version: Generated<string>;
}

/** A row of `hiresync.erasures`: one record erased, never its content (migrations/hiresync/0010). */
export interface ErasuresTable {
  id: Generated<string>;
  account: string;
  resource: string;
  record_id: Id;
  erased_at: Generated<string>;
  rows_erased: number;
  history_versions_erased: number;
  rejected_records_erased: number;
  origin: 'command' | 'deleted_after';
  note: string | null;
}

/** The key column every shared table leads with: the account the row belongs to. */
export interface AccountKey {
  account: string;
}

export interface Database {
  /**
   * Every account's runs (migration hiresync/0009): hiresync's statements
   * name it so, the account a bound parameter in their key or filter.
   */
  'hiresync.data_sync_runs': SyncRunsTable & AccountKey;
  job_boards: JobBoardsTable;
  referrers: ReferrersTable;
  sources: SourcesTable;
  tracking_links: TrackingLinksTable;
  jobs: RecordTable;
  job_posts: RecordTable;
  sync_runs: SyncRunsTable;
  rejected_records: RejectedRecordsTable;
  tracking_links_flat: TrackingLinksFlatView;
  tracking_links_history: TrackingLinksHistoryTable;
  jobs_history: RecordHistoryTable;
  job_posts_history: RecordHistoryTable;
  job_boards_history: ReferenceHistoryTable;
  sources_history: ReferenceHistoryTable;
  referrers_history: ReferenceHistoryTable;
  /** In schema hiresync whatever the search_path: always named with its schema. */
  'hiresync.accounts': AccountsTable;
  /** In schema hiresync whatever the search_path: always named with its schema. */
  'hiresync.erasures': ErasuresTable;
}

export type SyncRun = Selectable<SyncRunsTable>;
export type AccountRow = Selectable<AccountsTable>;
