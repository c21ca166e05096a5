/**
 * The console in headless Chromium: Debian's `chromium` package, driven by
 * playwright-core (no browser download), logged in as the console's
 * operator; and its screenshots, in test-results/ (gitignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Locator,
  type Page,
} from 'playwright-core';
import type { TestContext } from 'vitest';
import { CONSOLE_PASSWORD } from './console-deployment.js';

const CHROMIUM = '/usr/bin/chromium';
const RESULTS = fileURLToPath(new URL('../../test-results/', import.meta.url));

/**
 * Skips the test `what` when Debian's chromium is absent; with CI set it
 * fails instead, as in CI the browser tests must run (.ci/run installs it).
 */
export function skipUnlessChromium(ctx: TestContext, what: string): void {
  if (existsSync(CHROMIUM)) return;
  if (process.env.CI)
    throw new Error(`${CHROMIUM} is missing in CI: install Debian's chromium package`);
  const why = `skipped: ${CHROMIUM} is absent; install Debian's chromium package (apt-get install chromium) to run the console's browser test (with CI set it fails instead)`;
  console.warn(`${what} ${why}`);
  ctx.skip(why);
}

/** The browser of a console test. */
export interface ConsoleBrowser {
  browser: Browser;
  /** Logged in to the console (user hiresync, its password), a window of 1280×900. */
  context: BrowserContext;
  /** A page of `context`. */
  page: Page;
}

/** Headless Chromium (closed through `defer`), a context logged in to the console and a page of it. */
export async function openConsoleBrowser(
  defer: (cleanup: () => Promise<unknown>) => void,
): Promise<ConsoleBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox'],
  });
  defer(() => browser.close());
  const context = await browser.newContext({
    httpCredentials: { username: 'hiresync', password: CONSOLE_PASSWORD },
    viewport: { width: 1280, height: 900 },
  });
  return { browser, context, page: await context.newPage() };
}

/**
 * Saves a screenshot of `target` (the whole page, or one element) to
 * test-results/console-`name`.png, logs its path and returns it.
 */
export async function screenshot(target: Page | Locator, name: string): Promise<string> {
  mkdirSync(RESULTS, { recursive: true });
  const path = `${RESULTS}console-${name}.png`;
  if ('goto' in target) await target.screenshot({ path, fullPage: true });
  else await target.screenshot({ path });
  console.log(`console screenshot: ${path}`);
  return path;
}
