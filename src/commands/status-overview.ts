import {
  count,
  countsText,
  failingResourceText,
  OVERVIEW_ABOVE,
  resourceCountsText,
} from '../status/overview.js';
import type { StatusReport } from '../status/report-types.js';
import { formatTable } from './format-table.js';

/** Above this many accounts shown, `status` and `accounts list` print the overview (src/status/overview.ts). */
export { count, countsText, OVERVIEW_ABOVE };

/** How many accounts that need action the overview names (`status --check` names every one). */
const ACTION_SHOWN = 20;

/** `2026-05-01 12:00` (UTC) of an ISO timestamp, or `never`. */
function minute(iso: string | null): string {
  return iso === null ? 'never' : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/**
 * `hiresync status` of many accounts (more than {@link OVERVIEW_ABOVE}, none
 * named, neither `-v` nor `--summary`): accounts per state; the resources
 * they sync by where they stand; the resources that fail, in how many
 * accounts; the accounts that need action (the first 20, and how many more);
 * the stalest accounts; how many typed views show null; how to see more.
 */
export function formatStatusOverview(report: StatusReport): string {
  const o = report.overview;
  const head = [
    `${count(o.accounts)} accounts: ${countsText(o.accountStates)}`,
    `resources they sync: ${resourceCountsText(o.resources) || 'none'}`,
    o.failingResources.length === 0
      ? 'failing resources: none'
      : `failing resources (accounts): ${o.failingResources.map(failingResourceText).join('; ')}`,
  ].join('\n');
  const action = o.needingAction;
  const actionPart =
    action.length === 0
      ? 'accounts that need action: none'
      : [
          `accounts that need action: ${count(action.length)} ('hiresync status --check' says what to do about each)`,
          formatTable(
            ['account', 'state', 'why'],
            action.slice(0, ACTION_SHOWN).map((a) => [a.account, a.state, a.why]),
          ),
          ...(action.length > ACTION_SHOWN
            ? [`… and ${count(action.length - ACTION_SHOWN)} more`]
            : []),
        ].join('\n');
  const stalePart =
    o.stalest.length === 0
      ? []
      : [
          [
            `stalest: the ${o.stalest.length} account${o.stalest.length === 1 ? '' : 's'} not disabled whose last success is oldest`,
            formatTable(
              ['account', 'state', 'last success (UTC)'],
              o.stalest.map((s) => [s.account, s.state, minute(s.lastSuccess)]),
            ),
          ].join('\n'),
        ];
  const views = report.typedViewBlocks.length;
  const viewsPart =
    views === 0
      ? []
      : [
          `${count(views)} typed view${views === 1 ? ' shows' : 's show'} null where the records hold values: see 'hiresync status -v'`,
        ];
  const hint =
    `More than ${OVERVIEW_ABOVE} accounts: each resource's last run, error and what to do with 'hiresync status --account NAME' ` +
    "(repeatable), one line per account with 'hiresync status --summary', every account and resource with 'hiresync status -v', " +
    "all of it as JSON with 'hiresync status --json'.";
  return [head, actionPart, ...stalePart, ...viewsPart, hint].join('\n\n');
}
