/**
 * One account's part of the status report, from what readStatus read of its
 * resources: pure shaping, no I/O (src/status/report.ts reads).
 */

import { credentialsRefusedAction, describeWait } from '../errors.js';
import { isoTimestamp, isoTimestampOrNull } from '../iso-timestamp.js';
import { isNotPermitted, scopeOfRun } from '../sync/not-permitted.js';
import type { SyncRun } from '../warehouse/tables.js';
import type { ResourceStatus } from './read-status.js';
import type {
  AccountReport,
  ReportAccount,
  ResourceReport,
  ResourceState,
  RunReport,
  StatusReportOptions,
} from './report-types.js';

/**
 * What to do about an account that needs re-authorizing: a connect link
 * first, since a partner's customer sits elsewhere; `accounts authorize`
 * only where their browser reaches this host's loopback callback.
 */
export function reauthorizationAction(account: string): string {
  return (
    `send the customer's administrator a connect link ('hiresync accounts invite ${account}'), ` +
    `or run 'hiresync accounts authorize ${account}' where their browser can reach this host (its data is kept)`
  );
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
 * Why account `name` (authenticating with `authMode`) is in state
 * credentials_refused (`reason` as stored, if any) and what to do.
 */
export function credentialsRefusedOf(
  name: string,
  authMode: string | null,
  reason: string | null | undefined,
): { reason: string; action: string } {
  return {
    reason: reason ?? 'the token service refused its credential',
    action: credentialsRefusedAction(name, authMode),
  };
}

/**
 * One account's part of the report, from its resources' statuses (as
 * readStatus reads them), the `account/resource` pairs whose run lock a
 * live process holds, and the resources the account syncs now (`synced`).
 */
export function reportOfAccount(
  account: ReportAccount,
  statuses: readonly ResourceStatus[],
  held: ReadonlySet<string>,
  synced: ReadonlySet<string>,
  options: StatusReportOptions,
): AccountReport {
  const ran = statuses.filter((s) => s.lastRun !== undefined);
  const refused = ran.filter((s) => isNotPermitted(s.lastRun));
  const everyRefused = refused.length === ran.length && ran.length > 1;
  const resources = statuses.map((s) =>
    resourceReport(
      account,
      s,
      held.has(`${s.account}/${s.resource}`),
      synced.has(s.resource),
      options,
    ),
  );
  const successes = resources.flatMap((r) =>
    r.lastSuccess?.finishedAt ? [r.lastSuccess.finishedAt] : [],
  );
  // A resource no longer synced keeps its last run for good: it is history, not a state.
  const count = (state: ResourceState) =>
    resources.filter((r) => r.synced && r.state === state).length;
  return {
    name: account.name,
    authMode: account.authMode,
    state: account.state,
    lastSuccess: successes.sort((a, b) => (timeKey(a) < timeKey(b) ? -1 : 1)).at(-1) ?? null,
    reauthorization:
      account.state === 'needs_reauthorization'
        ? reauthorizationOf(account.name, account.reauthorizationReason)
        : null,
    credentialsRefused:
      account.state === 'credentials_refused'
        ? credentialsRefusedOf(account.name, account.authMode, account.refusalReason)
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
  synced: boolean,
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
    lastFinished: runReport(last?.outcome === 'running' ? status.lastFinished : last),
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
        : account.state === 'credentials_refused'
          ? credentialsRefusedAction(account.name, account.authMode)
          : scope !== undefined
            ? notPermittedAction(scope)
            : status.problem !== undefined
              ? "run 'hiresync migrate'"
              : state === 'failed'
                ? failedRunAction(account.name, status.resource)
                : null,
    synced,
    clockSkew: clockSkewOf(status, options.updatedLookbackMs),
  };
}

/**
 * An ISO 8601 UTC timestamp as text that sorts by time: Postgres prints as
 * many fraction digits as it needs (`12:00:00Z` is before `12:00:00.5Z`).
 */
function timeKey(iso: string): string {
  return iso.replace(
    /(:\d\d)(?:\.(\d+))?Z$/,
    (_, seconds: string, fraction = '') => `${seconds}.${fraction.padEnd(6, '0')}Z`,
  );
}

/**
 * What to do about a failed run: the command that runs it again once its
 * cause is fixed (the setting to change is in its error: HIRESYNC_RESOURCES
 * or 'accounts update NAME --resources' for a 404, HIRESYNC_PER_PAGE and the
 * filters for a 422, HIRESYNC_BASE_URL for an API that cannot be reached).
 */
export function failedRunAction(account: string, resource: string): string {
  return (
    `run it again once its cause is fixed: 'hiresync sync --account ${account} --resource ${resource}' ` +
    "(the worker's next scheduled run retries it too)"
  );
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
