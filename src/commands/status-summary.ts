import { causesOf } from '../status/check.js';
import { resourceCountsText } from '../status/overview.js';
import type { AccountReport, StatusReport } from '../status/report-types.js';
import { formatTable } from './format-table.js';
import { credentialNotes } from './status-detail.js';
import { OVERVIEW_ABOVE } from './status-overview.js';

/** How `hiresync status` prints: an overview of many accounts, one line per account, or one per resource. */
export type StatusLayout = 'overview' | 'summary' | 'detail';

/** What decides the layout of `hiresync status`. */
export interface StatusLayoutInput {
  /** Standard output is a terminal. */
  terminal: boolean;
  /** How many accounts are shown. */
  accounts: number;
  /** `--account` was given. */
  named: boolean;
  /** `-v`/`--verbose`. */
  verbose: boolean;
  /** `--summary`. */
  summary: boolean;
}

/**
 * The rule of `hiresync status`'s layout: `--verbose` and `--summary` decide
 * when given; else `--account` shows the named accounts' resources; else
 * more than {@link OVERVIEW_ABOVE} accounts get the overview, wherever the
 * output goes; else a terminal gets one line per account when more than one
 * account is shown, and anything else (a pipe, a file, a script) the
 * per-resource table it has always had.
 */
export function statusLayout(input: StatusLayoutInput): StatusLayout {
  if (input.verbose) return 'detail';
  if (input.summary) return 'summary';
  if (input.named) return 'detail';
  if (input.accounts > OVERVIEW_ABOVE) return 'overview';
  if (!input.terminal) return 'detail';
  return input.accounts > 1 ? 'summary' : 'detail';
}

/** `2024-05-01 12:00` (UTC) of an ISO timestamp, or `-`. */
function minute(iso: string | null): string {
  return iso === null ? '-' : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/** The resources cell: `5 ok, 1 failed, 1 not permitted, 2 never run` (the counts that are not 0). */
export function resourcesCell(account: AccountReport): string {
  return resourceCountsText(account.summary, String) || '-';
}

/** The in-flight cell: `jobs: run 12, 3 pages`, `2 runs: jobs, users`, or `-`. */
export function inFlightCell(account: AccountReport): string {
  const running = account.resources.flatMap((r) => (r.inFlight ? [{ ...r.inFlight, r }] : []));
  const [only] = running;
  if (only === undefined) return '-';
  if (running.length > 1) {
    return `${running.length} runs: ${running.map((f) => f.r.resource).join(', ')}`;
  }
  const pages = `${only.pages} page${only.pages === 1 ? '' : 's'}`;
  return `${only.r.resource}: run ${only.runId}, ${pages}${only.active ? '' : ', interrupted'}`;
}

/** One row of the summary table: account, state, resources, last success (UTC, to the minute), in flight. */
export function summaryRow(account: AccountReport): string[] {
  return [
    account.name,
    account.state,
    resourcesCell(account),
    minute(account.lastSuccess),
    inFlightCell(account),
  ];
}

/**
 * `hiresync status` in a terminal with several accounts: one line per
 * account, then why each account that needs re-authorizing does and what to
 * do, accounts whose runs cannot be read, how many typed views show null,
 * and how to see the detail.
 */
export function formatStatusSummary(report: StatusReport): string {
  const table = formatTable(
    ['account', 'state', 'resources', 'last success (UTC)', 'in flight'],
    report.accounts.map(summaryRow),
  );
  const notes = report.accounts.flatMap((a) => [
    ...credentialNotes(a),
    ...(a.problem ? [`${a.name}: ${a.problem}`] : []),
  ]);
  const views = report.typedViewBlocks.length;
  if (views > 0) {
    notes.push(
      `${views} typed view${views === 1 ? ' shows' : 's show'} null where the records hold values: see 'hiresync status -v'`,
    );
  }
  const hint =
    "Each resource's last run, error and what to do: 'hiresync status --account NAME', or 'hiresync status -v' for every account.";
  return [table, ...(notes.length > 0 ? [notes.join('\n')] : []), hint].join('\n\n');
}

/** What `hiresync status --check` prints: whether it passed, and each problem on its own line. */
export function formatCheck(report: StatusReport): string {
  const { passed } = report.check;
  if (passed) {
    const checked = report.accounts.filter((a) => a.state !== 'disabled').length;
    return `status check passed: ${checked} account${checked === 1 ? '' : 's'}, no failed last run, nothing not permitted, none needs re-authorizing`;
  }
  // One line per cause: a resource that failed because of its account's state is told in the account's line.
  const causes = causesOf(report.check);
  return [
    `status check failed: ${causes.length} problem${causes.length === 1 ? '' : 's'}`,
    ...causes.map((p) => p.message),
  ].join('\n');
}
