// The console of a deployment of 200 accounts over plain HTTP: the overview
// instead of every account expanded (a page a fraction of the size), a
// filter by name and state, pages, each account on a page of its own, and
// what it answers to a query it cannot take.
import { describe, expect, it } from 'vitest';
import { renderConsolePage } from '../../src/console/console-page.js';
import { main } from '../../src/main.js';
import type { StatusReport } from '../../src/status/report-types.js';
import { captureIo } from '../support/capture-io.js';
import { type ConsoleDeployment, startConsoleDeployment } from '../support/console-deployment.js';
import { CONSOLE_LOGIN } from '../support/console-http.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { addManyAccounts, holdRuns } from '../support/many-accounts.js';

const { partner, cli, defer } = cleanupAfterEach();

async function get(
  deployment: ConsoleDeployment,
  query: string,
  headers: Record<string, string> = CONSOLE_LOGIN,
): Promise<{ status: number; page: string; headers: Headers }> {
  const response = await fetch(`${deployment.url}/${query}`, { headers });
  return { status: response.status, page: await response.text(), headers: response.headers };
}

/** The accounts each line of an overview page links to, in order. */
const linked = (page: string) =>
  [...page.matchAll(/<td><a href="\?account=([a-z0-9_]+)">/g)].map((m) => m[1]);

describe('the console at 200 accounts', () => {
  it('answers the overview: the accounts that need action first, 50 lines a page, a fraction of the page that expanded every account', async () => {
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli);
    // The accounts keep the runs seeded for them: the worker takes none.
    defer(await holdRuns(h.env.REDIS_URL ?? '', h.config.redisPrefix));
    // default, acme, beta and gamma, and 196 more.
    const many = await addManyAccounts(h.database.db, 'beta', 196);

    const first = await get(deployment, '');
    expect(first.status).toBe(200);
    expect(first.page).toContain('200 accounts');
    expect(first.page).not.toContain('<section class="account"');
    const lines = linked(first.page);
    expect(lines).toHaveLength(50);
    // Needing action: acme (re-authorize), beta and the refused (credentials), the failing; then the rest.
    const needing = ['beta', 'acme', ...many.failing, ...many.refused];
    expect(new Set(lines.slice(0, needing.length))).toEqual(new Set(needing));
    expect(lines.slice(needing.length)).not.toContain('acme');
    // One problem per cause: acme, beta, each refused account (its jobs folded in), each failing one.
    expect(first.page).toContain(`${needing.length} problems`);
    expect(first.page).toContain('credentials refused (failed because of it: jobs)');
    expect(first.page).toContain('<a href="?page=2" rel="next">next →</a>');

    // What `/` served before at this many accounts: every account expanded.
    const io = captureIo();
    expect(await main(['status', '--json'], { ...h.env, HIRESYNC_RESOURCES: 'jobs' }, io)).toBe(0);
    const report = JSON.parse(io.out()) as StatusReport;
    expect(report.accounts).toHaveLength(200);
    const expanded = Buffer.byteLength(renderConsolePage(report, { formToken: 'x'.repeat(60) }));
    const overview = Buffer.byteLength(first.page);
    console.log(
      `console page at 200 accounts: every account expanded ${expanded} bytes, the overview ${overview} bytes`,
    );
    expect(overview * 5).toBeLessThan(expanded);

    // Every account once, over the pages; a page past the last shows the last.
    const pages = [lines];
    for (const n of [2, 3, 4]) pages.push(linked((await get(deployment, `?page=${n}`)).page));
    expect(pages.map((p) => p.length)).toEqual([50, 50, 50, 50]);
    expect(new Set(pages.flat()).size).toBe(200);
    const past = await get(deployment, '?page=9');
    expect(past.status).toBe(200);
    expect(linked(past.page)).toEqual(pages[3]);
    expect(past.page).toContain('page 4 of 4');
  }, 120_000);

  it('filters by name and state keeping the filter in its page links, opens an account, and refuses what it cannot take', async () => {
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli);
    // The accounts keep the runs seeded for them: the worker takes none.
    defer(await holdRuns(h.env.REDIS_URL ?? '', h.config.redisPrefix));
    const many = await addManyAccounts(h.database.db, 'beta', 196);

    const byName = await get(deployment, '?name=BULK01');
    expect(byName.status).toBe(200);
    expect(linked(byName.page).sort()).toEqual(many.names.filter((n) => n.startsWith('bulk01')));
    const failing = await get(deployment, '?state=failing');
    expect(new Set(linked(failing.page))).toEqual(
      new Set(['beta', ...many.failing, ...many.refused]),
    );
    const refused = await get(deployment, '?state=credentials_refused&name=bulk');
    expect(linked(refused.page)).toEqual(many.refused);
    const enabled = await get(deployment, '?state=enabled&name=bulk&page=2');
    expect(enabled.page).toContain('<a href="?name=bulk&amp;state=enabled" rel="prev">');
    expect(enabled.page).toContain('<a href="?name=bulk&amp;state=enabled&amp;page=3" rel="next">');
    expect(enabled.page).toContain('<option value="enabled" selected>');

    // An account's own page: as the page of every account showed it.
    const acme = await get(deployment, '?account=acme');
    expect(acme.status).toBe(200);
    expect(acme.page).toContain(
      '<h3>acme <span class="badge warn">needs reauthorization</span></h3>',
    );
    expect(acme.page).toContain('Make a connect link for acme');
    expect(acme.page.match(/<section class="account"/g)).toHaveLength(1);

    // Refused: an account not registered (404), a page or state that is none (400);
    // each a page of the console (its headers), what was typed escaped; without the login, 401.
    const unknown = await get(deployment, '?account=%3Cscript%3Enobody');
    expect(unknown.status).toBe(404);
    expect(unknown.page).toContain('No account &lt;script&gt;nobody here');
    for (const bad of ['?page=0', '?page=two', '?state=%3Cb%3Ebroken', `?name=${'x'.repeat(41)}`]) {
      const answer = await get(deployment, bad);
      expect(answer.status).toBe(400);
      expect(answer.page).not.toMatch(/<script|<b>/);
      expect(answer.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
    expect((await get(deployment, '?account=acme', {})).status).toBe(401);
    expect((await get(deployment, '?page=0', {})).status).toBe(401);
  }, 120_000);
});
