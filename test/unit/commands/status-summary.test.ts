import { describe, expect, it } from 'vitest';
import { formatStatusDetail } from '../../../src/commands/status-detail.js';
import {
  formatCheck,
  formatStatusSummary,
  statusLayout,
  summaryRow,
} from '../../../src/commands/status-summary.js';
import { accountOf, reportOf, resource, run } from '../../support/status-fixture.js';

const ENABLED = { authMode: 'partner', state: 'enabled' };

describe('the layout of hiresync status', () => {
  const layout = (input: Partial<Parameters<typeof statusLayout>[0]>) =>
    statusLayout({
      terminal: true,
      accounts: 3,
      named: false,
      verbose: false,
      summary: false,
      ...input,
    });

  it('is one line per account in a terminal with several accounts', () => {
    expect(layout({})).toBe('summary');
  });

  it('is one line per resource for --account, -v, one account, or output that is not a terminal', () => {
    expect(layout({ named: true })).toBe('detail');
    expect(layout({ verbose: true })).toBe('detail');
    expect(layout({ accounts: 1 })).toBe('detail');
    expect(layout({ terminal: false })).toBe('detail');
  });

  it('is one line per account with --summary, even in a pipe or for named accounts', () => {
    expect(layout({ terminal: false, summary: true })).toBe('summary');
    expect(layout({ named: true, summary: true })).toBe('summary');
  });

  it('is the overview above 50 accounts, in a terminal or a pipe, unless --account, -v or --summary asks for lines', () => {
    expect(layout({ accounts: 51 })).toBe('overview');
    expect(layout({ accounts: 5000, terminal: false })).toBe('overview');
    expect(layout({ accounts: 5000, named: true })).toBe('detail');
    expect(layout({ accounts: 5000, verbose: true, terminal: false })).toBe('detail');
    expect(layout({ accounts: 5000, summary: true })).toBe('summary');
  });

  it('keeps the layouts it had up to 50 accounts', () => {
    expect(layout({ accounts: 50 })).toBe('summary');
    expect(layout({ accounts: 50, terminal: false })).toBe('detail');
  });
});

describe('the summary line of an account', () => {
  it('counts its resources by where they stand, with its last success and the run in flight', () => {
    const account = accountOf(
      { name: 'acme', ...ENABLED },
      [
        resource('acme', 'jobs', run({ id: '1', outcome: 'succeeded' })),
        resource(
          'acme',
          'job_posts',
          run({ id: '2', outcome: 'failed', error: '500 from /v3/job_posts' }),
        ),
        resource('acme', 'users', run({ id: '3', outcome: 'failed', error: '403 from /v3/users' })),
        resource('acme', 'offices'),
        resource('acme', 'tracking_links', run({ id: '4', outcome: 'running', pages: 1 })),
      ],
      ['acme/tracking_links'],
    );
    expect(summaryRow(account)).toEqual([
      'acme',
      'enabled',
      '1 ok, 1 running, 1 failed, 1 not permitted, 1 never run',
      '2026-05-01 12:01',
      'tracking_links: run 4, 1 page',
    ]);
  });

  it('says a run whose process is gone is interrupted, and counts several runs in flight', () => {
    const one = accountOf({ name: 'acme', ...ENABLED }, [
      resource('acme', 'jobs', run({ id: '9', outcome: 'running', pages: 12 })),
    ]);
    expect(summaryRow(one)[4]).toBe('jobs: run 9, 12 pages, interrupted');
    const two = accountOf({ name: 'acme', ...ENABLED }, [
      resource('acme', 'jobs', run({ id: '9', outcome: 'running' })),
      resource('acme', 'users', run({ id: '10', outcome: 'running' })),
    ]);
    expect(summaryRow(two)[4]).toBe('2 runs: jobs, users');
    expect(summaryRow(accountOf({ name: 'new', ...ENABLED }, []))).toEqual([
      'new',
      'enabled',
      '-',
      '-',
      '-',
    ]);
  });

  it('fits 46 accounts in 46 lines of the table and under 100 columns', () => {
    const accounts = Array.from({ length: 46 }, (_, i) =>
      accountOf({ name: `customer_${i}`, ...ENABLED }, [
        resource(`customer_${i}`, 'jobs', run({ id: `${i}`, outcome: 'succeeded' })),
        resource(`customer_${i}`, 'job_posts', run({ id: `${i + 100}`, outcome: 'running' })),
      ]),
    );
    const lines = formatStatusSummary(reportOf(accounts)).split('\n');
    expect(lines.filter((l) => /^customer_/.test(l))).toHaveLength(46);
    expect(lines.length).toBeLessThanOrEqual(46 + 4);
    expect(
      Math.max(...lines.filter((l) => /^customer_/.test(l)).map((l) => l.length)),
    ).toBeLessThan(100);
  });

  it('names below the table an account that needs re-authorizing, with why and what to do', () => {
    const text = formatStatusSummary(
      reportOf([
        accountOf(
          {
            name: 'beta',
            authMode: 'partner',
            state: 'needs_reauthorization',
            reauthorizationReason: 'revoked',
          },
          [],
        ),
      ]),
    );
    expect(text).toMatch(/^beta\s+needs_reauthorization\s/m);
    expect(text).toContain(
      "beta needs reauthorization: revoked; send the customer's administrator a connect link ('hiresync accounts invite beta'), or run 'hiresync accounts authorize beta' where their browser can reach this host (its data is kept)",
    );
  });
});

describe('the per-resource table', () => {
  it('keeps its columns: timestamps as two words, as Postgres prints them, and default without an account column', () => {
    const text = formatStatusDetail(
      reportOf([
        accountOf({ name: 'default', ...ENABLED }, [
          resource('default', 'jobs', run({ id: '1', outcome: 'succeeded' })),
        ]),
      ]),
    );
    expect(text.split('\n')[0]).toMatch(/^resource\s+last run\s+started\s+finished\s+pages/);
    expect(text).toMatch(
      /^jobs\s+full\s+2026-05-01 12:00:00\.123456\+00\s+2026-05-01 12:01:00\.5\+00\s+3\s+120\s+succeeded\s+2026-05-01 12:01:00\.5\+00\s+no$/m,
    );
  });
});

describe('what status --check prints', () => {
  it('says it passed and how many accounts it checked, or each problem on its own line', () => {
    const good = reportOf([
      accountOf({ name: 'acme', ...ENABLED }, [
        resource('acme', 'jobs', run({ id: '1', outcome: 'succeeded' })),
      ]),
    ]);
    expect(formatCheck(good)).toMatch(/^status check passed: 1 account, /);
    const bad = reportOf([
      accountOf({ name: 'acme', ...ENABLED }, [
        resource('acme', 'jobs', run({ id: '1', outcome: 'failed', error: '500 from /v3/jobs' })),
      ]),
    ]);
    expect(formatCheck(bad)).toBe(
      'status check failed: 1 problem\nacme/jobs: last run 1 failed: 500 from /v3/jobs',
    );
  });
});
