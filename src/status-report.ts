/**
 * What `hiresync status` knows, as one JSON-serialisable document: per
 * account its state and last success, per resource its last run, last
 * success, a run in flight and its progress, the error and what to do; the
 * typed views that show null where records hold values; and the verdict of
 * `status --check`. `status` prints it as a table or as JSON; the console
 * renders it as a page. Timestamps are ISO 8601 UTC strings.
 */
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { runKey } from './account-name.js';
import type { AccountInfo } from './accounts/stored-account.js';
import { describeWait } from './errors.js';
import { isoTimestamp, isoTimestampOrNull } from './iso-timestamp.js';
import { RunLock } from './queue/run-lock.js';
import { type ResourceStatus, readStatus, readTypedViewBlocks } from './status.js';
import { checkReport } from './status-check.js';
import { isNotPermitted, scopeOfRun } from './sync/not-permitted.js';
import type { Database, SyncRun } from './warehouse/schema.js';

/** An account the report covers, as the command (or the console) resolved it. */
export interface ReportAccount {
  name: string;
  /** `client_credentials`, `api_key`, `partner`; null when unknown. */
  authMode: string | null;
  /** `enabled`, `disabled` or `needs_reauthorization`. */
  state: string;
  /** Why it needs re-authorizing (state needs_reauthorization), if known. */
  reauthorizationReason?: string | null;
}

/** A registered account as the report takes it. */
export function reportAccountOf(account: AccountInfo): ReportAccount {
  return {
    name: account.name,
    authMode: account.authMode,
    state: account.state,
    reauthorizationReason: account.partner?.reauthorizationReason ?? null,
  };
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
   * The last run was refused 403: the scope the credential lacks and what to
   * do (one 403 cannot tell it from a user who is not a site administrator).
   */
  notPermitted: { scope: string; action: string } | null;
  inFlight: InFlightRun | null;
  checkpoint: CheckpointReport | null;
  /** The last run's error (redacted), or why the resource cannot be read; null when none. */
  error: string | null;
  /** What to do about it; null when nothing (a failed run's error says what to do). */
  action: string | null;
  /** The API's clock was further from the worker's than HIRESYNC_UPDATED_LOOKBACK at its last run's first response. */
  clockSkew: { runId: string; skewMs: number; note: string } | null;
}

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
  account: string;
  /** Null for the account's own state. */
  resource: string | null;
  kind: 'needs_reauthorization' | 'failed' | 'not_permitted';
  /** One line: where, what, and what to do. */
  message: string;
}

/** `hiresync status --json`. */
export interface StatusReport {
  /** When it was read. */
  generatedAt: string;
  accounts: AccountReport[];
  typedViewBlocks: TypedViewBlockReport[];
  /** `status --check`: passed unless an account that is not disabled has a problem. */
  check: { passed: boolean; problems: CheckProblem[] };
}

/** Options of {@link readStatusReport}. */
export interface StatusReportOptions {
  /** HIRESYNC_UPDATED_LOOKBACK: a clock skew beyond it (and the Date header's second) is noted. */
  updatedLookbackMs: number;
}

/** What to do about an account that needs re-authorizing. */
export function reauthorizationAction(account: string): string {
  return `run 'hiresync accounts authorize ${account}' (its data is kept)`;
}

/** Why account `name` needs re-authorizing (`reason` as stored, if any) and what to do. */
export function reauthorizationOf(
  name: string,
  reason: string | null | undefined,
): { reason: string; action: string } {
  return {
    reason: reason ?? 'its refresh token was refused',
    action: reauthorizationAction(name),
  };
}

/**
 * Reads the status of `accounts` (in their order; each from its own schema
 * and checkpoints under `prefix` in Redis) into one document. Never holds a
 * secret: errors are redacted as stored rows are read.
 */
export async function readStatusReport(
  db: Kysely<Database>,
  redis: Redis,
  prefix: string,
  accounts: readonly ReportAccount[],
  options: StatusReportOptions,
): Promise<StatusReport> {
  const names = accounts.map((a) => a.name);
  const generatedAt = new Date().toISOString();
  const [statuses, blocks] = await Promise.all([
    readStatus(db, redis, prefix, names),
    readTypedViewBlocks(db, names),
  ]);
  const locks = new RunLock(redis, prefix);
  const running = statuses.filter((s) => s.lastRun?.outcome === 'running');
  const held = new Set(
    (
      await Promise.all(
        running.map(async (s) =>
          (await locks.isHeld(runKey(s.account, s.resource))) ? [`${s.account}/${s.resource}`] : [],
        ),
      )
    ).flat(),
  );
  const reports = accounts.map((account) =>
    reportOfAccount(
      account,
      statuses.filter((s) => s.account === account.name),
      held,
      options,
    ),
  );
  return {
    generatedAt,
    accounts: reports,
    typedViewBlocks: blocks.map((b) => ({ ...b, since: isoTimestamp(b.since) })),
    check: checkReport(reports),
  };
}

/**
 * One account's part of the report, from its resources' statuses (as
 * readStatus reads them) and the `account/resource` pairs whose run lock a
 * live process holds.
 */
export function reportOfAccount(
  account: ReportAccount,
  statuses: readonly ResourceStatus[],
  held: ReadonlySet<string>,
  options: StatusReportOptions,
): AccountReport {
  const ran = statuses.filter((s) => s.lastRun !== undefined);
  const refused = ran.filter((s) => isNotPermitted(s.lastRun));
  const everyRefused = refused.length === ran.length && ran.length > 1;
  const resources = statuses.map((s) =>
    resourceReport(account, s, held.has(`${s.account}/${s.resource}`), options),
  );
  const successes = resources.flatMap((r) =>
    r.lastSuccess?.finishedAt ? [r.lastSuccess.finishedAt] : [],
  );
  const count = (state: ResourceState) => resources.filter((r) => r.state === state).length;
  return {
    name: account.name,
    authMode: account.authMode,
    state: account.state,
    lastSuccess: successes.sort().at(-1) ?? null,
    reauthorization:
      account.state === 'needs_reauthorization'
        ? reauthorizationOf(account.name, account.reauthorizationReason)
        : null,
    problem: statuses.find((s) => s.problem !== undefined)?.problem ?? null,
    everyResourceRefused: everyRefused
      ? 'every resource answered 403: the authorizing user is most likely not a site administrator ' +
        `(or the credential holds none of the scopes ${refused.map((s) => scopeOfRun(s.resource, s.lastRun?.error ?? null)).join(', ')}); ` +
        'scheduled incremental runs wait for the next full run'
      : null,
    summary: {
      succeeded: count('succeeded'),
      failed: count('failed'),
      notPermitted: count('not_permitted'),
      neverRun: count('never_run'),
      running: count('running'),
    },
    resources,
  };
}

function resourceReport(
  account: ReportAccount,
  status: ResourceStatus,
  active: boolean,
  options: StatusReportOptions,
): ResourceReport {
  const last = status.lastRun;
  const refused = isNotPermitted(last);
  const scope = refused ? scopeOfRun(status.resource, last?.error ?? null) : undefined;
  const state: ResourceState =
    last === undefined
      ? 'never_run'
      : refused
        ? 'not_permitted'
        : last.outcome === 'running'
          ? 'running'
          : last.outcome === 'failed'
            ? 'failed'
            : 'succeeded';
  const checkpoint = status.checkpoint;
  return {
    resource: status.resource,
    state,
    lastRun: runReport(last),
    lastSuccess: runReport(status.lastSuccess),
    notPermitted: scope === undefined ? null : { scope, action: notPermittedAction(scope) },
    inFlight:
      last?.outcome === 'running'
        ? {
            runId: last.id,
            mode: last.mode,
            startedAt: isoTimestamp(last.started_at),
            pages: last.pages,
            records: Number(last.records),
            active,
          }
        : null,
    checkpoint: checkpoint
      ? {
          runId: checkpoint.runId,
          mode: checkpoint.mode,
          pagesDone: checkpoint.pagesDone,
          savedAt: isoTimestamp(checkpoint.updatedAt),
        }
      : null,
    error: status.problem ?? (last?.outcome === 'failed' ? (last.error ?? null) : null),
    action:
      account.state === 'needs_reauthorization'
        ? reauthorizationAction(account.name)
        : scope === undefined
          ? null
          : notPermittedAction(scope),
    clockSkew: clockSkewOf(status, options.updatedLookbackMs),
  };
}

function notPermittedAction(scope: string): string {
  return (
    `ask for scope ${scope} (a partner app: through the API vendor's partner support, then the customer authorizes again), ` +
    'or, if every resource answers 403, make the authorizing user a site administrator; its scheduled incremental runs wait for the next full run, the other resources go on'
  );
}

function runReport(run: SyncRun | undefined): RunReport | null {
  if (run === undefined) return null;
  return {
    id: run.id,
    mode: run.mode,
    startedAt: isoTimestamp(run.started_at),
    finishedAt: isoTimestampOrNull(run.finished_at),
    pages: run.pages,
    records: Number(run.records),
    rejected: Number(run.rejected),
    deleted: Number(run.deleted),
    outcome: run.outcome,
    error: run.error,
    warnings: run.warnings,
  };
}

/**
 * The API's clock further from the worker's than HIRESYNC_UPDATED_LOOKBACK at
 * the first response of the resource's last run that read one (beyond the
 * `Date` header's one-second resolution), or null.
 */
function clockSkewOf(status: ResourceStatus, lookbackMs: number): ResourceReport['clockSkew'] {
  const run = [status.lastRun, status.lastSuccess].find((r) => r?.api_clock_skew_ms != null);
  if (!run) return null;
  const skewMs = Number(run.api_clock_skew_ms);
  if (Math.abs(skewMs) <= lookbackMs + 1000) return null;
  return {
    runId: run.id,
    skewMs,
    note:
      `the API's clock was ${describeWait(Math.abs(skewMs))} ${skewMs < 0 ? 'behind' : 'ahead of'} this worker's ` +
      `at the first response of run ${run.id}, more than HIRESYNC_UPDATED_LOOKBACK (${describeWait(lookbackMs)}); ` +
      "the updated filter starts from the API's clock, but check the worker's time (NTP)",
  };
}
