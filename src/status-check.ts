import type { AccountReport, CheckProblem, StatusReport } from './status-report.js';

/**
 * The rule of `hiresync status --check`: every account that is not disabled
 * passes unless it needs re-authorizing, or a resource's last run failed or
 * was refused 403 (not permitted). A disabled account, a run in flight, a
 * resource never run and a last run that succeeded never fail the check.
 */
export function checkReport(accounts: readonly AccountReport[]): StatusReport['check'] {
  const problems: CheckProblem[] = [];
  for (const account of accounts) {
    if (account.state === 'disabled') continue;
    if (account.reauthorization) {
      problems.push({
        account: account.name,
        resource: null,
        kind: 'needs_reauthorization',
        message: `${account.name}: needs re-authorizing: ${account.reauthorization.reason}; ${account.reauthorization.action}`,
      });
    }
    for (const r of account.resources) {
      const where = `${account.name}/${r.resource}`;
      if (r.state === 'not_permitted') {
        problems.push({
          account: account.name,
          resource: r.resource,
          kind: 'not_permitted',
          message: `${where}: not permitted: ask for scope ${r.notPermitted?.scope ?? '?'} (run ${r.lastRun?.id ?? '?'}: ${r.error ?? ''})`,
        });
      } else if (r.state === 'failed') {
        problems.push({
          account: account.name,
          resource: r.resource,
          kind: 'failed',
          message: `${where}: last run ${r.lastRun?.id ?? '?'} failed: ${r.error ?? 'no error recorded'}`,
        });
      }
    }
  }
  return { passed: problems.length === 0, problems };
}
