/**
 * The console's pages for many accounts: the overview `hiresync status`
 * prints above OVERVIEW_ABOVE accounts (src/status/overview.ts shapes it for
 * both), with a filter by name and state and pages of PAGE_SIZE lines, and
 * one account's own page. Every value is escaped.
 */
import { count, countsText, failingResourceText, resourceCountsText } from '../status/overview.js';
import type { StatusReport } from '../status/report-types.js';
import { newCustomerForm } from './action-forms.js';
import {
  accountSection,
  type ConsoleView,
  checkBadge,
  notices,
  resourceCounts,
  stateBadge,
} from './console-page.js';
import { healthSection } from './health-section.js';
import { html, type SafeHtml } from './html.js';
import {
  accountHref,
  type ConsoleQuery,
  overviewHref,
  PAGE_SIZE,
  STATE_FILTERS,
} from './overview-query.js';
import { filterRows, type OverviewRow, overviewRows, pageOf } from './overview-rows.js';
import { consoleDocument } from './page-shell.js';
import { pendingLinksSection } from './pending-links.js';
import { when } from './when.js';

/** `accounts: 190 enabled, …`, the resources they sync, the resources failing: the overview's head. */
function overviewHead(report: StatusReport): SafeHtml {
  const o = report.overview;
  return html`<dl class="overview">
<dt>accounts</dt><dd>${countsText(o.accountStates) || 'none'}</dd>
<dt>resources they sync</dt><dd>${resourceCountsText(o.resources) || 'none'}</dd>
<dt>failing resources (accounts)</dt><dd>${o.failingResources.map(failingResourceText).join('; ') || 'none'}</dd>
</dl>`;
}

function filterForm(query: ConsoleQuery): SafeHtml {
  return html`<form method="get" class="filter" role="search">
<label>Name contains <input type="search" name="name" value="${query.name}" maxlength="40" autocomplete="off"></label>
<label>State <select name="state">
<option value="">any</option>
${Object.entries(STATE_FILTERS).map(([value, label]) => html`<option value="${value}"${query.state === value ? html` selected` : ''}>${label}</option>`)}
</select></label>
<button type="submit">Filter</button>
${(query.name !== '' || query.state !== '') && html`<a href="./">Clear the filter</a>`}
</form>`;
}

function row(r: OverviewRow): SafeHtml {
  return html`<tr${r.why !== null ? html` class="attention"` : ''}>
<td><a href="${accountHref(r.account)}">${r.account}</a></td>
<td>${stateBadge(r.state)}</td>
<td>${r.why ?? (resourceCounts(r.summary).join(', ') || 'no resources')}</td>
<td>${when(r.lastSuccess) ?? html`<span class="empty">never</span>`}</td>
</tr>
`;
}

/** The lines of this page: those that need action, then those that do not, each under its heading. */
function rowsTable(rows: readonly OverviewRow[], needing: number, healthy: number): SafeHtml {
  const attention = rows.filter((r) => r.why !== null);
  const well = rows.filter((r) => r.why === null);
  return html`<table class="accounts">
<colgroup><col class="name"><col class="state"><col class="why"><col class="success"></colgroup>
<thead><tr><th>account</th><th>state</th><th>why it needs action, or its resources</th><th>last success</th></tr></thead>
${attention.length > 0 && html`<tbody><tr class="group"><th colspan="4">Need action: ${count(needing)}</th></tr>${attention.map(row)}</tbody>`}
${well.length > 0 && html`<tbody><tr class="group"><th colspan="4">All well: ${count(healthy)}</th></tr>${well.map(row)}</tbody>`}
</table>`;
}

function pager(query: ConsoleQuery, page: number, pages: number): SafeHtml | undefined {
  if (pages <= 1) return undefined;
  return html`<nav class="pager" aria-label="pages">
${page > 1 ? html`<a href="${overviewHref(query, page - 1)}" rel="prev">← previous</a>` : html`<span class="empty">← previous</span>`}
<span>page ${page} of ${pages}</span>
${page < pages ? html`<a href="${overviewHref(query, page + 1)}" rel="next">next →</a>` : html`<span class="empty">next →</span>`}
</nav>`;
}

/**
 * The overview of `report`: how many accounts in which state, the resources
 * they sync, those failing; a filter; the accounts that need action (why, as
 * `status` says it: one problem per cause) then the others, a line each,
 * PAGE_SIZE to a page (a page past the last shows the last), each account
 * linking to its own page; on the whole overview's first page, the stalest
 * accounts and the typed views that show null.
 */
export function renderOverviewPage(
  report: StatusReport,
  view: ConsoleView,
  query: ConsoleQuery,
): string {
  const all = overviewRows(report);
  const shown = filterRows(all, query);
  const page = pageOf(shown, query.page, PAGE_SIZE);
  const needing = shown.filter((r) => r.why !== null).length;
  const filtered = query.name !== '' || query.state !== '';
  const first = !filtered && page.page === 1;
  const o = report.overview;
  const blocked = [...new Set(report.typedViewBlocks.map((b) => b.account))];
  return consoleDocument(
    'hiresync console',
    html`${notices(view)}
<p class="meta">${count(report.accounts.length)} ${report.accounts.length === 1 ? 'account' : 'accounts'} · read ${when(report.generatedAt)} · ${checkBadge(report)}</p>
${overviewHead(report)}
${first && html`${healthSection(report)}${newCustomerForm(view)}${pendingLinksSection(view)}`}
${filterForm(query)}
<h2>${filtered ? `Accounts matching the filter: ${count(shown.length)} of ${count(all.length)}` : 'Accounts'}</h2>
${
  shown.length === 0
    ? html`<p class="empty">${all.length === 0 ? 'No account yet.' : 'No account matches the filter.'}</p>`
    : html`<p class="meta">${count(page.from)}–${count(page.to)} of ${count(page.total)}, those that need action first</p>
${rowsTable(page.items, needing, shown.length - needing)}
${pager(query, page.page, page.pages)}`
}
${
  first &&
  o.stalest.length > 0 &&
  html`<h2>Stalest: the accounts not disabled whose last success is oldest</h2>
<ul class="plain">${o.stalest.map((s) => html`<li><a href="${accountHref(s.account)}">${s.account}</a> ${stateBadge(s.state)} last success ${when(s.lastSuccess) ?? 'never'}</li>`)}</ul>`
}
${
  first &&
  blocked.length > 0 &&
  html`<h2>Typed views showing null</h2>
<p>${count(report.typedViewBlocks.length)} typed ${report.typedViewBlocks.length === 1 ? 'view shows' : 'views show'} null where the records hold values, of ${blocked.map((a, i) => html`${i > 0 ? ', ' : ''}<a href="${accountHref(a)}">${a}</a>`)}: their pages say why and what to do.</p>`
}`,
  );
}

/**
 * Account `name`'s own page: the account as the page of every account shows
 * it (state, each resource's last run, errors and what to do, the connect
 * link button), its typed views that show null, and a way back to the
 * overview. Undefined when the report has no such account.
 */
export function renderAccountPage(
  report: StatusReport,
  view: ConsoleView,
  name: string,
): string | undefined {
  const account = report.accounts.find((a) => a.name === name);
  if (!account) return undefined;
  const blocks = report.typedViewBlocks.filter((b) => b.account === name);
  return consoleDocument(
    `${name}: hiresync console`,
    html`${notices(view)}
<p class="meta"><a href="./">← every account</a> · read ${when(report.generatedAt)}</p>
${accountSection(account, view)}
${
  blocks.length > 0 &&
  html`<h2>Typed views showing null</h2>
${blocks.map((b) => html`<div class="problem warn"><p class="what">${b.view} (since ${when(b.since)})</p><p>${b.message}</p></div>`)}`
}`,
  );
}
