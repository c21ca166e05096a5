/**
 * The sync engine's ports: the small interfaces a run needs of the API (a page
 * source), the warehouse (a run store) and Redis (a checkpoint store), and the
 * types they speak. The adapters (src/api, src/warehouse, src/queue) import
 * these; this folder imports none of them.
 */

/** A resource's name: `HIRESYNC_RESOURCES`, `sync_runs.resource`, job names, Redis keys. */
export type ResourceName = string;

/**
 * How a resource's records are stored: `tracking_links` normalised into
 * tracking_links with their job boards, referrers and sources; `json` one row
 * per id with the record as sent in `data`. The warehouse holds the statement
 * of each.
 */
export type StorageKind = 'tracking_links' | 'json' | 'job_boards' | 'sources' | 'referrers';

/** The settings that may override a resource's list path. */
export type PathSetting = 'HIRESYNC_TRACKING_LINKS_PATH' | 'HIRESYNC_RESOURCE_PATHS';

/**
 * What a resource's list path and first-page query may depend on: a part of
 * the API configuration (`ApiConfig` has it), so that a declaration knows
 * nothing else of the configuration.
 */
export interface ResourceSettings {
  /** `HIRESYNC_TRACKING_LINKS_PATH`; undefined: the declared default path. */
  readonly trackingLinksPath?: string | undefined;
  /** `HIRESYNC_RESOURCE_PATHS`: list paths of other resources by name. */
  readonly resourcePaths?: Readonly<Record<string, string>> | undefined;
  /** `HIRESYNC_JOBS_STATUS`: the status filter of the jobs list. */
  readonly jobsStatus?: string | undefined;
}

/** One walk of a run: its query (undefined for the default walk) and its first page. */
export interface PlannedWalk {
  /** Sent beside `per_page` on the walk's first request (`active=false`); undefined: the default walk. */
  readonly query: string | undefined;
  /** The walk's first-page URL: the list path, the filters, `per_page` and the walk's query. */
  readonly firstUrl: string;
}

/**
 * What every run of one resource of one account reads, merged once per run
 * from the resource's declaration, the deployment's settings and the
 * account's (see planRead in src/resources/read-plan.ts).
 */
export interface ReadPlan {
  readonly resource: ResourceName;
  /** The walks of a run, in order: the default walk, then each extra walk. */
  readonly walks: readonly [PlannedWalk, ...PlannedWalk[]];
  /** The filters every walk sends, as `sync_runs.filter` records them (`status=open`); undefined: none, a full run sweeps. */
  readonly filter: string | undefined;
  /**
   * Incremental runs' updated filter: the template (holding `{since}`) sent
   * on each walk's first request, and the lookback subtracted from `{since}`.
   * Undefined: incremental runs stop by id.
   */
  readonly updated: { readonly template: string; readonly lookbackMs: number } | undefined;
  /**
   * A skew between the API's clock and this worker's larger than this (beyond
   * the `Date` header's one-second resolution) is logged as a warning at the
   * run's first response. Undefined: not checked.
   */
  readonly maxClockSkewMs: number | undefined;
  /**
   * True for a list with no filter by update time: every run of it is a full
   * run, since an incremental one would see no update. Absent: false.
   */
  readonly everyRunFull?: boolean | undefined;
}

/** `full` reads every page and sweeps deletions; `incremental` reads new records only. */
export type RunMode = 'full' | 'incremental';

/** The API's clock as one response showed it (its `Date` header). */
export interface ApiClockReading {
  /** The response's `Date`, as ISO 8601 UTC (whole seconds, as the header has them). */
  date: string;
  /**
   * The API's clock less this worker's when the response arrived, in ms
   * (negative: the API is behind), taking the header's second at its middle;
   * good to about a second.
   */
  skewMs: number;
}

/** One page of a list endpoint. */
export interface Page {
  /**
   * 1-based position in the run, counted across its walks (a resumed run
   * counts on from its checkpoint).
   */
  number: number;
  /** The URL this page was read from. */
  url: string;
  /** The records, parsed. */
  records: unknown[];
  /** The response body exactly as received (ids beyond 2^53 and timestamps survive in it). */
  body: string;
  /** The `next` link exactly as received; undefined on the last page. */
  nextUrl: string | undefined;
  /** The API's clock at this response; undefined when it sent no readable `Date`. */
  apiClock?: ApiClockReading | undefined;
}

/** A record that could not be stored as a row, and why. */
export interface RejectedRecord {
  /** Position in the page. */
  index: number;
  reason: string;
}

/** What a page write did. */
export interface PageWriteResult {
  /** Rows upserted (records of the page less the rejected, less duplicates of an id). */
  written: number;
  rejected: RejectedRecord[];
  /**
   * Highest and lowest id of the page's records (all but the rejected), as
   * text (ids may exceed 2^53): written, or left alone as stored.
   */
  maxId: string | null;
  minId: string | null;
  /** Records left alone because the warehouse holds them as they are (`skipUnchanged`). */
  unchanged?: number;
}

/**
 * A run's state after its last committed page, written after each commit.
 * `nextUrl` is the API's `next` link exactly as received; it is never parsed.
 */
export interface Checkpoint {
  runId: string;
  resource: ResourceName;
  mode: RunMode;
  /** The URL of the next page to read (the first page's URL before any commit). */
  nextUrl: string;
  /** The run's first-page URL (its default walk's, with the updated filter it was sent with), to restart from. */
  firstUrl?: string;
  /**
   * Which walk of the run `nextUrl` belongs to: 0 the default walk, then
   * each extra walk (`HIRESYNC_EXTRA_WALKS`) in order. Absent (a checkpoint
   * saved before extra walks existed): 0.
   */
  walk?: number;
  /** The extra walk's query (`active=false`), saying which walk it is; absent for the default walk. */
  walkQuery?: string;
  /** The updated filter an incremental run sends on each walk's first request, if any. */
  updatedQuery?: string;
  /** The operator confirmed a mass deletion for this run (`--allow-mass-delete`): kept across a resume. */
  allowMassDelete?: boolean;
  /** Pages committed so far. */
  pagesDone: number;
  /** Incremental runs stop after the page reaching an id at or below this one. */
  stopAtId: string | null;
  updatedAt: string;
}

/** Where checkpoints live (Redis in production). */
export interface CheckpointStore {
  load(resource: ResourceName): Promise<Checkpoint | undefined>;
  save(checkpoint: Checkpoint): Promise<void>;
  clear(resource: ResourceName): Promise<void>;
}

/** Options of {@link PageSource.pages}. */
export interface PageWalkOptions {
  signal?: AbortSignal | undefined;
  /** Fetch the next page while the current one is written. */
  prefetch?: boolean;
  /** `startUrl` is a checkpointed `next` URL: a 422 for it is a stale cursor (CursorRejectedError), as for every `next` URL. */
  fromCheckpoint?: boolean;
  /**
   * Called with each page as soon as it has arrived and been parsed: for a
   * prefetched page, while the page before it is still being written.
   */
  prepare?: (page: Page) => void;
  /**
   * Told of each rate-limit wait before it starts (a 429's Retry-After, or
   * the shared pacing). The wait ends at once when `signal` is aborted, so
   * the caller may stop the walk rather than wait (the queue gives a run's
   * worker slot up this way).
   */
  onRateLimitWait?: ((wait: RateLimitWait) => void) | undefined;
  /** Named, with the page's number, in the debug line of each request of the walk. */
  requestLog?: { resource: ResourceName; runId: string };
}

/** A rate-limit wait a page walk is about to spend. */
export interface RateLimitWait {
  /** How long, in ms. */
  ms: number;
  /** What asks for it, for messages: `429 from /v3/jobs`, `rate-limit pacing`. */
  cause: string;
}

/** What a run store learned of a page before writing it (its validation), opaque to the run. */
export interface PreparedPage {
  readonly rejected: readonly RejectedRecord[];
}

/** Pages of a resource from a URL on (the API client in production). */
export interface PageSource {
  /** The first-page URL of the resource's default walk (a run's walks come in its ReadPlan). */
  firstPageUrl(resource: ResourceName): string;
  /** With `prefetch`, the next page is fetched while the current one is written. */
  pages(startUrl: string, startPage: number, options?: PageWalkOptions): AsyncIterable<Page>;
}

/** What a new run of a resource is planned from (see {@link RunStore.completedRuns}). */
export interface CompletedRuns {
  /** Has the resource ever completed a full run? */
  fullRunDone: boolean;
  /** The highest id any completed run of the resource saw (where an incremental run stops). */
  highestId: string | null;
  /** The resource's latest run (highest id), any mode and outcome: how it ended and why; undefined before any. */
  lastRun: { outcome: 'running' | 'succeeded' | 'failed'; error: string | null } | undefined;
  /**
   * Asked for with `updated`: the start of the resource's last successful run
   * that saw every update (a full run, or one whose filter holds
   * `filterPrefix`) less `lookbackMs`, as an ISO 8601 UTC timestamp
   * (microseconds): on the API's clock (the `Date` of that run's first
   * response), or, when that is unknown, on the database's (the run's
   * start); undefined before any.
   */
  updatedSince: string | undefined;
}

/** A run's counts. */
export interface RunTotals {
  pages: number;
  records: number;
  rejected: number;
  deleted: number;
}

/** Options of {@link RunStore.writePage}. */
export interface PageWriteOptions {
  /**
   * Leaves alone the records the warehouse already holds as they are (an
   * incremental run): their rows are not written again, and a page of only
   * such records (none rejected) is only added to its run's counts, in one
   * statement. A full run writes every record: its sweep needs each row it
   * saw marked with it.
   */
  skipUnchanged?: boolean;
  /**
   * The API's clock at the run's first response (its `Date`), recorded with
   * the page, from which the next incremental run's updated filter starts.
   * The first reading of a run is kept: a run that restarts from its first
   * page keeps it.
   */
  apiClock?: ApiClockReading | undefined;
  /**
   * The page before this one, still being written (a pipelined walk): this
   * page commits only after it has, and fails, committing nothing, when it
   * fails. The store may write this page's rows meanwhile, where no row of
   * the two could be the same.
   */
  earlier?: EarlierPage | undefined;
}

/** The page written before the one in hand, not yet known committed (see PageWriteOptions.earlier). */
export interface EarlierPage {
  /** Settles once it and every page before it have committed; rejects when one failed. */
  committed: Promise<unknown>;
  /** Its preparePage result, if made. */
  prepared: PreparedPage | undefined;
}

/** What a refresh of a typed view changed (see RunStore.refreshTypedView). */
export interface TypedViewRefresh {
  /** Keys that got a column. */
  added: string[];
  /** Columns whose type widened, as `key: old → new`. */
  retyped: string[];
  /** Columns renamed under today's naming rule, as `key: old → new`, if any. */
  renamed?: string[];
  /** Why the view was left as it was, if it was. */
  warning?: string;
}

/** What a run needs of the warehouse. */
export interface RunStore {
  createRun(run: {
    resource: ResourceName;
    mode: RunMode;
    filter?: string | undefined;
  }): Promise<string>;
  /** Outcome of a run, or undefined if the row is gone. */
  runOutcome(runId: string): Promise<'running' | 'succeeded' | 'failed' | undefined>;
  /**
   * What a new run of the resource is planned from: whether it ever completed
   * a full run, the highest id any completed run of it saw, its latest run
   * (a not-permitted resource's scheduled incremental runs are skipped by
   * it: src/sync/not-permitted.ts), and, when
   * `updated` is given, where the updated filter starts (see
   * {@link CompletedRuns.updatedSince}).
   */
  completedRuns(
    resource: ResourceName,
    updated?: { lookbackMs: number; filterPrefix: string },
  ): Promise<CompletedRuns>;
  /** Validates a page's records (CPU only), so it can happen while the previous page is written. */
  preparePage(resource: ResourceName, page: Page): PreparedPage;
  /**
   * Writes a page in one transaction, and adds it to its run's counts;
   * `prepared` is its {@link preparePage} result, if made.
   */
  writePage(
    resource: ResourceName,
    runId: string,
    page: Page,
    prepared?: PreparedPage,
    options?: PageWriteOptions,
  ): Promise<PageWriteResult>;
  /** Clears a run's counts when it restarts from its first page. */
  resetProgress(runId: string): Promise<void>;
  /** Marks what a completed full run did not see; throws when the deletion guard trips. */
  sweepDeletions(
    resource: ResourceName,
    runId: string,
    options?: { allowMassDelete?: boolean },
  ): Promise<number>;
  /**
   * Brings the resource's typed view up to date with what a completed full
   * run stored; undefined for a resource without one (tracking links).
   */
  refreshTypedView(resource: ResourceName, runId: string): Promise<TypedViewRefresh | undefined>;
  /** Ends a run as failed, with its error; a run that had ended already keeps how it ended. */
  finishRun(runId: string, outcome: { outcome: 'failed'; error: string }): Promise<void>;
  /**
   * Ends a completed run as succeeded and returns its counts (`records`: the
   * distinct records it stored).
   */
  completeRun(resource: ResourceName, runId: string): Promise<RunTotals>;
}
