import type { FormsView } from './action-forms.js';
import { actionForm } from './action-forms.js';
import { html, type SafeHtml } from './html.js';
import { when } from './when.js';

/**
 * The pending connect links (unused, not withdrawn, unexpired) of every
 * account: which account, made when, expiring when, each with a Withdraw
 * button. Never a link's token or URL: they are stored as hashes only.
 */
export function pendingLinksSection(view: FormsView): SafeHtml | undefined {
  const links = view.actions?.pendingLinks;
  if (!links) return undefined;
  return html`<h2>Pending connect links</h2>
<section class="panel" id="pending-links">${
    links.length === 0
      ? html`<p class="empty">No link waits to be used.</p>`
      : html`<table>
<thead><tr><th>account</th><th>for</th><th>made</th><th>expires</th><th></th></tr></thead>
<tbody>${links.map(
          (l) => html`<tr data-link="${l.id}">
<td>${l.account}</td>
<td>${l.newAccount ? 'a new account' : 're-authorizing'}</td>
<td>${when(l.createdAt)}</td>
<td>${when(l.expiresAt)}</td>
<td>${actionForm(view.formToken, 'withdraw', { account: l.account, link: l.id }, 'Withdraw')}</td>
</tr>`,
        )}</tbody>
</table>`
  }</section>`;
}
