/**
 * What `hiresync status` knows, as one JSON-serialisable document: per
 * account its state and last success, per resource its last run, last
 * success, a run in flight and its progress, the error and what to do; the
 * typed views that show null where records hold values; and the verdict of
 * `status --check`. `status` prints it as a table or as JSON; the console
 * renders it as a page. Timestamps are ISO 8601 UTC strings.
 */
/** An account the report covers, as the command (or the console) resolved it. */
export interface ReportAccount {
  name: string;
  /** `client_credentials`, `api_key`, `partner`; null when unknown. */
  authMode: string | null;
  /** `enabled`, `disabled`, `needs_reauthorization` or `credentials_refused`; `default` shown for its runs alone: `not configured here`. */
  state: string;
  /** Why it needs re-authorizing (state needs_reauthorization), if known. */
  reauthorizationReason?: string | null;
  /** Why its credential was refused (state credentials_refused), if known. */
  refusalReason?: string | null;
}

/** One row of sync_runs: a run of one resource. */
export interface RunReport {
  /** sync_runs.id, as text (a bigint). */
  id: string;
  mode: string;
  startedAt: string;
  /** Null while it runs. */
  finishedAt: string | null;
  /** Pages committed (while it runs: so far). */
  pages: number;
  /** Records stored (a succeeded run: the distinct records it stored). */
  records: number;
  rejected: number;
  deleted: number;
  /** `running`, `succeeded` or `failed`. */
  outcome: string;
  /** Why it failed, secrets redacted; null unless failed. */
  error: string | null;
  /** What a succeeded run could not do and what resolves it; null when nothing. */
  warnings: string | null;
}

/** A run whose sync_runs row is still `running`. */
export interface InFlightRun {
  runId: string;
  mode: string;
  startedAt: string;
  /** Pages committed so far (sync_runs.pages). */
  pages: number;
  records: number;
  /**
   * A live process holds the resource's run lock now; false: the run was
   * interrupted and resumes from its checkpoint when a worker takes it again.
   */
  active: boolean;
}

/** A checkpoint in Redis: a run that will resume from page `pagesDone + 1`. */
export interface CheckpointReport {
  runId: string;
  mode: string;
  pagesDone: number;
  savedAt: string;
}

/** Where a resource stands, from its last run. */
export type ResourceState = 'succeeded' | 'failed' | 'not_permitted' | 'running' | 'never_run';

export interface ResourceReport {
  resource: string;
  state: ResourceState;
  lastRun: RunReport | null;
  /** Its last run that succeeded. */
  lastSuccess: RunReport | null;
  /**
   * Its last run that finished: the last run, or while a run is in flight the
   * one before it, whose outcome stands (status --check) until it finishes.
   */
  lastFinished: RunReport | null;
  /**
   * The last run was refused 403: the scope the credential lacks and what to
   * do (one 403 cannot tell it from a user who is not a site administrator).
   */
  notPermitted: { scope: string; action: string } | null;
  inFlight: InFlightRun | null;
  checkpoint: CheckpointReport | null;
  /** The last run's error (redacted), or why the resource cannot be read; null when none. */
  error: string | null;
  /**
   * What to do about it, naming a command: re-authorize, ask for a scope,
   * `hiresync migrate`, or for a failed run the `hiresync sync` that runs it
   * again once its cause is fixed; null when nothing failed.
   */
  action: string | null;
  /**
   * Whether the account syncs it now (its own `--resources`, else
   * HIRESYNC_RESOURCES). A resource it no longer syncs is shown for its
   * history; no run will change its last one, so it counts in neither the
   * account's summary nor `status --check`.
   */
  synced: boolean;
  /** The API's clock was further from the worker's than HIRESYNC_UPDATED_LOOKBACK at its last run's first response. */
  clockSkew: { runId: string; skewMs: number; note: string } | null;
  /**
   * When its next scheduled run is due (the earliest of its BullMQ job
   * schedulers, incremental and full), or null when Redis holds none (no
   * worker keeps its schedules). Always set by readStatusReport.
   */
  nextRun?: NextRunReport | null;
  /**
   * Attempts at its last run that failed (Postgres lost mid-run, say) and
   * were retried from its checkpoint, and its interruptions, as the run
   * queue's jobs tell while Redis keeps them; null when none. Always set by readStatusReport.
   */
  retries?: RetriesReport | null;
}

/**
 * A run's failed attempts, each retried from its checkpoint, and its
 * interruptions (shutdown, the run lock lost), each resumed from it (see
 * {@link ResourceReport.retries}).
 */
export interface RetriesReport {
  runId: string;
  /** Attempts that failed. */
  failedAttempts: number;
  /** Times the run stopped after a checkpoint, no attempt spent, and went back to the queue. */
  interruptions: number;
  /**
   * The error of the last failed attempt; when none failed, the reason of
   * the last interruption (redacted as every stored error).
   */
  lastError: string;
}

/** A resource's next scheduled run. */
export interface NextRunReport {
  at: string;
  mode: 'incremental' | 'full';
}

/** A worker process of the deployment, from its heartbeats in Redis. Nothing secret. */
export interface WorkerReport {
  host: string;
  pid: number;
  startedAt: string;
  version: string;
  /** Its last heartbeat, or its clean stop (Redis's clock). */
  lastSeen: string;
  /** It beat within three heartbeat periods and has not stopped. */
  alive: boolean;
}

/** `status --json`'s `workers`: the worker processes of the deployment. */
export interface WorkersReport {
  /** A worker of this deployment has ever run (false: it syncs from cron, and `--max-age` does not judge it). */
  ran: boolean;
  /** The workers alive now. */
  alive: WorkerReport[];
  /** The worker seen last, alive or not; null when none ever ran. */
  lastSeen: WorkerReport | null;
  /** How often a worker beats. */
  heartbeatPeriodMs: number;
  /** `status --check --max-age` (default three heartbeat periods). */
  maxAgeMs: number;
}

/** `status --json`'s `queue`: the run queue's jobs by state (BullMQ's getJobCounts). */
export type QueueReport = Record<
  'waiting' | 'prioritized' | 'active' | 'delayed' | 'failed' | 'completed',
  number
>;

/** How many of an account's resources stand where. */
export interface AccountSummary {
  succeeded: number;
  failed: number;
  notPermitted: number;
  neverRun: number;
  running: number;
}

export interface AccountReport {
  name: string;
  authMode: string | null;
  state: string;
  /** When its last successful run (of any resource) finished. */
  lastSuccess: string | null;
  /** State needs_reauthorization: why, and what to do. */
  reauthorization: { reason: string; action: string } | null;
  /** State credentials_refused: why, and what to do. */
  credentialsRefused: { reason: string; action: string } | null;
  /** Why its runs cannot be read (its schema has no hiresync tables), if so. */
  problem: string | null;
  /** Every resource it ran was refused 403: what that most likely means. */
  everyResourceRefused: string | null;
  summary: AccountSummary;
  resources: ResourceReport[];
}

/** A typed view (or all_accounts union) that shows null where the records hold values. */
export interface TypedViewBlockReport {
  /** Its account, or `all_accounts`. */
  account: string;
  /** `schema.view`. */
  view: string;
  /** Which columns, what is in the way, and what resolves it. */
  message: string;
  since: string;
}

/** One reason `status --check` fails. */
export interface CheckProblem {
  /** Null for a problem of the deployment (no worker seen). */
  account: string | null;
  /** Null for the account's own state. */
  resource: string | null;
  kind:
    | 'needs_reauthorization'
    | 'credentials_refused'
    | 'failed'
    | 'not_permitted'
    /** A resource's last success older than `--stale`. */
    | 'stale'
    /** The deployment runs workers, but none was seen within `--max-age` (account and resource null). */
    | 'no_worker';
  /** One line: where, what, and what to do. */
  message: string;
  /**
   * A resource's failure that its account's state caused (its run met the
   * refused refresh token or credential): that state. The account's own
   * problem names it in `foldedResources`, and `status --check`'s text and the
   * console tell it there, once. Absent on every other problem.
   */
  causedBy?: 'needs_reauthorization' | 'credentials_refused';
  /**
   * An account's own problem (needs_reauthorization, credentials_refused):
   * the resources whose last run failed because of it (each also listed, with
   * `causedBy`). Absent when none did.
   */
  foldedResources?: string[];
}

/** One account that `status --check` fails, or whose runs cannot be read. */
export interface AccountNeedingAction {
  account: string;
  state: string;
  /** Why, in a few words: `needs re-authorizing`, `failed: jobs, users`, `not permitted: users`, …; `;`-separated. */
  why: string;
}

/** `hiresync status --json`'s `overview`: the summary a deployment of many accounts is read by first. */
export interface StatusOverview {
  /** Accounts in the report. */
  accounts: number;
  /** Accounts per state (`enabled`, `disabled`, `needs_reauthorization`, …), states with none left out. */
  accountStates: Record<string, number>;
  /** The resources the accounts sync now, by where they stand: the sum of the accounts' `summary`. */
  resources: AccountSummary;
  /**
   * Each resource whose last run failed or was refused 403 in an account
   * that is not disabled: in how many accounts; the most first.
   */
  failingResources: Array<{ resource: string; failed: number; notPermitted: number }>;
  /** Every account that fails `status --check` or whose runs cannot be read, in report order. */
  needingAction: AccountNeedingAction[];
  /**
   * The accounts that are not disabled whose last success is oldest, at most
   * STALEST_SHOWN (src/status/overview.ts): those that never succeeded first, then oldest first.
   */
  stalest: Array<{ account: string; state: string; lastSuccess: string | null }>;
}

/** `hiresync status --json`. */
export interface StatusReport {
  /** When it was read. */
  generatedAt: string;
  /** Where the accounts stand, in a few numbers and names whatever their number (src/status/overview.ts shapes it). */
  overview: StatusOverview;
  accounts: AccountReport[];
  typedViewBlocks: TypedViewBlockReport[];
  /** The deployment's workers (always set by readStatusReport). */
  workers?: WorkersReport;
  /** The run queue's jobs by state (always set by readStatusReport). */
  queue?: QueueReport;
  /** `status --check`: passed unless an account that is not disabled has a problem, or no worker was seen within `--max-age`. */
  check: { passed: boolean; problems: CheckProblem[] };
}

/** Options of readStatusReport (src/status/report.ts). */
export interface StatusReportOptions {
  /** HIRESYNC_UPDATED_LOOKBACK: a clock skew beyond it (and the Date header's second) is noted. */
  updatedLookbackMs: number;
  /** HIRESYNC_RESOURCES: what an account without resources of its own syncs. */
  resources: readonly string[];
  /** `--max-age`: no worker seen for longer fails the check (once one ran). Default three heartbeat periods. */
  maxAgeMs?: number;
  /** `--stale`: a resource whose last success is older fails the check. Default: not judged. */
  staleMs?: number;
}
