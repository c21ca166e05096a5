/**
 * The forms of the console's actions, each posting to the console with the
 * page's token and its `action` (see console-actions.ts): an account's Test,
 * Disable and Enable, a resource's "Sync now", and "Connect a new customer".
 */
import type { AccountReport, ResourceReport } from '../status/report-types.js';
import type { PendingLink } from './action-ports.js';
import { html, type SafeHtml } from './html.js';

/** What the actions' forms need of a page: its token, the pending links, whether invites can be made. */
export interface ActionsView {
  pendingLinks: readonly PendingLink[];
  /** Why no invite link can be made here (what to set), or undefined. */
  inviteUnavailable?: string | undefined;
}

/** What a page holds for the forms: its token, and the actions (none on a page rendered without them). */
export interface FormsView {
  formToken: string;
  actions?: ActionsView | undefined;
}

/** The environment's account: its credentials are the worker's, not a row the console could enable or disable. */
const ENVIRONMENT_ACCOUNT = 'default';

/** A form posting `action` with `fields` and the page's token, as one button. */
export function actionForm(
  token: string,
  action: string,
  fields: Readonly<Record<string, string>>,
  label: string,
): SafeHtml {
  return html`<form method="post" data-action="${action}">
<input type="hidden" name="token" value="${token}">
<input type="hidden" name="action" value="${action}">
${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit">${label}</button>
</form>`;
}

/** The id of an account's "Sync now" form, which its resource rows' buttons submit. */
function syncFormId(account: string): string {
  return `sync-now-${account}`;
}

/**
 * An account's own buttons: Test its credentials, and (registered accounts)
 * Disable or Enable; and, for an enabled account, the form its rows' "Sync
 * now" buttons submit (one form per account, each button naming its
 * resource: the page stays small with many accounts).
 */
export function accountActions(account: AccountReport, view: FormsView): SafeHtml | undefined {
  if (!view.actions) return undefined;
  const name = account.name;
  const fields = { account: name };
  const registered = name !== ENVIRONMENT_ACCOUNT;
  return html`<div class="actions">
${actionForm(view.formToken, 'test', fields, `Test the credentials of ${name}`)}
${registered && account.state !== 'disabled' && actionForm(view.formToken, 'disable', fields, `Disable ${name}`)}
${registered && (account.state === 'disabled' || account.state === 'credentials_refused') && actionForm(view.formToken, 'enable', fields, `Enable ${name}`)}
${
  account.state === 'enabled' &&
  html`<form method="post" data-action="sync" id="${syncFormId(name)}">
<input type="hidden" name="token" value="${view.formToken}">
<input type="hidden" name="action" value="sync">
<input type="hidden" name="account" value="${name}">
</form>`
}
</div>`;
}

/**
 * The "Sync now" button of each resource row of an enabled account (a
 * disabled one's run would be skipped) that it still syncs, submitting the
 * account's form of {@link accountActions} with the resource; undefined on a
 * page without actions.
 */
export function syncNowForms(
  account: AccountReport,
  view: FormsView,
): ((resource: ResourceReport) => SafeHtml | undefined) | undefined {
  if (!view.actions || account.state !== 'enabled') return undefined;
  const form = syncFormId(account.name);
  return (r) =>
    r.synced
      ? html`<button type="submit" form="${form}" name="resource" value="${r.resource}">Sync now</button>`
      : undefined;
}

/** "Connect a new customer": the new account's name, making an invite link (`hiresync accounts invite NAME`). */
export function newCustomerForm(view: FormsView): SafeHtml | undefined {
  const actions = view.actions;
  if (!actions) return undefined;
  const body = actions.inviteUnavailable
    ? html`<p>No connect link can be made here: ${actions.inviteUnavailable}.</p>`
    : html`<form method="post" data-action="invite" class="invite">
<input type="hidden" name="token" value="${view.formToken}">
<input type="hidden" name="action" value="invite">
<label>New account's name <input type="text" name="account" required maxlength="40" autocomplete="off" spellcheck="false" placeholder="acme"></label>
<button type="submit">Make a connect link</button>
</form>
<p class="meta">1 to 40 lowercase letters, digits or _, starting with a letter. The link registers the account when its administrator approves (single use, valid 7 days); it is shown once.</p>`;
  return html`<h2>Connect a new customer</h2>
<section class="panel" id="connect-new">${body}</section>`;
}
