// The console of many accounts in headless Chromium (Debian's chromium,
// driven by playwright-core): at 4 accounts the page of every account as
// before; at 200 the overview, filtered with its form (no script: the page
// runs none), paged, and an account opened from it. Screenshots go to
// test-results/console-overview-4.png, console-overview-200.png,
// console-filtered.png and console-account.png.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openConsoleBrowser, screenshot, skipUnlessChromium } from '../support/console-browser.js';
import { startConsoleDeployment } from '../support/console-deployment.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { addManyAccounts, holdRuns } from '../support/many-accounts.js';

const { partner, cli, defer } = cleanupAfterEach();

/** The accounts the lines of the overview link to, in order. */
async function linkedAccounts(page: Page): Promise<string[]> {
  return page.locator('table.accounts td:first-child a').allTextContents();
}

describe('the console of many accounts in headless Chromium', () => {
  it('shows every account at 4 accounts; at 200 the overview, filtered, paged, and an account opened from it', async (ctx) => {
    skipUnlessChromium(ctx, 'console browser test');
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli);
    const { page } = await openConsoleBrowser(defer);

    // 4 accounts: the page of every account, as before; one problem per cause.
    expect((await page.goto(`${deployment.url}/`))?.status()).toBe(200);
    expect(await page.locator('section.account h3').allTextContents()).toEqual([
      'default enabled',
      'acme needs reauthorization',
      'beta credentials refused',
      'gamma enabled',
    ]);
    expect(await page.locator('form.filter').count()).toBe(0);
    expect(await page.locator('main > ul li').allTextContents()).toEqual([
      'acme: needs re-authorizing',
      'beta: credentials refused (1 resource failed because of it: jobs)',
    ]);
    expect(await page.locator('.meta .badge.bad').textContent()).toBe('2 problems');
    await screenshot(page, 'overview-4');

    // 200 accounts: the overview, those that need action first.
    // The accounts keep the runs seeded for them: the worker takes none.
    defer(await holdRuns(h.env.REDIS_URL ?? '', h.config.redisPrefix));
    const many = await addManyAccounts(h.database.db, 'beta', 196);
    expect((await page.goto(`${deployment.url}/`))?.status()).toBe(200);
    expect(await page.locator('section.account').count()).toBe(0);
    const first = await linkedAccounts(page);
    expect(first).toHaveLength(50);
    const needing = new Set(['acme', 'beta', ...many.failing, ...many.refused]);
    expect(new Set(first.slice(0, needing.size))).toEqual(needing);
    expect(await page.locator('tr.group th').allTextContents()).toEqual([
      `Need action: ${needing.size}`,
      `All well: ${200 - needing.size}`,
    ]);
    await screenshot(page, 'overview-200');

    // Next page: the next 50; the pager keeps its place.
    await Promise.all([
      page.waitForURL(/\?page=2$/),
      page.getByRole('link', { name: 'next →' }).click(),
    ]);
    const second = await linkedAccounts(page);
    expect(second).toHaveLength(50);
    expect(second.filter((a) => first.includes(a))).toEqual([]);
    expect(await page.locator('nav.pager').textContent()).toContain('page 2 of 4');

    // The filter form: a name and a state, sent as a GET (no script runs).
    await page.getByLabel('Name contains').fill('bulk1');
    await page.getByLabel('State').selectOption('failing');
    await Promise.all([
      page.waitForURL(/state=failing/),
      page.getByRole('button', { name: 'Filter' }).click(),
    ]);
    expect(new URL(page.url()).searchParams.get('name')).toBe('bulk1');
    const filtered = await linkedAccounts(page);
    expect(filtered).toEqual(
      [...many.failing, ...many.refused]
        .filter((a) => a.startsWith('bulk1'))
        .sort((a, b) => many.names.indexOf(a) - many.names.indexOf(b)),
    );
    expect(await page.getByLabel('Name contains').inputValue()).toBe('bulk1');
    expect(await page.locator('h2').first().textContent()).toBe(
      `Accounts matching the filter: ${filtered.length} of 200`,
    );
    await screenshot(page, 'filtered');

    // An account opened from the overview: its page, as the page of every account showed it.
    const refused = many.refused.find((a) => a.startsWith('bulk1')) ?? '';
    await Promise.all([
      page.waitForURL(new RegExp(`\\?account=${refused}$`)),
      page.getByRole('link', { name: refused, exact: true }).click(),
    ]);
    const section = page.locator(`#account-${refused}`);
    expect(await section.locator('h3').textContent()).toBe(`${refused} credentials refused`);
    expect(
      await section.locator('.problem[data-state="credentials_refused"] .what').textContent(),
    ).toContain('Credentials refused: the token service refused its client secret');
    expect(await page.locator('section.account').count()).toBe(1);
    // Its resources' errors, which the refusal caused, told once under one line.
    expect(await section.locator('details.folded summary').textContent()).toBe(
      '6 resources failed because of it: jobs, job_posts, tracking_links, job_boards, sources, referrers',
    );
    expect(await section.locator('details.folded .problem').count()).toBe(6);
    expect(await section.locator(':scope > .problem[data-resource]').count()).toBe(0);
    await screenshot(page, 'account');
    await Promise.all([
      page.waitForURL(/\/$/),
      page.getByRole('link', { name: '← every account' }).click(),
    ]);
    expect(await linkedAccounts(page)).toEqual(first);
  }, 120_000);
});
