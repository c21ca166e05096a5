import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { html, SafeHtml } from './html.js';

/** The console's one style sheet, inline: the CSP allows it by its hash, and no script at all. */
const STYLE = `
:root { color-scheme: light; --ink: #1d2430; --muted: #5b6472; --line: #d9dde3; --bg: #f6f7f9;
  --ok: #17663a; --ok-bg: #e3f4e9; --bad: #a4161a; --bad-bg: #fde8e8; --warn: #8a5300; --warn-bg: #fff3d6; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header { background: #1d2430; color: #fff; padding: 12px 24px; display: flex; align-items: baseline; gap: 16px; }
header h1 { font-size: 18px; margin: 0; }
header span { color: #b8c0cc; font-size: 13px; }
main { max-width: 1100px; margin: 0 auto; padding: 20px 24px 48px; }
h2 { font-size: 16px; margin: 28px 0 10px; }
section.account, section.panel { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px; margin: 0 0 16px; }
section.account h3, section.panel h3 { margin: 0 0 6px; font-size: 16px; display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
.meta { color: var(--muted); font-size: 13px; margin: 0 0 10px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; table-layout: fixed; }
col.resource { width: 15%; } col.state { width: 13%; } col.run { width: 23%; } col.count { width: 8%; }
col.success { width: 18%; } col.flight { width: 15%; }
td { overflow-wrap: anywhere; }
th, td { text-align: left; padding: 6px 8px; border-top: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; border-top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { white-space: nowrap; display: inline-block; border-radius: 999px; padding: 1px 9px; font-size: 12px; font-weight: 600; background: #e8ebef; color: var(--muted); }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }
.badge.warn { background: var(--warn-bg); color: var(--warn); }
.problem { border-left: 4px solid var(--bad); background: var(--bad-bg); padding: 8px 12px; margin: 8px 0 0; border-radius: 4px; }
.problem.warn { border-color: var(--warn); background: var(--warn-bg); }
.problem p { margin: 2px 0; }
.problem .what { font-weight: 600; }
.notice { border: 1px solid var(--ok); background: var(--ok-bg); padding: 12px 16px; border-radius: 8px; margin: 0 0 20px; }
.notice.bad { border-color: var(--bad); background: var(--bad-bg); }
.notice p { margin: 4px 0; }
code, .link { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.link { display: block; word-break: break-all; background: #fff; border: 1px solid var(--line); padding: 8px 10px; border-radius: 4px; margin: 6px 0; user-select: all; }
form { display: inline; margin: 0; }
.actions { display: flex; gap: 8px; flex-wrap: wrap; margin: 8px 0 4px; }
col.act { width: 11%; }
input[type=text] { font: inherit; font-size: 14px; padding: 3px 8px; border: 1px solid var(--line); border-radius: 6px; margin: 0 8px; }
button { white-space: nowrap; font: inherit; font-size: 13px; font-weight: 600; padding: 4px 12px; border-radius: 6px; border: 1px solid #8a5300; background: #fff; color: #8a5300; cursor: pointer; }
button:hover { background: var(--warn-bg); }
.progress { color: var(--muted); font-size: 13px; }
.empty { color: var(--muted); }
a { color: #1f5fbf; }
dl.overview { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 18px; margin: 0 0 16px; font-size: 14px; }
dl.overview dt { color: var(--muted); } dl.overview dd { margin: 0; }
form.filter { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; margin: 0 0 8px; font-size: 14px; }
form.filter input, form.filter select { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
form.filter button { border-color: #1f5fbf; color: #1f5fbf; }
table.accounts { background: #fff; border: 1px solid var(--line); }
table.accounts col.name { width: 17%; } table.accounts col.state { width: 19%; } col.why { width: 42%; } table.accounts col.success { width: 22%; }
table.accounts td { padding: 5px 8px; }
details.folded { margin: 8px 0 0; font-size: 14px; } details.folded summary { cursor: pointer; color: var(--muted); }
tr.group th { background: var(--bg); color: var(--ink); font-size: 13px; text-transform: none; letter-spacing: 0; border-top: 1px solid var(--line); }
tr.attention td:first-child { border-left: 4px solid var(--bad); }
nav.pager { display: flex; gap: 16px; justify-content: center; margin: 12px 0; font-size: 14px; }
ul.plain { list-style: none; padding: 0; margin: 0; font-size: 14px; } ul.plain li { margin: 4px 0; }
`;

/**
 * The console's Content-Security-Policy: nothing may load or run but its own
 * style sheet (allowed by its hash); forms post only to the console; no page
 * may frame it.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** The headers of every answer of the console: never cached, framed, sniffed or referred from. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
});

/** A whole page of the console: its title, a header, and `body`. */
export function consoleDocument(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body>
<header><h1>hiresync console</h1><span>every account's state, and what an operator can do about it</span></header>
<main>
${body}
</main>
</body>
</html>
`.text;
}

/** Answers with a page of the console and its headers (`extra` headers too). */
export function sendConsolePage(
  res: ServerResponse,
  status: number,
  page: string,
  extra: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, { ...CONSOLE_HEADERS, ...extra });
  res.end(page);
}

/** A short page of the console that says one thing (a refusal, a login to give) and links back to it. */
export function messagePage(title: string, lines: readonly string[]): string {
  return consoleDocument(
    title,
    html`<div class="notice bad"><p><strong>${title}</strong></p>${lines.map((l) => html`<p>${l}</p>`)}</div>
<p><a href="./">Back to the console</a></p>`,
  );
}
