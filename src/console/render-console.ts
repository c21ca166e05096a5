/**
 * Which page of the console a GET (or the page after a POST) shows: one
 * account's, the overview of many accounts, or every account on one page as
 * at a few accounts.
 */
import { OVERVIEW_ABOVE } from '../status/overview.js';
import type { StatusReport } from '../status/report-types.js';
import { type ConsoleView, renderConsolePage } from './console-page.js';
import { html } from './html.js';
import { renderAccountPage, renderOverviewPage } from './overview-page.js';
import type { ConsoleQuery } from './overview-query.js';
import { consoleDocument } from './page-shell.js';

/** A page of the console and its status. */
export interface RenderedPage {
  status: number;
  page: string;
}

/**
 * `?account=NAME`: that account's page (404 when the report has no such
 * account); a filter or a page asked for, or more than OVERVIEW_ABOVE
 * accounts: the overview; else every account on one page.
 */
export function renderConsole(
  report: StatusReport,
  view: ConsoleView,
  query: ConsoleQuery,
): RenderedPage {
  if (query.account !== undefined) {
    const page = renderAccountPage(report, view, query.account);
    if (page !== undefined) return { status: 200, page };
    return {
      status: 404,
      page: consoleDocument(
        'No such account: hiresync console',
        html`<div class="notice bad"><p><strong>No account ${query.account.slice(0, 40)} here</strong></p>
<p>It is not registered (or was removed); 'hiresync accounts list' lists the accounts.</p></div>
<p><a href="./">Back to every account</a></p>`,
      ),
    };
  }
  if (query.overview || report.accounts.length > OVERVIEW_ABOVE) {
    return { status: 200, page: renderOverviewPage(report, view, query) };
  }
  return { status: 200, page: renderConsolePage(report, view) };
}
