/**
 * The rules of `status --check --max-age` and `--stale`: pure, given what
 * was read and the clocks to judge it by.
 */
import { checkReport } from './check.js';
import type { AccountReport, CheckProblem, StatusReport, WorkerReport } from './report-types.js';

/** A worker as the rule judges it: its last heartbeat in milliseconds since the epoch. */
export interface SeenWorker {
  host: string;
  pid: number;
  lastSeenMs: number;
  /** Its live entry is still there (a TTL, which no clock moves); undefined when unknown. */
  alive?: boolean;
}

/** A duration for people: `250ms`, `45s`, `3m`, `5h`, `2d` (rounded down to its largest unit). */
export function ageText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.floor(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s}s`;
  if (s < 120 * 60) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/**
 * `--max-age`: a problem when the deployment has run workers (`workers` is
 * not empty) and none was seen within `maxAgeMs` of `nowMs` (by the clock
 * that stamped them, Redis's). A deployment that never ran a worker (it
 * syncs from cron) is not judged. A heartbeat stamped after `nowMs` (a
 * Redis failover onto a host whose clock is behind) counts as seen now while
 * its worker is alive (its live entry's TTL runs whatever the clock), and
 * not at all once it stopped; one exactly `maxAgeMs` old is still within it.
 */
export function noWorkerProblem(
  workers: readonly SeenWorker[],
  nowMs: number,
  maxAgeMs: number,
): CheckProblem | undefined {
  if (workers.length === 0) return undefined;
  const last = workers.reduce((a, b) => (b.lastSeenMs > a.lastSeenMs ? b : a));
  // Stamped ahead of now and stopped: its age is unknown, so it proves no worker runs.
  const seen = workers.filter((w) => w.lastSeenMs <= nowMs || w.alive !== false);
  const newest = seen.reduce<SeenWorker | undefined>(
    (a, b) => (a === undefined || b.lastSeenMs > a.lastSeenMs ? b : a),
    undefined,
  );
  const age =
    newest === undefined ? Number.POSITIVE_INFINITY : Math.max(0, nowMs - newest.lastSeenMs);
  if (age <= maxAgeMs) return undefined;
  if (newest === undefined) {
    return {
      account: null,
      resource: null,
      kind: 'no_worker',
      message: `no worker alive (last: ${last.host}:${last.pid}, stamped at ${new Date(last.lastSeenMs).toISOString()}, after Redis's clock now: the clock went back); start 'hiresync worker' or check its logs (status --check --max-age ${ageText(maxAgeMs)})`,
    };
  }
  return {
    account: null,
    resource: null,
    kind: 'no_worker',
    message: `no worker seen for ${ageText(age)} (last: ${newest.host}:${newest.pid} at ${new Date(newest.lastSeenMs).toISOString()}); start 'hiresync worker' or check its logs (status --check --max-age ${ageText(maxAgeMs)})`,
  };
}

/**
 * `--stale`: a problem per resource an account that is not disabled syncs
 * now whose last success finished more than `staleMs` before `nowMs`. Left
 * out, as one cause is named once: a resource never succeeded (nothing to
 * age; a failed run fails the check), a resource whose last run failed or
 * was refused (that problem is named), and every resource of an account
 * that needs re-authorizing or whose credentials were refused. A success
 * stamped after `nowMs` (clocks apart) is fresh.
 */
export function staleProblems(
  accounts: readonly AccountReport[],
  nowMs: number,
  staleMs: number,
  named: readonly CheckProblem[],
): CheckProblem[] {
  const failing = new Set(named.map((p) => `${p.account}/${p.resource}`));
  const problems: CheckProblem[] = [];
  for (const account of accounts) {
    if (account.state === 'disabled' || account.reauthorization || account.credentialsRefused)
      continue;
    for (const r of account.resources) {
      const where = `${account.name}/${r.resource}`;
      const at = r.lastSuccess?.finishedAt ?? null;
      if (!r.synced || at === null || failing.has(where)) continue;
      const age = nowMs - Date.parse(at);
      if (!(age > staleMs)) continue;
      problems.push({
        account: account.name,
        resource: r.resource,
        kind: 'stale',
        message: `${where}: last success ${ageText(age)} ago (${at}), older than --stale ${ageText(staleMs)}; 'hiresync status --account ${account.name}' shows its last run, and a worker must run ('hiresync worker', or cron's 'hiresync sync')`,
      });
    }
  }
  return problems;
}

/** A worker of the record as `status --json` shows it. */
export function workerReportOf(w: SeenWorker & Omit<WorkerReport, 'lastSeen'>): WorkerReport {
  return {
    host: w.host,
    pid: w.pid,
    startedAt: w.startedAt,
    version: w.version,
    lastSeen: new Date(w.lastSeenMs).toISOString(),
    alive: w.alive,
  };
}

/** What the whole of `status --check` judges besides the accounts. */
export interface DeploymentFacts {
  /** The workers the deployment has run (none: it syncs from cron). */
  workers: readonly SeenWorker[];
  /** Redis's clock now: the one that stamped the heartbeats. */
  workersNowMs: number;
  /** This host's clock now, against which last successes (Postgres's) age. */
  nowMs: number;
  /** `--max-age`. */
  maxAgeMs: number;
  /** `--stale`, when given. */
  staleMs?: number | undefined;
}

/**
 * The verdict of `status --check`: the accounts' problems (checkReport),
 * then with `--stale` the resources whose last success is too old, and first
 * of all the deployment's when no worker was seen within `--max-age`.
 */
export function checkDeployment(
  accounts: readonly AccountReport[],
  facts: DeploymentFacts,
): StatusReport['check'] {
  const named = checkReport(accounts).problems;
  const noWorker = noWorkerProblem(facts.workers, facts.workersNowMs, facts.maxAgeMs);
  const problems = [
    ...(noWorker ? [noWorker] : []),
    ...named,
    ...(facts.staleMs === undefined
      ? []
      : staleProblems(accounts, facts.nowMs, facts.staleMs, named)),
  ];
  return { passed: problems.length === 0, problems };
}
