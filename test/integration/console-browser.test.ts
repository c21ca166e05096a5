// The console in a real browser: headless Chromium from Debian's `chromium`
// package, driven by playwright-core (no browser download). An operator logs
// in, sees a failing account's error and what to do, makes a connect link
// for an account that needs re-authorizing; a page of another site posting
// the same form, and a POST without the form's token, make none; the
// customer approving from a link someone else opened is refused (no cookie),
// and opening the link in their own browser enables the account.
// Screenshots go to test-results/ (gitignored); their paths are logged.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/console/html.js';
import { openConsoleBrowser, screenshot, skipUnlessChromium } from '../support/console-browser.js';
import { startConsoleDeployment } from '../support/console-deployment.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { partner, cli, defer } = cleanupAfterEach();

/** A page of another site (another origin) holding `form`, posting to `action`: what a CSRF attack serves. */
async function foreignSite(action: string, form: Record<string, string>): Promise<string> {
  const fields = Object.entries(form)
    .map(
      ([name, value]) =>
        `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`,
    )
    .join('');
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><title>A prize for you</title><form method="post" action="${escapeHtml(action)}">${fields}<button type="submit">Claim your prize</button></form>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://localhost:${(server.address() as AddressInfo).port}/`;
}

describe('the console in headless Chromium', () => {
  it("logs in, shows a failing account's error and what to do, makes a connect link; another site's form and a form without its token make none", async (ctx) => {
    skipUnlessChromium(ctx, 'console browser test');
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli);
    const { browser, context, page } = await openConsoleBrowser(defer);

    // Logged in: every account, and beta (its secret refused) with its failed run's error and what to do.
    const response = await page.goto(`${deployment.url}/`);
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe('hiresync console');
    const beta = page.locator('#account-beta');
    expect(await beta.locator('h3').textContent()).toBe('beta credentials refused');
    expect(
      await beta.locator('.problem[data-state="credentials_refused"] .what').textContent(),
    ).toBe(
      'Credentials refused: the token service refused its client secret (401 invalid_client: Client authentication failed)',
    );
    const problem = beta.locator('.problem[data-resource="jobs"]');
    expect(await problem.locator('.what').textContent()).toMatch(
      /^jobs: account beta: the token service refused its client secret \(401.*'hiresync accounts update beta'/,
    );
    expect(await problem.textContent()).toContain(
      "What to do: store the right secret with 'hiresync accounts update beta' (secret on standard input), then it is enabled again",
    );
    expect(await page.locator('#account-acme .problem.warn .what').textContent()).toContain(
      'Needs re-authorizing: its refresh token was refused',
    );
    // The one connect-link button: acme's; beta and default have none.
    expect(
      (await page.locator('form button').allInnerTexts()).filter((b) =>
        b.startsWith('Make a connect link for'),
      ),
    ).toEqual(['Make a connect link for acme']);
    const token = (await page.locator('input[name="token"]').first().getAttribute('value')) ?? '';
    await screenshot(page, 'overview');

    // The operator makes a link: the page shows it, to send.
    const [made] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Make a connect link for acme' }).click(),
    ]);
    expect(made.status()).toBe(200);
    await page.waitForLoadState();
    const link = await page.locator('#connect-link .link').textContent();
    expect(link).toMatch(new RegExp(`^${deployment.url}/connect/[A-Za-z0-9._~-]+$`));
    expect(await page.locator('#connect-link').textContent()).toContain('Connect link for acme');
    expect(await deployment.linkCount()).toBe(1);
    await screenshot(page, 'connect-link');

    // Another site serves the same form, with a valid token even: its POST
    // carries that site's Origin and is refused.
    const attacker = await context.newPage();
    await attacker.goto(await foreignSite(`${deployment.url}/`, { account: 'acme', token }));
    const [refused] = await Promise.all([
      attacker.waitForResponse((r) => r.request().method() === 'POST'),
      attacker.getByRole('button', { name: 'Claim your prize' }).click(),
    ]);
    expect(refused.status()).toBe(403);
    await attacker.waitForLoadState();
    const refusal = await attacker.locator('main').textContent();
    expect(refusal).toContain('Refused: nothing was done');
    expect(refusal).toMatch(
      /sent from another site \(Origin http:\/\/localhost:\d+, Sec-Fetch-Site cross-site\), not from this console/,
    );
    await screenshot(attacker, 'cross-site-refused');
    expect(await deployment.linkCount()).toBe(1);

    // The console's own origin without the form's token: refused too.
    const tokenless = await context.request.post(`${deployment.url}/`, {
      form: { account: 'acme' },
      headers: { origin: deployment.url },
    });
    expect(tokenless.status()).toBe(403);
    expect(await tokenless.text()).toContain('The form carries no token');
    expect(await deployment.linkCount()).toBe(1);

    // The customer's administrator opens the link (another browser, no
    // login), approves at the simulator's authorize endpoint, and lands on
    // the worker's page saying acme is authorized again.
    h.sim.authorizeAs('acme');
    const customer = await (await browser.newContext()).newPage();
    // First someone else opens the link and sends the vendor's authorize URL
    // on: the customer approves there, and their browser comes back without
    // the cookie the opening set in the opener's, so nothing is bound.
    const opener = await browser.newContext();
    const opened = await opener.request.get(link ?? '', { maxRedirects: 0 });
    expect(opened.status()).toBe(302);
    const refusedHere = await customer.goto(opened.headers().location ?? '');
    expect(refusedHere?.status()).toBe(403);
    expect(await customer.locator('h1').textContent()).toBe('Open the link again in this browser');
    expect((await h.store.get('acme'))?.state).toBe('needs_reauthorization');
    await screenshot(customer, 'customer-other-browser');
    // As that page says: the link opened again in the customer's own browser connects.
    await customer.goto(link ?? '');
    expect(await customer.locator('body').textContent()).toContain(
      'hiresync is authorized again to read the account acme',
    );
    await screenshot(customer, 'customer-connected');
    expect((await h.store.get('acme'))?.state).toBe('enabled');

    // The console now shows acme enabled, and no connect-link button.
    const reloaded = await page.goto(`${deployment.url}/`);
    expect(reloaded?.status()).toBe(200);
    expect(await page.locator('#account-acme h3').textContent()).toBe('acme enabled');
    expect(await page.getByRole('button', { name: 'Make a connect link for acme' }).count()).toBe(
      0,
    );
    await screenshot(page, 'after-reauthorization');
  }, 120_000);
});
