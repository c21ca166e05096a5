/**
 * The overview of a status report: where many accounts stand, in a few
 * lines whatever their number (accounts per state, resources per state, the
 * resources that fail, the accounts that need action, the stalest). Pure
 * shaping of the accounts' reports, no I/O.
 */
import type {
  AccountNeedingAction,
  AccountReport,
  AccountSummary,
  StatusOverview,
  StatusReport,
} from './report-types.js';

/**
 * Above this many accounts shown, `hiresync status` and `hiresync accounts
 * list` print an overview first and the lines of each account only on
 * request (`--account NAME`, `-v`, `--summary`; `accounts list --all`), and
 * the console's main page is that overview, each account on a page of its
 * own: a line per account and resource of thousands of accounts is read by
 * no one, and a deployment of up to 50 keeps the tables (and the page) it
 * always had.
 */
export const OVERVIEW_ABOVE = 50;

/** `1,234`. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** `4,990 enabled, 5 disabled`: counts by key, the most first. */
export function countsText(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([key, n]) => `${count(n)} ${key}`)
    .join(', ');
}

/**
 * The counts of `summary` that are not 0, always in this order: `5 ok,
 * 1 failed, 1 not permitted, 2 never run`; empty when every count is 0.
 * `number` writes each count ({@link count} unless told).
 */
export function resourceCountsText(
  summary: AccountSummary,
  number: (n: number) => string = count,
): string {
  const counts = [
    [summary.succeeded, 'ok'],
    [summary.running, 'running'],
    [summary.failed, 'failed'],
    [summary.notPermitted, 'not permitted'],
    [summary.neverRun, 'never run'],
  ] as const;
  return counts
    .filter(([n]) => n > 0)
    .map(([n, what]) => `${number(n)} ${what}`)
    .join(', ');
}

/** `jobs 3 failed, 1 not permitted`: a failing resource, in how many accounts it fails. */
export function failingResourceText(failing: StatusOverview['failingResources'][number]): string {
  return `${failing.resource} ${[
    ...(failing.failed > 0 ? [`${count(failing.failed)} failed`] : []),
    ...(failing.notPermitted > 0 ? [`${count(failing.notPermitted)} not permitted`] : []),
  ].join(', ')}`;
}

/** How many stalest accounts an overview names. */
export const STALEST_SHOWN = 10;

/** The overview of `accounts`, whose `status --check` verdict is `check`. */
export function overviewOf(
  accounts: readonly AccountReport[],
  check: StatusReport['check'],
): StatusOverview {
  const accountStates: Record<string, number> = {};
  const resources: AccountSummary = {
    succeeded: 0,
    failed: 0,
    notPermitted: 0,
    neverRun: 0,
    running: 0,
  };
  const failing = new Map<string, { resource: string; failed: number; notPermitted: number }>();
  for (const account of accounts) {
    accountStates[account.state] = (accountStates[account.state] ?? 0) + 1;
    for (const key of Object.keys(resources) as Array<keyof AccountSummary>) {
      resources[key] += account.summary[key];
    }
  }
  for (const problem of check.problems) {
    if (
      problem.resource === null ||
      (problem.kind !== 'failed' && problem.kind !== 'not_permitted')
    )
      continue;
    const entry = failing.get(problem.resource) ?? {
      resource: problem.resource,
      failed: 0,
      notPermitted: 0,
    };
    failing.set(problem.resource, entry);
    if (problem.kind === 'failed') entry.failed += 1;
    else entry.notPermitted += 1;
  }
  const failingResources = [...failing.values()].sort(
    (a, b) =>
      b.failed + b.notPermitted - (a.failed + a.notPermitted) ||
      a.resource.localeCompare(b.resource),
  );
  return {
    accounts: accounts.length,
    accountStates,
    resources,
    failingResources,
    needingAction: needingAction(accounts, check),
    stalest: stalest(accounts),
  };
}

/** The accounts `check` names, and those whose runs cannot be read, with why in a few words. */
function needingAction(
  accounts: readonly AccountReport[],
  check: StatusReport['check'],
): AccountNeedingAction[] {
  const problems = new Map<string, StatusReport['check']['problems']>();
  for (const problem of check.problems) {
    if (problem.account === null) continue;
    problems.set(problem.account, [...(problems.get(problem.account) ?? []), problem]);
  }
  return accounts.flatMap((account) => {
    const own = problems.get(account.name) ?? [];
    const resourcesOf = (kind: string) =>
      own.flatMap((p) => (p.kind === kind && p.resource !== null ? [p.resource] : []));
    const failed = own.flatMap((p) =>
      p.kind === 'failed' && p.resource !== null && p.causedBy === undefined ? [p.resource] : [],
    );
    const refused = resourcesOf('not_permitted');
    // One cause, told once: the resources the account's state made fail go with it.
    const stateWhy = (kind: 'needs_reauthorization' | 'credentials_refused', text: string) => {
      const problem = own.find((p) => p.kind === kind);
      if (!problem) return [];
      const folded = problem.foldedResources ?? [];
      return [folded.length > 0 ? `${text} (failed because of it: ${folded.join(', ')})` : text];
    };
    const stale = resourcesOf('stale');
    const why = [
      ...stateWhy('needs_reauthorization', 'needs re-authorizing'),
      ...stateWhy('credentials_refused', 'credentials refused'),
      ...(failed.length > 0 ? [`failed: ${failed.join(', ')}`] : []),
      ...(refused.length > 0 ? [`not permitted: ${refused.join(', ')}`] : []),
      ...(stale.length > 0 ? [`stale: ${stale.join(', ')}`] : []),
      ...(account.problem ? ['runs cannot be read'] : []),
    ];
    return why.length === 0
      ? []
      : [{ account: account.name, state: account.state, why: why.join('; ') }];
  });
}

/** The accounts that are not disabled with the oldest last success (never first), at most {@link STALEST_SHOWN}. */
function stalest(accounts: readonly AccountReport[]): StatusOverview['stalest'] {
  const at = (a: AccountReport) =>
    a.lastSuccess === null ? Number.NEGATIVE_INFINITY : Date.parse(a.lastSuccess);
  return accounts
    .filter((a) => a.state !== 'disabled')
    .map((a, index) => ({ a, index, at: at(a) }))
    .sort((x, y) => x.at - y.at || x.index - y.index)
    .slice(0, STALEST_SHOWN)
    .map(({ a }) => ({ account: a.name, state: a.state, lastSuccess: a.lastSuccess }));
}
