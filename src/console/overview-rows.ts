/**
 * The lines of the console's overview: one per account, those that need
 * action first (with why, as `hiresync status`'s overview says it), then the
 * others in the report's order; filtered by name and state, cut into pages.
 * Pure.
 */
import type { AccountSummary, StatusReport } from '../status/report-types.js';
import type { ConsoleQuery, StateFilter } from './overview-query.js';

/** One line of the overview. */
export interface OverviewRow {
  account: string;
  state: string;
  /** Why it needs action (the overview's `needingAction`), or null: all is well with it. */
  why: string | null;
  summary: AccountSummary;
  lastSuccess: string | null;
}

/** Every account of `report`, those that need action first. */
export function overviewRows(report: StatusReport): OverviewRow[] {
  const why = new Map(report.overview.needingAction.map((a) => [a.account, a.why]));
  const rows = report.accounts.map((a) => ({
    account: a.name,
    state: a.state,
    why: why.get(a.name) ?? null,
    summary: a.summary,
    lastSuccess: a.lastSuccess,
  }));
  return [...rows.filter((r) => r.why !== null), ...rows.filter((r) => r.why === null)];
}

function inState(row: OverviewRow, state: StateFilter): boolean {
  switch (state) {
    case 'attention':
      return row.why !== null;
    case 'failing':
      return row.state !== 'disabled' && row.summary.failed + row.summary.notPermitted > 0;
    default:
      return row.state === state;
  }
}

/** The rows whose account name holds `query.name` (any case) and that are in `query.state`. */
export function filterRows(
  rows: readonly OverviewRow[],
  query: Pick<ConsoleQuery, 'name' | 'state'>,
): OverviewRow[] {
  const name = query.name.toLowerCase();
  return rows.filter(
    (r) =>
      (name === '' || r.account.toLowerCase().includes(name)) &&
      (query.state === '' || inState(r, query.state)),
  );
}

/** A page of a list: its items, its number (from 1) and how many pages the list makes. */
export interface Page<T> {
  items: T[];
  page: number;
  pages: number;
  /** Position (from 1) of its first item in the list; 0 when the list is empty. */
  from: number;
  to: number;
  total: number;
}

/**
 * Page `page` of `items`, `size` to a page. A page past the last is the last
 * (a filter that narrowed the list keeps a bookmarked page useful); an empty
 * list makes one empty page.
 */
export function pageOf<T>(items: readonly T[], page: number, size: number): Page<T> {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const at = Math.min(Math.max(1, Math.floor(page)), pages);
  const start = (at - 1) * size;
  const slice = items.slice(start, start + size);
  return {
    items: slice,
    page: at,
    pages,
    from: slice.length === 0 ? 0 : start + 1,
    to: start + slice.length,
    total: items.length,
  };
}
