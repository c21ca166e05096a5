import { causesOf } from '../status/check.js';
import type {
  AccountReport,
  AccountSummary,
  CheckProblem,
  StatusReport,
} from '../status/report-types.js';
import { type ActionsView, accountActions, newCustomerForm, syncNowForms } from './action-forms.js';
import { healthSection } from './health-section.js';
import { html, type SafeHtml } from './html.js';
import { consoleDocument } from './page-shell.js';
import { pendingLinksSection } from './pending-links.js';
import { foldedProblems, resourceProblems, resourceTable } from './resource-table.js';
import { when } from './when.js';

/** What a page of the console shows besides the report. */
export interface ConsoleView {
  /** The token of this page's forms (a fresh one per render). */
  formToken: string;
  /** Why no connect link can be made here (the button is replaced by this), or undefined. */
  linksUnavailable?: string | undefined;
  /** The link the operator just made, shown at the top for them to send, and how many older ones it withdrew. */
  made?: { account: string; url: string; expiresAt: string; withdrawn: number } | undefined;
  /** Why the operator's request made no link, shown at the top. */
  refusal?: string | undefined;
  /** The actions' forms and the pending links; none without (a page of the report alone). */
  actions?: ActionsView | undefined;
}

const PROBLEM: Readonly<Record<CheckProblem['kind'], string>> = {
  needs_reauthorization: 'needs re-authorizing',
  credentials_refused: 'credentials refused',
  failed: 'last run failed',
  not_permitted: 'not permitted',
  stale: 'no recent success',
  no_worker: 'no worker seen',
};

const STATE_BADGE: Readonly<Record<string, string>> = {
  enabled: 'ok',
  disabled: '',
  needs_reauthorization: 'warn',
  credentials_refused: 'bad',
};

/** An account's state as a badge: green enabled, amber to re-authorize, red refused. */
export function stateBadge(state: string): SafeHtml {
  return html`<span class="badge ${STATE_BADGE[state] ?? ''}">${state.replaceAll('_', ' ')}</span>`;
}

function reauthorizeBox(account: AccountReport, view: ConsoleView): SafeHtml | undefined {
  const reauth = account.reauthorization;
  if (!reauth) return undefined;
  const button = view.linksUnavailable
    ? html`<p>No connect link can be made here: ${view.linksUnavailable}. Or ${reauth.action}.</p>`
    : html`<p>Send its customer's administrator a connect link: opening it authorizes the partner app again (the link works once).</p>
<form method="post">
<input type="hidden" name="token" value="${view.formToken}">
<input type="hidden" name="account" value="${account.name}">
<button type="submit">Make a connect link for ${account.name}</button>
</form>`;
  return html`<div class="problem warn">
<p class="what">Needs re-authorizing: ${reauth.reason}</p>
${button}
</div>`;
}

/** An account whose credentials were refused: why, and what the operator does (no button: only they can). */
function refusedBox(account: AccountReport): SafeHtml | undefined {
  const refused = account.credentialsRefused;
  if (!refused) return undefined;
  return html`<div class="problem" data-state="credentials_refused">
<p class="what">Credentials refused: ${refused.reason}</p>
<p>What to do: ${refused.action}</p>
</div>`;
}

/** `5 succeeded, 1 failed`: an account's resources by where they stand, counts of 0 left out. */
export function resourceCounts(s: AccountSummary): string[] {
  return [
    s.succeeded > 0 && `${s.succeeded} succeeded`,
    s.failed > 0 && `${s.failed} failed`,
    s.notPermitted > 0 && `${s.notPermitted} not permitted`,
    s.running > 0 && `${s.running} running`,
    s.neverRun > 0 && `${s.neverRun} never run`,
  ].filter((c): c is string => typeof c === 'string');
}

/** One account as the page of every account shows it, and its own page: state, resources, errors, what to do. */
export function accountSection(account: AccountReport, view: ConsoleView): SafeHtml {
  const counts = resourceCounts(account.summary);
  return html`<section class="account" id="account-${account.name}">
<h3>${account.name} ${stateBadge(account.state)}</h3>
<p class="meta">auth ${account.authMode ?? 'unknown'} · last success ${when(account.lastSuccess) ?? 'never'} · ${counts.join(', ') || 'no resources'}</p>
${reauthorizeBox(account, view)}
${refusedBox(account)}
${foldedProblems(account)}
${accountActions(account, view)}
${account.problem && html`<div class="problem"><p class="what">${account.problem}</p></div>`}
${account.everyResourceRefused && html`<div class="problem"><p class="what">${account.everyResourceRefused}</p></div>`}
${resourceTable(account.resources, syncNowForms(account, view))}
${resourceProblems(account)}
</section>`;
}

/** The notices of `view` at the top of a page: a link just made, a refusal. */
export function notices(view: ConsoleView): SafeHtml {
  return html`${
    view.made &&
    html`<div class="notice" id="connect-link">
<p><strong>Connect link for ${view.made.account}</strong> (works once; expires ${when(view.made.expiresAt)}):</p>
<p class="link">${view.made.url}</p>
<p>Send it to the customer's administrator. Opening it takes them to the API vendor to authorize the partner app (in the same browser: the link completes only there); the account runs once they have.</p>
${view.made.withdrawn > 0 && html`<p class="withdrawn">Older unused links for ${view.made.account} were withdrawn: ${view.made.withdrawn}.</p>`}
</div>`
  }${view.refusal && html`<div class="notice bad"><p>${view.refusal}</p></div>`}`;
}

/** What is wrong, in a few words; an account's state with the resources that failed because of it. */
export function problemText(problem: CheckProblem): string {
  const folded = problem.foldedResources ?? [];
  return folded.length === 0
    ? PROBLEM[problem.kind]
    : `${PROBLEM[problem.kind]} (${folded.length} ${folded.length === 1 ? 'resource' : 'resources'} failed because of it: ${folded.join(', ')})`;
}

/** `all well`, or how many problems (one per cause) `status --check` finds. */
export function checkBadge(report: StatusReport): SafeHtml {
  const n = causesOf(report.check).length;
  return report.check.passed
    ? html`<span class="badge ok">all well</span>`
    : html`<span class="badge bad">${n} ${n === 1 ? 'problem' : 'problems'}</span>`;
}

/**
 * The console's page: the report of every account (state, last success, per
 * resource the last run, a run in flight and its progress, the error and
 * what to do), a button that makes a connect link on each account that
 * needs re-authorizing (and on no other), and the notices of `view`. Every
 * value is escaped; the report holds no secret, and only `view.made` holds a
 * link.
 */
export function renderConsolePage(report: StatusReport, view: ConsoleView): string {
  const attention = causesOf(report.check);
  const blocks = report.typedViewBlocks;
  return consoleDocument(
    'hiresync console',
    html`${notices(view)}
<p class="meta">${report.accounts.length} ${report.accounts.length === 1 ? 'account' : 'accounts'} · read ${when(report.generatedAt)} · ${checkBadge(report)}</p>
${
  attention.length > 0 &&
  html`<h2>Needs attention</h2>
<ul>${attention.map((p) => html`<li><a href="#${p.account === null ? 'health' : `account-${p.account}`}">${p.account ?? 'workers'}${p.resource ? `/${p.resource}` : ''}</a>: ${problemText(p)}</li>`)}</ul>`
}
${healthSection(report)}
${newCustomerForm(view)}${pendingLinksSection(view)}
<h2>Accounts</h2>
${report.accounts.length === 0 ? html`<p class="empty">No account yet.</p>` : report.accounts.map((a) => accountSection(a, view))}
${
  blocks.length > 0 &&
  html`<h2>Typed views showing null</h2>
${blocks.map((b) => html`<div class="problem warn"><p class="what">${b.view} (${b.account}, since ${when(b.since)})</p><p>${b.message}</p></div>`)}`
}`,
  );
}
