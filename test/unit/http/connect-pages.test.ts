import { describe, expect, it } from 'vitest';
import {
  connectedPage,
  connectFailedPage,
  linkRefusedPage,
  stateRefusedPage,
  vendorErrorPage,
} from '../../../src/http/connect-messages.js';
import { escapeHtml, PAGE_HEADERS, renderPage } from '../../../src/http/connect-pages.js';
import { registerSecret } from '../../../src/secret.js';

describe('connect pages', () => {
  it('escapes the five characters HTML gives meaning to', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&amp;</a>`)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
  });

  it('renders the title and every paragraph as text, never markup', () => {
    const html = renderPage({
      status: 400,
      title: '<img src=x onerror=alert(1)>',
      paragraphs: ['</p><script>alert(1)</script>', 'a & b'],
    });
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script>');
    expect(html).toContain('<h1>&lt;img src=x onerror=alert(1)&gt;</h1>');
    expect(html).toContain('<p>&lt;/p&gt;&lt;script&gt;alert(1)&lt;/script&gt;</p>');
    expect(html).toContain('<p>a &amp; b</p>');
  });

  it("shows the authorization server's error escaped, cut short, and without a secret it echoes", () => {
    registerSecret('code-abcdef-123456');
    const page = vendorErrorPage(
      'acme',
      'invalid_request',
      `bad code code-abcdef-123456 <b>${'x'.repeat(500)}`,
    );
    const html = renderPage(page);
    expect(page.status).toBe(400);
    expect(html).not.toContain('code-abcdef-123456');
    expect(html).toContain('bad code [redacted] &lt;b&gt;');
    expect(html.length).toBeLessThan(2500);
    expect(renderPage(connectFailedPage('acme', 'refused code-abcdef-123456'))).not.toContain(
      'code-abcdef-123456',
    );
  });

  it('sends no-store, no referrer, and a CSP that allows nothing but its own style', () => {
    expect(PAGE_HEADERS['cache-control']).toBe('no-store');
    expect(PAGE_HEADERS['referrer-policy']).toBe('no-referrer');
    const csp = PAGE_HEADERS['content-security-policy'] as string;
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; /);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
  });

  it('says for each refusal what happened and what to do, with a status to match', () => {
    const at = new Date('2026-12-03T04:30:00Z');
    const pages = [
      [linkRefusedPage({ kind: 'forged' }), 404, 'This link is not valid'],
      [linkRefusedPage({ kind: 'unknown' }), 404, 'This link is not known'],
      [linkRefusedPage({ kind: 'used', account: 'acme', usedAt: at }), 410, '2026-12-03 04:30 UTC'],
      [linkRefusedPage({ kind: 'expired', account: 'acme', expiredAt: at }), 410, 'expired'],
      [
        linkRefusedPage({ kind: 'not partner', account: 'acme' }),
        409,
        'credentials of another kind',
      ],
      [linkRefusedPage({ kind: 'removed', account: 'acme' }), 410, 'was removed'],
      [stateRefusedPage({ kind: 'unknown state' }), 400, 'never issued'],
      [stateRefusedPage({ kind: 'replayed', account: 'acme', linkUsed: false }), 409, 'once more'],
      [stateRefusedPage({ kind: 'state expired', account: 'acme' }), 400, '15 minutes'],
    ] as const;
    for (const [page, status, text] of pages) {
      expect(page.status).toBe(status);
      expect(renderPage(page)).toContain(text);
      expect(page.paragraphs.join(' ')).toContain('Nothing was changed.');
    }
    expect(connectedPage(undefined, 'acme', undefined).title).toBe('The account acme is connected');
  });

  it('tells a new account its first sync starts, and a re-authorized one that its syncs resume', () => {
    const enabled = { state: 'enabled' } as Parameters<typeof connectedPage>[0];
    expect(connectedPage(enabled, 'acme', undefined).paragraphs[0]).toBe(
      'hiresync is authorized to read the account acme; its first sync starts within a minute.',
    );
    expect(connectedPage(enabled, 'acme', 'needs_reauthorization').paragraphs[0]).toBe(
      'hiresync is authorized again to read the account acme; its syncs resume within a minute.',
    );
  });
});
