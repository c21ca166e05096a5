// The console's section of workers, queue and next runs, in headless
// Chromium (Debian's `chromium`, driven by playwright-core): two workers
// alive, then one once the other stops cleanly; the run queue by state; the
// soonest scheduled runs. The screenshot goes to test-results/.
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { openConsoleBrowser, screenshot, skipUnlessChromium } from '../support/console-browser.js';
import { CONSOLE_PASSWORD, freePort } from '../support/console-deployment.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { accounts, cli, defer } = cleanupAfterEach();

describe('the console in headless Chromium: workers and queue', () => {
  it('lists every worker alive with host and pid, drops one that stopped, and shows the queue and the soonest runs', async (ctx) => {
    skipUnlessChromium(ctx, 'console health browser test');
    const h = await accounts({ accounts: ['acme'] });
    const port = await freePort();
    const serving = cli(['worker'], {
      ...h.env,
      HIRESYNC_HTTP_PORT: String(port),
      HIRESYNC_CONSOLE_PASSWORD: CONSOLE_PASSWORD,
    });
    const other = cli(['worker'], h.env);
    for (const w of [serving, other]) {
      await waitFor(async () => w.stdout().includes('"worker started"'), 30_000);
    }
    const { page } = await openConsoleBrowser(defer);
    const url = `http://127.0.0.1:${port}/`;

    expect((await page.goto(url))?.status()).toBe(200);
    const health = page.locator('#health');
    expect(await health.locator('[data-health="workers"]').textContent()).toBe('2 workers alive');
    const pids = async () =>
      (await health.locator('table.workers tbody tr').allInnerTexts()).map((row) =>
        row.split('\t').slice(0, 2).join(':'),
      );
    expect((await pids()).sort()).toEqual(
      [`${hostname()}:${serving.child.pid}`, `${hostname()}:${other.child.pid}`].sort(),
    );
    expect(await health.locator('[data-health="queue"]').textContent()).toMatch(
      /^Run queue: \d+ waiting · \d+ active · \d+ delayed · \d+ failed$/,
    );
    const next = health.locator('[data-health="next-runs"]');
    expect(await next.locator('summary').textContent()).toMatch(
      /^Next scheduled run: (default|acme)\/\w+ \((incremental|full)\) at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
    );
    await next.locator('summary').click();
    expect(await next.locator('tbody tr').count()).toBeGreaterThan(0);
    await screenshot(health, 'health');

    other.child.kill('SIGTERM');
    expect(await other.exit).toBe(0);
    await page.reload();
    expect(await health.locator('[data-health="workers"]').textContent()).toBe('1 worker alive');
    expect(await pids()).toEqual([`${hostname()}:${serving.child.pid}`]);
  }, 120_000);
});
