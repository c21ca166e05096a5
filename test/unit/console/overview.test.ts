import { describe, expect, it } from 'vitest';
import {
  type ConsoleQuery,
  overviewHref,
  PAGE_SIZE,
  parseConsoleQuery,
} from '../../../src/console/overview-query.js';
import { filterRows, overviewRows, pageOf } from '../../../src/console/overview-rows.js';
import { renderConsole } from '../../../src/console/render-console.js';
import { OVERVIEW_ABOVE } from '../../../src/status/overview.js';
import type { AccountReport } from '../../../src/status/report-types.js';
import { accountOf, reportOf, resource, run } from '../../support/status-fixture.js';

const ok = (id: string) => run({ id, outcome: 'succeeded' });
const failed = (id: string, error: string) => run({ id, outcome: 'failed', error });
const query = (text: string) => {
  const parsed = parseConsoleQuery(new URLSearchParams(text));
  if ('invalid' in parsed) throw new Error(parsed.invalid);
  return parsed;
};

/** `n` accounts acct001…: every 10th failing its jobs, acct005 needing re-authorizing (its three resources failed because of it). */
function accounts(n: number): AccountReport[] {
  return Array.from({ length: n }, (_, i) => {
    const name = `acct${String(i + 1).padStart(3, '0')}`;
    if (i + 1 === 5) {
      const refused = `account ${name} needs re-authorizing: its refresh token was refused; ask the customer`;
      return accountOf(
        {
          name,
          authMode: 'partner',
          state: 'needs_reauthorization',
          reauthorizationReason: 'revoked',
        },
        ['jobs', 'job_posts', 'tracking_links'].map((r, k) =>
          resource(name, r, failed(String(k), refused)),
        ),
      );
    }
    return accountOf({ name, authMode: 'client_credentials', state: 'enabled' }, [
      resource(
        name,
        'jobs',
        (i + 1) % 10 === 0 ? failed('1', '503 from /v3/jobs: later') : ok('1'),
      ),
      resource(name, 'job_posts', ok('2')),
    ]);
  });
}

const TOKEN = 'form-token';

describe("the console's query", () => {
  it('takes a name, a state and a page, and says which values it refuses', () => {
    expect(query('name=%20Acme%20&state=failing&page=3')).toMatchObject({
      name: 'Acme',
      state: 'failing',
      page: 3,
      overview: true,
      account: undefined,
    });
    expect(query('')).toMatchObject({ name: '', state: '', page: 1, overview: false });
    expect(query('account=acme').account).toBe('acme');
    for (const bad of [
      'page=0',
      'page=-1',
      'page=2x',
      'page=',
      'page=1e3',
      'state=<b>',
      `name=${'a'.repeat(41)}`,
    ]) {
      expect(parseConsoleQuery(new URLSearchParams(bad))).toHaveProperty('invalid');
    }
  });

  it('links a page of the overview keeping the filter, and the whole overview as ./', () => {
    const filter: Pick<ConsoleQuery, 'name' | 'state'> = { name: 'a&b', state: 'enabled' };
    expect(overviewHref(filter, 2)).toBe('?name=a%26b&state=enabled&page=2');
    expect(overviewHref(filter, 1)).toBe('?name=a%26b&state=enabled');
    expect(overviewHref({ name: '', state: '' }, 1)).toBe('./');
  });
});

describe("the overview's lines", () => {
  it('puts the accounts that need action first, saying why once per cause, then the others in order', () => {
    const rows = overviewRows(reportOf(accounts(30)));
    expect(rows.slice(0, 4).map((r) => [r.account, r.why])).toEqual([
      ['acct005', 'needs re-authorizing (failed because of it: jobs, job_posts, tracking_links)'],
      ['acct010', 'failed: jobs'],
      ['acct020', 'failed: jobs'],
      ['acct030', 'failed: jobs'],
    ]);
    expect(rows.slice(4, 7).map((r) => [r.account, r.why])).toEqual([
      ['acct001', null],
      ['acct002', null],
      ['acct003', null],
    ]);
    expect(rows).toHaveLength(30);
  });

  it('filters by part of the name in any case and by state', () => {
    const rows = overviewRows(reportOf(accounts(30)));
    expect(filterRows(rows, { name: 'CT02', state: '' }).map((r) => r.account)).toEqual([
      'acct020',
      ...Array.from({ length: 9 }, (_, i) => `acct02${i + 1}`).filter((a) => a !== 'acct020'),
    ]);
    expect(filterRows(rows, { name: '', state: 'failing' }).map((r) => r.account)).toEqual([
      'acct005',
      'acct010',
      'acct020',
      'acct030',
    ]);
    expect(
      filterRows(rows, { name: '', state: 'needs_reauthorization' }).map((r) => r.account),
    ).toEqual(['acct005']);
    expect(filterRows(rows, { name: '1', state: 'attention' }).map((r) => r.account)).toEqual([
      'acct010',
    ]);
    expect(filterRows(rows, { name: 'zzz', state: '' })).toEqual([]);
  });

  it('cuts them into pages, a page past the last showing the last', () => {
    const items = Array.from({ length: 120 }, (_, i) => i + 1);
    expect(pageOf(items, 1, 50)).toMatchObject({ page: 1, pages: 3, from: 1, to: 50, total: 120 });
    const last = pageOf(items, 3, 50);
    expect(last).toMatchObject({ page: 3, from: 101, to: 120 });
    expect(last.items).toEqual(items.slice(100));
    expect(pageOf(items, 99, 50)).toEqual(last);
    expect(pageOf([], 4, 50)).toMatchObject({ items: [], page: 1, pages: 1, from: 0, to: 0 });
  });
});

describe('which page the console shows', () => {
  it(`shows every account on one page up to ${OVERVIEW_ABOVE} accounts, as it always did`, () => {
    const { status, page } = renderConsole(
      reportOf(accounts(OVERVIEW_ABOVE)),
      { formToken: TOKEN },
      query(''),
    );
    expect(status).toBe(200);
    expect(page).toContain('<section class="account" id="account-acct050">');
    expect(page).not.toContain('<form method="get"');
    // One problem per cause: acct005's state (its 3 resources in it), and 5 failed jobs.
    expect(page).toContain('6 problems');
    expect(page).toContain(
      'needs re-authorizing (3 resources failed because of it: jobs, job_posts, tracking_links)',
    );
    expect(page).not.toContain('href="#account-acct005">acct005/jobs</a>');
  });

  it(`shows the overview above ${OVERVIEW_ABOVE} accounts: problems first, ${PAGE_SIZE} lines a page, each account linking to its page`, () => {
    const report = reportOf(accounts(200));
    const { status, page } = renderConsole(report, { formToken: TOKEN }, query(''));
    expect(status).toBe(200);
    expect(page).not.toContain('<section class="account"');
    expect(page).toContain('<form method="get" class="filter"');
    const linked = [...page.matchAll(/<td><a href="\?account=(acct\d+)">/g)].map((m) => m[1]);
    expect(linked).toHaveLength(PAGE_SIZE);
    expect(linked.slice(0, 3)).toEqual(['acct005', 'acct010', 'acct020']);
    expect(page).toContain('1–50 of 200');
    expect(page).toContain('<a href="?page=2" rel="next">next →</a>');
    expect(page).toContain('21 problems');
    const last = renderConsole(report, { formToken: TOKEN }, query('page=9')).page;
    expect(last).toContain('151–200 of 200');
    expect(last).toContain('<a href="?page=3" rel="prev">← previous</a>');
    // The whole page stays small at 200 accounts.
    expect(Buffer.byteLength(page)).toBeLessThan(40_000);
  });

  it('shows the overview filtered, its links keeping the filter, escaping what was typed', () => {
    const report = reportOf(accounts(200));
    const { page } = renderConsole(
      report,
      { formToken: TOKEN },
      query('name=acct1&state=enabled&page=2'),
    );
    expect(page).toContain('Accounts matching the filter: 100 of 200');
    expect(page).toContain('<a href="?name=acct1&amp;state=enabled" rel="prev">');
    expect(page).toContain('<option value="enabled" selected>');
    const hostile = renderConsole(report, { formToken: TOKEN }, query('name="><script>x')).page;
    expect(hostile).not.toContain('<script>');
    expect(hostile).toContain('value="&quot;&gt;&lt;script&gt;x"');
    expect(hostile).toContain('No account matches the filter.');
  });

  it("shows one account's page, and 404 for an account the report has not", () => {
    const report = reportOf(accounts(200));
    const one = renderConsole(report, { formToken: TOKEN }, query('account=acct005'));
    expect(one.status).toBe(200);
    expect(one.page).toContain('<section class="account" id="account-acct005">');
    expect(one.page.match(/<section class="account"/g)).toHaveLength(1);
    expect(one.page).toContain('Make a connect link for acct005');
    // Its resources' errors, which its state caused, told once: folded under one line.
    const folded = one.page.slice(one.page.indexOf('<details class="folded">'));
    expect(folded).toMatch(
      /^<details class="folded">\n<summary>3 resources failed because of it: jobs, job_posts, tracking_links<\/summary>/,
    );
    expect(one.page.indexOf('data-resource="jobs"')).toBeGreaterThan(one.page.indexOf('<details'));
    expect(one.page.match(/data-resource=/g)).toHaveLength(3);
    const own = renderConsole(report, { formToken: TOKEN }, query('account=acct010')).page;
    expect(own).not.toContain('<details');
    expect(own).toContain('<div class="problem" data-resource="jobs">');
    const missing = renderConsole(report, { formToken: TOKEN }, query('account=%3Cb%3Enope'));
    expect(missing.status).toBe(404);
    expect(missing.page).toContain('No account &lt;b&gt;nope here');
  });
});
