import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/** A page of the connect flow: what the customer's administrator reads. */
export interface ConnectPage {
  status: number;
  /** The heading (and title): what happened, in a few words. */
  title: string;
  /** Plain text, one paragraph each: escaped, never interpreted. */
  paragraphs: readonly string[];
}

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#222}h1{font-size:1.4rem}';

/**
 * The headers of every page: nothing cached (a page may follow a URL holding
 * a code), no referrer sent anywhere, and a content security policy that
 * allows nothing but the page's own style (no script, image, frame or form).
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
});

/** `text` with the five characters HTML gives meaning to replaced by entities. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;',
  );
}

/** The HTML of `page`: every text escaped. */
export function renderPage(page: ConnectPage): string {
  const title = escapeHtml(page.title);
  const body = page.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · hiresync</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${title}</h1>
${body}
</body>
</html>
`;
}

/** Answers with `page`, and `setCookie` when given. */
export function sendPage(res: ServerResponse, page: ConnectPage, setCookie?: string): void {
  const html = renderPage(page);
  res.writeHead(page.status, {
    ...PAGE_HEADERS,
    ...(setCookie === undefined ? {} : { 'set-cookie': setCookie }),
    'content-length': Buffer.byteLength(html),
  });
  res.end(html);
}

/** Answers a 302 to `location`, with the pages' headers (no referrer leaves with it) and `setCookie` when given. */
export function sendRedirect(res: ServerResponse, location: string, setCookie?: string): void {
  res.writeHead(302, {
    location,
    ...(setCookie === undefined ? {} : { 'set-cookie': setCookie }),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-security-policy': PAGE_HEADERS['content-security-policy'] as string,
    'content-length': 0,
  });
  res.end();
}
