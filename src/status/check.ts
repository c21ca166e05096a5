import { isNotPermitted, scopeOfRun } from '../sync/not-permitted.js';
import type { AccountReport, CheckProblem, ResourceReport, StatusReport } from './report-types.js';
import { stateThatCaused } from './state-caused.js';

/**
 * The rule of `hiresync status --check`: every account that is not disabled
 * passes unless it needs re-authorizing, its credentials were refused, or a resource's last run failed or
 * was refused 403 (not permitted). A disabled account, a resource never run,
 * a resource the account no longer syncs (its last run stays as it was) and
 * a last run that succeeded never fail the check. A run in flight has no
 * outcome yet: the last run that finished before it stands (a resource that
 * fails at every run must not pass while its next run is under way, nor while
 * that run waits, interrupted, for a worker).
 *
 * One problem per cause: a resource whose last run failed because of its
 * account's state (src/status/state-caused.ts) keeps its entry, marked
 * `causedBy`, and the account's problem names it in `foldedResources` and in
 * its message (`… (3 resources failed because of it: jobs, job_posts,
 * tracking_links)`). See {@link causesOf}.
 */
export function checkReport(accounts: readonly AccountReport[]): StatusReport['check'] {
  const problems: CheckProblem[] = [];
  for (const account of accounts) {
    if (account.state === 'disabled') continue;
    const own: CheckProblem[] = [];
    for (const r of account.resources) {
      if (!r.synced) continue;
      const where = `${account.name}/${r.resource}`;
      const finished = r.lastFinished;
      const inFlight =
        r.state === 'running' && finished ? ` (run ${r.lastRun?.id ?? '?'} in flight)` : '';
      if (r.state === 'not_permitted' || (inFlight && isNotPermitted(finished ?? undefined))) {
        own.push({
          account: account.name,
          resource: r.resource,
          kind: 'not_permitted',
          message: `${where}: not permitted: ask for scope ${scopeOf(r)} (run ${finished?.id ?? '?'}: ${finished?.error ?? ''})${inFlight}`,
        });
      } else if (r.state === 'failed' || (inFlight && finished?.outcome === 'failed')) {
        const causedBy = stateThatCaused(account.name, account.state, finished?.error);
        own.push({
          account: account.name,
          resource: r.resource,
          kind: 'failed',
          message: `${where}: last run ${finished?.id ?? '?'} failed: ${finished?.error ?? 'no error recorded'}${inFlight}`,
          ...(causedBy ? { causedBy } : {}),
        });
      }
    }
    const foldedInto = (kind: CheckProblem['kind']) => {
      const folded = own.flatMap((p) =>
        p.causedBy === kind && p.resource !== null ? [p.resource] : [],
      );
      return folded.length === 0
        ? { note: '', fields: {} }
        : {
            note: ` (${folded.length} ${folded.length === 1 ? 'resource' : 'resources'} failed because of it: ${folded.join(', ')})`,
            fields: { foldedResources: folded },
          };
    };
    if (account.reauthorization) {
      const folded = foldedInto('needs_reauthorization');
      problems.push({
        account: account.name,
        resource: null,
        kind: 'needs_reauthorization',
        message: `${account.name}: needs re-authorizing: ${account.reauthorization.reason}; ${account.reauthorization.action}${folded.note}`,
        ...folded.fields,
      });
    }
    if (account.credentialsRefused) {
      const folded = foldedInto('credentials_refused');
      problems.push({
        account: account.name,
        resource: null,
        kind: 'credentials_refused',
        message: `${account.name}: credentials refused: ${account.credentialsRefused.reason}; ${account.credentialsRefused.action}${folded.note}`,
        ...folded.fields,
      });
    }
    problems.push(...own);
  }
  return { passed: problems.length === 0, problems };
}

/**
 * The problems of `check` one per cause: every problem but the resources'
 * failures that their account's state caused (told in that account's
 * problem). What `status --check` prints and the console lists; `passed` and
 * the exit code are the same either way.
 */
export function causesOf(check: StatusReport['check']): CheckProblem[] {
  return check.problems.filter((p) => p.causedBy === undefined);
}

/** The scope a resource refused 403 lacks, from its report or its last finished run's error. */
function scopeOf(r: ResourceReport): string {
  return r.notPermitted?.scope ?? scopeOfRun(r.resource, r.lastFinished?.error ?? null);
}
