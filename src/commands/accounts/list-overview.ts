import { formatTable } from '../format-table.js';
import { count, countsText, OVERVIEW_ABOVE } from '../status-overview.js';

/** One account as `accounts list` shows it: a row of the table, an object of `--json`. */
export interface AccountListRow {
  name: string;
  /** Null when unknown (default with no credentials in the environment). */
  authMode: string | null;
  schema: string;
  /** `enabled`, `disabled`, `needs_reauthorization`, `credentials_refused`; default's `not configured`. */
  state: string;
  /** When its last successful run finished, ISO 8601 UTC; null before the first. */
  lastSuccess: string | null;
  /** State needs_reauthorization: why, and what to do. */
  reauthorization: { reason: string; action: string } | null;
  /** State credentials_refused: why, and what to do. */
  credentialsRefused: { reason: string; action: string } | null;
  /**
   * Its own settings (accounts add|update --resources, --incremental-every,
   * --full-cron); null where it has the deployment's.
   */
  settings: {
    resources: string[] | null;
    incrementalEvery: string | null;
    fullCron: string | null;
  };
}

/** How many stalest accounts, and how many notes of accounts that need action, the overview shows. */
const STALEST_SHOWN = 10;
const NOTES_SHOWN = 20;

/**
 * `hiresync accounts list` of more than {@link OVERVIEW_ABOVE} accounts
 * without `--all`: accounts per state and per auth mode, how many have
 * settings of their own, the accounts that need action (the first 20 notes
 * the table would be followed by, and how many more), the ten accounts not
 * disabled whose last success is oldest, and how to see every row.
 */
export function formatAccountsOverview(
  rows: readonly AccountListRow[],
  notes: readonly string[],
): string {
  const tally = (key: (row: AccountListRow) => string) => {
    const counts: Record<string, number> = {};
    for (const row of rows) counts[key(row)] = (counts[key(row)] ?? 0) + 1;
    return countsText(counts);
  };
  const own = rows.filter(
    (r) => r.settings.resources || r.settings.incrementalEvery || r.settings.fullCron,
  ).length;
  const head = [
    `${count(rows.length)} accounts: ${tally((r) => r.state)}`,
    `auth modes: ${tally((r) => r.authMode ?? 'unknown')}`,
    `settings of their own (resources, incremental every or full cron): ${count(own)} account${own === 1 ? '' : 's'}`,
  ].join('\n');
  const action =
    notes.length === 0
      ? 'accounts that need action: none'
      : [
          `accounts that need action: ${count(notes.length)}`,
          ...notes.slice(0, NOTES_SHOWN),
          ...(notes.length > NOTES_SHOWN
            ? [`… and ${count(notes.length - NOTES_SHOWN)} more`]
            : []),
        ].join('\n');
  const at = (r: AccountListRow) =>
    r.lastSuccess === null ? Number.NEGATIVE_INFINITY : Date.parse(r.lastSuccess);
  const stalest = rows
    .map((r, index) => ({ r, index, at: at(r) }))
    .filter(({ r }) => r.state !== 'disabled')
    .sort((x, y) => x.at - y.at || x.index - y.index)
    .slice(0, STALEST_SHOWN)
    .map(({ r }) => [
      r.name,
      r.state,
      r.lastSuccess === null
        ? 'never'
        : `${r.lastSuccess.slice(0, 10)} ${r.lastSuccess.slice(11, 16)}`,
    ]);
  const stalePart =
    stalest.length === 0
      ? []
      : [
          [
            `stalest: the ${stalest.length} account${stalest.length === 1 ? '' : 's'} not disabled whose last success is oldest`,
            formatTable(['account', 'state', 'last success (UTC)'], stalest),
          ].join('\n'),
        ];
  const hint =
    `More than ${OVERVIEW_ABOVE} accounts: every account's row with 'hiresync accounts list --all', ` +
    "as JSON with 'hiresync accounts list --json'; where an account's resources stand with 'hiresync status --account NAME'.";
  return [head, action, ...stalePart, hint].join('\n\n');
}
