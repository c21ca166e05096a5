import { describe, expect, it } from 'vitest';
import { formatCheck } from '../../src/commands/status-summary.js';
import { causesOf, checkReport } from '../../src/status/check.js';
import { accountOf, reportOf, resource, run } from '../support/status-fixture.js';

const ok = (id: string) => run({ id, outcome: 'succeeded' });
const failed = (id: string, error: string) => run({ id, outcome: 'failed', error });

describe('status --check', () => {
  it('passes when every last run succeeded, is running or never ran', () => {
    const check = checkReport([
      accountOf({ name: 'acme', authMode: 'partner', state: 'enabled' }, [
        resource('acme', 'jobs', ok('1')),
        resource('acme', 'job_posts', run({ id: '2', outcome: 'running' })),
        resource('acme', 'tracking_links'),
      ]),
    ]);
    expect(check).toEqual({ passed: true, problems: [] });
  });

  it('fails on a failed last run, naming the account, resource, run and error', () => {
    const check = checkReport([
      accountOf({ name: 'acme', authMode: 'partner', state: 'enabled' }, [
        resource('acme', 'jobs', failed('4', '503 from /v3/jobs: try again later')),
      ]),
    ]);
    expect(check).toEqual({
      passed: false,
      problems: [
        {
          account: 'acme',
          resource: 'jobs',
          kind: 'failed',
          message: 'acme/jobs: last run 4 failed: 503 from /v3/jobs: try again later',
        },
      ],
    });
  });

  it('keeps failing while the next run of a failed or refused resource is in flight, interrupted or not', () => {
    const inFlight = (id: string) => run({ id, outcome: 'running' });
    const check = checkReport([
      accountOf({ name: 'acme', authMode: 'partner', state: 'enabled' }, [
        resource('acme', 'jobs', inFlight('5'), {
          lastFinished: failed('4', '503 from /v3/jobs: try again later'),
        }),
        resource('acme', 'job_posts', inFlight('7'), {
          lastFinished: failed('6', '403 from /v3/job_posts: harvest:job_posts:list'),
        }),
        resource('acme', 'tracking_links', inFlight('9'), { lastFinished: ok('8') }),
      ]),
    ]);
    expect(check.passed).toBe(false);
    expect(check.problems.map((p) => [p.resource, p.kind, p.message])).toEqual([
      [
        'jobs',
        'failed',
        'acme/jobs: last run 4 failed: 503 from /v3/jobs: try again later (run 5 in flight)',
      ],
      [
        'job_posts',
        'not_permitted',
        'acme/job_posts: not permitted: ask for scope harvest:job_posts:list (run 6: 403 from /v3/job_posts: harvest:job_posts:list) (run 7 in flight)',
      ],
    ]);
  });

  it('fails on a resource not permitted and on an account that needs re-authorizing', () => {
    const check = checkReport([
      accountOf({ name: 'acme', authMode: 'partner', state: 'enabled' }, [
        resource('acme', 'jobs', ok('1')),
        resource(
          'acme',
          'job_posts',
          failed('2', '403 from /v3/job_posts: harvest:job_posts:list'),
        ),
      ]),
      accountOf(
        {
          name: 'beta',
          authMode: 'partner',
          state: 'needs_reauthorization',
          reauthorizationReason: 'revoked',
        },
        [resource('beta', 'jobs', ok('3'))],
      ),
    ]);
    expect(check.passed).toBe(false);
    expect(check.problems.map((p) => [p.account, p.resource, p.kind])).toEqual([
      ['acme', 'job_posts', 'not_permitted'],
      ['beta', null, 'needs_reauthorization'],
    ]);
    expect(check.problems[0]?.message).toMatch(
      /^acme\/job_posts: not permitted: ask for scope harvest:job_posts:list/,
    );
    expect(check.problems[1]?.message).toBe(
      "beta: needs re-authorizing: revoked; send the customer's administrator a connect link ('hiresync accounts invite beta'), or run 'hiresync accounts authorize beta' where their browser can reach this host (its data is kept)",
    );
  });

  it('fails on an account whose credentials were refused, saying why and what to do', () => {
    const check = checkReport([
      accountOf({ name: 'acme', authMode: 'client_credentials', state: 'enabled' }, [
        resource('acme', 'jobs', ok('1')),
      ]),
      accountOf(
        {
          name: 'beta',
          authMode: 'client_credentials',
          state: 'credentials_refused',
          refusalReason: 'the token service refused its client secret (401 invalid_client)',
        },
        [resource('beta', 'jobs', ok('3'))],
      ),
    ]);
    expect(check.passed).toBe(false);
    expect(check.problems).toEqual([
      {
        account: 'beta',
        resource: null,
        kind: 'credentials_refused',
        message:
          "beta: credentials refused: the token service refused its client secret (401 invalid_client); store the right secret with 'hiresync accounts update beta' (secret on standard input), then it is enabled again; 'hiresync accounts test beta' checks it ('hiresync accounts enable beta' if the fault was on the vendor's side and is fixed)",
      },
    ]);
  });

  it('ignores a disabled account, whatever its last runs', () => {
    const check = checkReport([
      accountOf({ name: 'old', authMode: 'api_key', state: 'disabled' }, [
        resource('old', 'jobs', failed('1', '401 from /auth/token')),
      ]),
    ]);
    expect(check).toEqual({ passed: true, problems: [] });
  });

  it('ignores a resource the account no longer syncs, and its summary counts only those it syncs', () => {
    const account = accountOf(
      { name: 'acme', authMode: 'client_credentials', state: 'enabled' },
      [
        resource('acme', 'jobs', ok('5')),
        resource('acme', 'job_posts', failed('2', '401 from /oauth/token')),
        resource('acme', 'tracking_links', run({ id: '3', outcome: 'failed', error: '403' })),
      ],
      [],
      ['jobs'],
    );
    expect(account.resources.map((r) => [r.resource, r.synced])).toEqual([
      ['jobs', true],
      ['job_posts', false],
      ['tracking_links', false],
    ]);
    expect(account.summary).toEqual({
      succeeded: 1,
      failed: 0,
      notPermitted: 0,
      neverRun: 0,
      running: 0,
    });
    expect(checkReport([account])).toEqual({ passed: true, problems: [] });
  });
});

describe('status --check: one problem per cause', () => {
  const reauth = (account: string) =>
    `account ${account} needs re-authorizing: its refresh token was refused (400 invalid_grant); ask the customer to authorize again`;

  it("folds the resources that failed because the account needs re-authorizing into the account's problem, keeping their entries", () => {
    const report = reportOf([
      accountOf(
        {
          name: 'acme',
          authMode: 'partner',
          state: 'needs_reauthorization',
          reauthorizationReason: 'revoked',
        },
        [
          resource('acme', 'jobs', failed('1', reauth('acme'))),
          resource('acme', 'job_posts', failed('2', reauth('acme'))),
          resource('acme', 'tracking_links', failed('3', reauth('acme'))),
          resource('acme', 'users', failed('4', '503 from /v3/users: try again later')),
        ],
      ),
      accountOf(
        {
          name: 'beta',
          authMode: 'client_credentials',
          state: 'credentials_refused',
          refusalReason: 'refused',
        },
        [
          resource(
            'beta',
            'jobs',
            failed('5', "account beta's credentials were refused: refused; store it"),
          ),
        ],
      ),
    ]);
    const check = report.check;
    expect(check.passed).toBe(false);
    // The JSON keeps every entry (extended, never broken): the folded ones say what caused them.
    expect(check.problems.map((p) => [p.account, p.resource, p.kind, p.causedBy ?? null])).toEqual([
      ['acme', null, 'needs_reauthorization', null],
      ['acme', 'jobs', 'failed', 'needs_reauthorization'],
      ['acme', 'job_posts', 'failed', 'needs_reauthorization'],
      ['acme', 'tracking_links', 'failed', 'needs_reauthorization'],
      ['acme', 'users', 'failed', null],
      ['beta', null, 'credentials_refused', null],
      ['beta', 'jobs', 'failed', 'credentials_refused'],
    ]);
    expect(check.problems[0]?.foldedResources).toEqual(['jobs', 'job_posts', 'tracking_links']);
    expect(check.problems[0]?.message).toMatch(
      /^acme: needs re-authorizing: revoked; .* \(3 resources failed because of it: jobs, job_posts, tracking_links\)$/,
    );
    // One problem per cause: acme's state, acme's users, beta's credentials.
    expect(causesOf(check).map((p) => [p.account, p.resource])).toEqual([
      ['acme', null],
      ['acme', 'users'],
      ['beta', null],
    ]);
    const text = formatCheck(report);
    expect(text.split('\n')[0]).toBe('status check failed: 3 problems');
    expect(text).toContain('beta: credentials refused: refused; ');
    expect(text).toContain('(1 resource failed because of it: jobs)');
    expect(text).not.toMatch(/^acme\/jobs:/m);
    expect(text).toMatch(/^acme\/users: last run 4 failed/m);
    // The overview says it the same way.
    expect(report.overview.needingAction.map((a) => a.why)).toEqual([
      'needs re-authorizing (failed because of it: jobs, job_posts, tracking_links); failed: users',
      'credentials refused (failed because of it: jobs)',
    ]);
  });

  it("keeps a failure as the resource's own once the account is enabled again, and fails the check the same", () => {
    const check = checkReport([
      accountOf({ name: 'acme', authMode: 'partner', state: 'enabled' }, [
        resource('acme', 'jobs', failed('1', reauth('acme'))),
      ]),
    ]);
    expect(check.passed).toBe(false);
    expect(causesOf(check)).toEqual(check.problems);
    expect(check.problems[0]?.causedBy).toBeUndefined();
  });
});
