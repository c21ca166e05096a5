import { describe, expect, it } from 'vitest';
import { renderConsolePage } from '../../../src/console/console-page.js';
import { failedRunAction } from '../../../src/status/account-report.js';
import { checkReport } from '../../../src/status/check.js';
import { overviewOf } from '../../../src/status/overview.js';
import type {
  AccountReport,
  ResourceReport,
  RunReport,
  StatusReport,
} from '../../../src/status/report-types.js';

function run(overrides: Partial<RunReport> = {}): RunReport {
  return {
    id: '7',
    mode: 'full',
    startedAt: '2026-11-26T03:00:00.123456Z',
    finishedAt: '2026-11-26T03:01:30.5Z',
    pages: 4,
    records: 312,
    rejected: 0,
    deleted: 0,
    outcome: 'succeeded',
    error: null,
    warnings: null,
    ...overrides,
  };
}

function resource(name: string, overrides: Partial<ResourceReport> = {}): ResourceReport {
  return {
    resource: name,
    state: 'succeeded',
    lastRun: run(),
    lastSuccess: run(),
    lastFinished: run(),
    notPermitted: null,
    inFlight: null,
    checkpoint: null,
    error: null,
    action: null,
    synced: true,
    clockSkew: null,
    ...overrides,
  };
}

function account(name: string, overrides: Partial<AccountReport> = {}): AccountReport {
  const resources = overrides.resources ?? [resource('jobs')];
  const count = (state: ResourceReport['state']) =>
    resources.filter((r) => r.state === state).length;
  return {
    name,
    authMode: 'client_credentials',
    state: 'enabled',
    lastSuccess: '2026-11-26T03:01:30.5Z',
    reauthorization: null,
    credentialsRefused: null,
    problem: null,
    everyResourceRefused: null,
    summary: {
      succeeded: count('succeeded'),
      failed: count('failed'),
      notPermitted: count('not_permitted'),
      neverRun: count('never_run'),
      running: count('running'),
    },
    resources,
    ...overrides,
  };
}

function report(accounts: AccountReport[]): StatusReport {
  const check = checkReport(accounts);
  return {
    generatedAt: '2026-11-26T04:00:00.000Z',
    overview: overviewOf(accounts, check),
    accounts,
    typedViewBlocks: [],
    check,
  };
}

const REFUSED =
  "401 from /token: the client secret was refused (invalid_client): run 'hiresync accounts update beta' with the right secret";

/** A deployment as an operator meets it: one account fine, one failing, one to re-authorize. */
const MIXED = report([
  account('alpha'),
  account('beta', {
    resources: [
      resource('jobs', {
        state: 'failed',
        lastRun: run({ id: '12', outcome: 'failed', error: REFUSED }),
        lastSuccess: null,
        error: REFUSED,
        action: failedRunAction('beta', 'jobs'),
      }),
    ],
    lastSuccess: null,
  }),
  account('acme', {
    authMode: 'partner',
    state: 'needs_reauthorization',
    reauthorization: {
      reason: 'the refresh token was refused (invalid_grant)',
      action: "run 'hiresync accounts authorize acme' (its data is kept)",
    },
    resources: [
      resource('jobs', { action: "run 'hiresync accounts authorize acme' (its data is kept)" }),
    ],
  }),
]);

const TOKEN = 'v1.abc.token-of-this-render';

/** The forms of a page: each one's account field. */
function formAccounts(page: string): string[] {
  return [...page.matchAll(/<form method="post">([\s\S]*?)<\/form>/g)].map(
    (m) => /name="account" value="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '?',
  );
}

describe('the console page', () => {
  it('shows a button that makes a connect link for each account that needs re-authorizing, and for no other', () => {
    const page = renderConsolePage(MIXED, { formToken: TOKEN });
    expect(formAccounts(page)).toEqual(['acme']);
    expect(page).toContain(`<input type="hidden" name="token" value="${TOKEN}">`);
    expect(page).toContain('Make a connect link for acme');
    expect(page).toContain('Needs re-authorizing: the refresh token was refused (invalid_grant)');
  });

  it('shows an account whose credentials were refused with a badge, why and what to do, and no button', () => {
    const action =
      "store the right secret with 'hiresync accounts update gamma' (secret on standard input), then it is enabled again";
    const page = renderConsolePage(
      report([
        account('gamma', {
          state: 'credentials_refused',
          credentialsRefused: {
            reason: 'the token service refused its client secret (401 invalid_client)',
            action,
          },
          resources: [resource('jobs', { action })],
        }),
      ]),
      { formToken: TOKEN },
    );
    expect(page).toContain('<span class="badge bad">credentials refused</span>');
    expect(page).toContain(
      'Credentials refused: the token service refused its client secret (401 invalid_client)',
    );
    expect(page).toContain(
      'What to do: store the right secret with &#39;hiresync accounts update gamma&#39; (secret on standard input), then it is enabled again',
    );
    // Said once, above the table, not again for each resource.
    expect(page.split('hiresync accounts update gamma').length - 1).toBe(1);
    expect(formAccounts(page)).toEqual([]);
  });

  it("shows a failing resource's error and what to do", () => {
    const page = renderConsolePage(MIXED, { formToken: TOKEN });
    expect(page).toContain('beta/jobs</a>: last run failed');
    expect(page).toContain(
      'jobs: 401 from /token: the client secret was refused (invalid_client): run &#39;hiresync accounts update beta&#39; with the right secret',
    );
    expect(page).toContain(
      'What to do: run it again once its cause is fixed: &#39;hiresync sync --account beta --resource jobs&#39; (the worker&#39;s next scheduled run retries it too)',
    );
    expect(page).toContain('<span class="badge bad">failed</span>');
  });

  it('offers the button as what to do about an account to re-authorize, or, when no link can be made here, the command, once', () => {
    const page = renderConsolePage(MIXED, { formToken: TOKEN });
    expect(page.match(/hiresync accounts authorize acme/g) ?? []).toHaveLength(0);
    const off = renderConsolePage(MIXED, {
      formToken: TOKEN,
      linksUnavailable: 'set HIRESYNC_PUBLIC_URL',
    });
    expect(formAccounts(off)).toEqual([]);
    expect(off).toContain('No connect link can be made here: set HIRESYNC_PUBLIC_URL.');
    expect(off.match(/hiresync accounts authorize acme/g) ?? []).toHaveLength(1);
  });

  it('escapes every value it shows: an error or a reason holding markup stays text', () => {
    const hostile = '<script>alert(1)</script><img src=x onerror="alert(2)">&amp;';
    const page = renderConsolePage(
      report([
        account('gamma', {
          authMode: 'partner',
          state: 'needs_reauthorization',
          reauthorization: { reason: hostile, action: hostile },
          problem: hostile,
          resources: [
            resource('jobs', {
              state: 'failed',
              error: hostile,
              action: hostile,
              lastRun: run({ outcome: 'failed', error: hostile, mode: hostile }),
              lastSuccess: run({ warnings: hostile }),
            }),
          ],
        }),
      ]),
      { formToken: '"><script>x</script>', refusal: hostile },
    );
    expect(page).not.toMatch(/<script|<img|onerror="/i);
    expect(page).toContain(
      '&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(2)&quot;&gt;&amp;amp;',
    );
    expect(page).toContain('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"');
  });

  it('shows a run in flight with its progress, and an interrupted one with where it resumes', () => {
    const page = renderConsolePage(
      report([
        account('alpha', {
          resources: [
            resource('jobs', {
              state: 'running',
              lastRun: run({
                id: '40',
                outcome: 'running',
                finishedAt: null,
                pages: 3,
                records: 30,
              }),
              inFlight: {
                runId: '40',
                mode: 'incremental',
                startedAt: '2026-11-26T03:59:00Z',
                pages: 3,
                records: 30,
                active: true,
              },
            }),
            resource('job_posts', {
              state: 'running',
              inFlight: {
                runId: '41',
                mode: 'full',
                startedAt: '2026-11-26T03:59:00Z',
                pages: 1,
                records: 10,
                active: false,
              },
            }),
          ],
        }),
      ]),
      { formToken: TOKEN },
    );
    expect(page).toContain('incremental run 40 in flight: 3 pages, 30 records so far');
    expect(page).toContain(
      'full run 41 interrupted: 1 page, 10 records so far; resumes from its checkpoint when a worker takes it',
    );
    expect(page).toContain('<span class="badge warn">running</span>');
  });

  it('shows each account with its state and last success, to the second in UTC', () => {
    const page = renderConsolePage(MIXED, { formToken: TOKEN });
    expect(page).toMatch(/<h3>alpha <span class="badge ok">enabled<\/span><\/h3>/);
    expect(page).toContain('last success 2026-11-26 03:01:30 UTC');
    expect(page).toMatch(/<h3>beta <span class="badge ok">enabled<\/span><\/h3>/);
    expect(page).toContain('last success never');
    expect(page).toMatch(/<h3>acme <span class="badge warn">needs reauthorization<\/span><\/h3>/);
    expect(page).toContain('3 accounts');
    expect(page).toContain('2 problems');
  });

  it("shows a run's start, and its finish as a time on the same day, else with its date", () => {
    const page = renderConsolePage(MIXED, { formToken: TOKEN });
    expect(page).toContain(
      'full · 2026-11-26 03:00:00 UTC<br><span class="progress">finished 03:01:30 UTC</span>',
    );
    const overnight = renderConsolePage(
      report([
        account('alpha', {
          resources: [resource('jobs', { lastRun: run({ finishedAt: '2026-11-27T00:10:00Z' }) })],
        }),
      ]),
      { formToken: TOKEN },
    );
    expect(overnight).toContain('finished 2026-11-27 00:10:00 UTC');
  });

  it('shows a link just made at the top, with when it expires', () => {
    const page = renderConsolePage(MIXED, {
      formToken: TOKEN,
      made: {
        account: 'acme',
        url: 'https://sync.example.com/connect/abc.def',
        expiresAt: '2026-12-03T04:00:00.000Z',
        withdrawn: 0,
      },
    });
    expect(page).toContain('Connect link for acme');
    expect(page).toContain('<p class="link">https://sync.example.com/connect/abc.def</p>');
    expect(page).toContain('expires 2026-12-03 04:00:00 UTC');
    expect(page.indexOf('connect/abc.def')).toBeLessThan(page.indexOf('<h2>'));
    expect(page).not.toContain('withdrawn');
  });

  it('says how many older unused links a link just made withdrew', () => {
    const page = renderConsolePage(MIXED, {
      formToken: TOKEN,
      made: {
        account: 'acme',
        url: 'https://sync.example.com/connect/abc.def',
        expiresAt: '2026-12-03T04:00:00.000Z',
        withdrawn: 2,
      },
    });
    expect(page).toContain(
      '<p class="withdrawn">Older unused links for acme were withdrawn: 2.</p>',
    );
  });

  it('says there is no account yet on an empty deployment, and that all is well', () => {
    const page = renderConsolePage(report([]), { formToken: TOKEN });
    expect(page).toContain('No account yet.');
    expect(page).toContain('all well');
  });
});
