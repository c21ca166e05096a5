import type { AccountTest } from './action-ports.js';
import { html, type SafeHtml } from './html.js';
import { consoleDocument } from './page-shell.js';

/** What an action of the console did, as its page says it. */
export interface ActionResult {
  title: string;
  lines: readonly string[];
  /** More than lines: a test's table. */
  body?: SafeHtml;
  /** Done as asked (green) or not (red). Default true. */
  ok?: boolean;
}

/** The page that answers an action: what was done, and the way back to the console. */
export function actionResultPage(result: ActionResult): string {
  return consoleDocument(
    result.title,
    html`<div class="notice${result.ok === false ? ' bad' : ''}" id="action-result"><p><strong>${result.title}</strong></p>${result.lines.map((l) => html`<p>${l}</p>`)}</div>
${result.body}
<p><a href="./">Back to the console</a></p>`,
  );
}

/** A test's outcome: the token's line, then per resource its outcome and what to do. */
export function testResultBody(test: AccountTest): SafeHtml {
  const minted = test.resources.length > 0 || test.passed;
  return html`<div class="${minted ? 'notice' : 'problem'}"><p class="what" id="test-token">${test.token}</p></div>
${
  test.resources.length > 0 &&
  html`<table id="test-resources">
<thead><tr><th>resource</th><th>outcome</th><th>what the API said, and what to do</th></tr></thead>
<tbody>${test.resources.map(
    (r) =>
      html`<tr data-resource="${r.resource}"><td>${r.resource}</td><td><span class="badge ${r.outcome === 'ok' ? 'ok' : 'bad'}">${r.outcome}</span></td><td>${r.detail ?? ''}</td></tr>`,
  )}</tbody>
</table>`
}`;
}
