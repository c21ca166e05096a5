// The console's actions in headless Chromium (Debian's `chromium`, driven by
// playwright-core): the operator connects a new customer, withdraws the
// pending link, syncs a resource now, disables and enables an account and
// tests credentials, each by clicking; another site's page posting an
// action's form, and a POST without the token, change nothing. Screenshots
// go to test-results/console-action-*.png; their paths are logged.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { ConnectLinkTables } from '../../src/accounts/connect-links.js';
import { escapeHtml } from '../../src/console/html.js';
import { createSyncQueue } from '../../src/queue/sync-job.js';
import { openConsoleBrowser, screenshot, skipUnlessChromium } from '../support/console-browser.js';
import { startConsoleDeployment } from '../support/console-deployment.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { partner, cli, defer } = cleanupAfterEach();

/** Clicks `button` on `page` and returns the status of the POST it sends, its answer loaded. */
async function press(page: Page, button: ReturnType<Page['getByRole']>): Promise<number> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    button.click(),
  ]);
  await page.waitForLoadState();
  return response.status();
}

/** A page of another site holding `form`, posting it to `action` when its button is pressed. */
async function foreignSite(action: string, form: Record<string, string>): Promise<string> {
  const fields = Object.entries(form)
    .map(([n, v]) => `<input type="hidden" name="${escapeHtml(n)}" value="${escapeHtml(v)}">`)
    .join('');
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><title>Your invoice</title><form method="post" action="${escapeHtml(action)}">${fields}<button type="submit">See the invoice</button></form>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://localhost:${(server.address() as AddressInfo).port}/`;
}

describe('the console actions in headless Chromium', () => {
  it('lets the operator connect a new customer, withdraw its link, sync a resource now, disable and enable an account and test credentials by clicking; another site’s form does nothing', async (ctx) => {
    skipUnlessChromium(ctx, 'console actions browser test');
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli);
    const redis = new Redis(h.env.REDIS_URL as string, { maxRetriesPerRequest: null });
    const queue = createSyncQueue(redis, h.config.redisPrefix);
    defer(async () => {
      await queue.close();
      redis.disconnect();
    });
    const links = () =>
      h.database.db
        .withTables<ConnectLinkTables>()
        .selectFrom('hiresync.connect_links')
        .select(['id', 'account', 'withdrawn_at'])
        .execute();
    const { context, page } = await openConsoleBrowser(defer);
    const home = async () => {
      expect((await page.goto(`${deployment.url}/`))?.status()).toBe(200);
    };
    await home();
    const gamma = page.locator('#account-gamma');
    expect(await gamma.getByRole('button').allInnerTexts()).toEqual([
      'Test the credentials of gamma',
      'Disable gamma',
      'Sync now',
    ]);
    await screenshot(page, 'action-overview');

    // Connect a new customer: the link is shown once, on top of the console.
    await page.getByLabel("New account's name").fill('newco');
    expect(
      await press(page, page.getByRole('button', { name: 'Make a connect link', exact: true })),
    ).toBe(200);
    const link = (await page.locator('#connect-link .link').textContent()) ?? '';
    expect(link).toMatch(new RegExp(`^${deployment.url}/connect/[A-Za-z0-9._~-]+$`));
    expect(await page.locator('#connect-link').textContent()).toContain('Connect link for newco');
    await screenshot(page, 'action-invite');
    expect((await links()).map((l) => l.account)).toEqual(['newco']);

    // The pending links list it, without the link; Withdraw withdraws it.
    const pending = page.locator('#pending-links tr[data-link]');
    expect(await pending.count()).toBe(1);
    expect(await page.locator('#pending-links').textContent()).not.toContain(link);
    expect(await press(page, pending.getByRole('button', { name: 'Withdraw' }))).toBe(200);
    expect(await page.locator('#action-result').textContent()).toContain(
      'A connect link for newco was withdrawn',
    );
    await screenshot(page, 'action-withdraw');
    expect((await links())[0]?.withdrawn_at).not.toBeNull();
    await page.getByRole('link', { name: 'Back to the console' }).click();
    expect(await page.locator('#pending-links').textContent()).toContain(
      'No link waits to be used.',
    );

    // Sync now on gamma's jobs row: a run of the pair is queued.
    const jobsRow = gamma.locator('tr', { hasText: 'jobs' }).first();
    expect(await press(page, jobsRow.getByRole('button', { name: 'Sync now' }))).toBe(200);
    const result = (await page.locator('#action-result').textContent()) ?? '';
    expect(result).toContain('A run of gamma/jobs is queued');
    await screenshot(page, 'action-sync');
    const jobId = /Job (\d+):/.exec(result)?.[1] ?? '';
    expect((await queue.getJob(jobId))?.data).toMatchObject({
      account: 'gamma',
      resource: 'jobs',
      origin: 'console',
    });

    // Disable gamma, then enable it again.
    await home();
    expect(await press(page, page.getByRole('button', { name: 'Disable gamma' }))).toBe(200);
    expect(await page.locator('#action-result').textContent()).toContain(
      'The account gamma is disabled',
    );
    await screenshot(page, 'action-disable');
    expect((await h.store.get('gamma'))?.state).toBe('disabled');
    await page.getByRole('link', { name: 'Back to the console' }).click();
    expect(await gamma.locator('h3').textContent()).toBe('gamma disabled');
    expect(await press(page, page.getByRole('button', { name: 'Enable gamma' }))).toBe(200);
    await screenshot(page, 'action-enable');
    expect((await h.store.get('gamma'))?.state).toBe('enabled');

    // Test beta's credentials: what is wrong and what to do.
    await home();
    expect(
      await press(page, page.getByRole('button', { name: 'Test the credentials of beta' })),
    ).toBe(200);
    expect(await page.locator('#action-result').textContent()).toBe(
      'The credentials of beta do not work',
    );
    const tokenLine = (await page.locator('#test-token').textContent()) ?? '';
    expect(tokenLine).toContain(
      'no access token could be minted with its credentials: account beta: the token service refused its client secret',
    );
    expect(tokenLine).toContain("store the right one with 'hiresync accounts update beta'");
    await screenshot(page, 'action-test');

    // Another site's page posts gamma's Disable form, with a valid token even: refused, nothing done.
    await home();
    const token = (await page.locator('input[name="token"]').first().getAttribute('value')) ?? '';
    const attacker = await context.newPage();
    await attacker.goto(
      await foreignSite(`${deployment.url}/`, { action: 'disable', account: 'gamma', token }),
    );
    expect(await press(attacker, attacker.getByRole('button', { name: 'See the invoice' }))).toBe(
      403,
    );
    const refusal = (await attacker.locator('main').textContent()) ?? '';
    expect(refusal).toContain('Refused: nothing was done');
    expect(refusal).toMatch(
      /sent from another site \(Origin http:\/\/localhost:\d+, Sec-Fetch-Site cross-site\)/,
    );
    await screenshot(attacker, 'action-cross-site-refused');
    expect((await h.store.get('gamma'))?.state).toBe('enabled');
    // The console's own origin without the token: refused too.
    const tokenless = await context.request.post(`${deployment.url}/`, {
      form: { action: 'disable', account: 'gamma' },
      headers: { origin: deployment.url },
    });
    expect(tokenless.status()).toBe(403);
    expect((await h.store.get('gamma'))?.state).toBe('enabled');
    // The page's own form still works, once.
    expect(await press(page, page.getByRole('button', { name: 'Disable gamma' }))).toBe(200);
    expect((await h.store.get('gamma'))?.state).toBe('disabled');
  }, 180_000);
});
