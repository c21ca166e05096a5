import { describe, expect, it } from 'vitest';
import { accountOf, resource, run } from '../support/status-fixture.js';

const ACME = { name: 'acme', authMode: 'partner', state: 'enabled' };

describe('the status report of an account', () => {
  it('shapes a succeeded run with ISO 8601 UTC timestamps and numbers, and the account its latest success', () => {
    const report = accountOf(ACME, [
      resource('acme', 'jobs', run({ id: '7', outcome: 'succeeded' })),
      resource(
        'acme',
        'job_posts',
        run({ id: '8', outcome: 'succeeded', finished_at: '2026-05-01 12:09:00+00' }),
      ),
      resource('acme', 'tracking_links'),
    ]);
    expect(report).toMatchObject({
      name: 'acme',
      authMode: 'partner',
      state: 'enabled',
      lastSuccess: '2026-05-01T12:09:00Z',
      reauthorization: null,
      problem: null,
      summary: { succeeded: 2, failed: 0, notPermitted: 0, neverRun: 1, running: 0 },
    });
    expect(report.resources[0]).toEqual({
      resource: 'jobs',
      state: 'succeeded',
      lastRun: {
        id: '7',
        mode: 'full',
        startedAt: '2026-05-01T12:00:00.123456Z',
        finishedAt: '2026-05-01T12:01:00.5Z',
        pages: 3,
        records: 120,
        rejected: 0,
        deleted: 0,
        outcome: 'succeeded',
        error: null,
        warnings: null,
      },
      lastSuccess: expect.objectContaining({ id: '7' }),
      lastFinished: expect.objectContaining({ id: '7' }),
      notPermitted: null,
      inFlight: null,
      checkpoint: null,
      error: null,
      action: null,
      synced: true,
      clockSkew: null,
    });
    expect(report.resources[2]).toMatchObject({
      resource: 'tracking_links',
      state: 'never_run',
      lastRun: null,
      lastSuccess: null,
    });
    // One JSON document: nothing is lost or changed by serialising it.
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });

  it("takes the account's latest success by time, whatever the digits of the fractions Postgres prints", () => {
    const at = (id: string, finished: string) =>
      resource('acme', `r${id}`, run({ id, outcome: 'succeeded', finished_at: finished }));
    const report = accountOf(ACME, [
      at('1', '2026-05-01 12:00:00.5+00'),
      at('2', '2026-05-01 12:00:00+00'),
      at('3', '2026-05-01 12:00:00.50001+00'),
      at('4', '2026-05-01 11:59:59.999999+00'),
    ]);
    expect(report.lastSuccess).toBe('2026-05-01T12:00:00.50001Z');
  });

  it('shows a run whose row is still running as in flight, active while a process holds its lock, with its pending checkpoint', () => {
    const running = run({ id: '9', outcome: 'running', pages: 4, records: '40' });
    const checkpoint = {
      runId: '9',
      resource: 'jobs',
      mode: 'full' as const,
      nextUrl: 'http://api/v3/jobs?page=5',
      pagesDone: 4,
      stopAtId: null,
      updatedAt: '2026-05-01T12:00:30.000Z',
    };
    const statuses = [resource('acme', 'jobs', running, { checkpoint })];
    const held = accountOf(ACME, statuses, ['acme/jobs']).resources[0];
    expect(held).toMatchObject({
      state: 'running',
      inFlight: {
        runId: '9',
        mode: 'full',
        startedAt: '2026-05-01T12:00:00.123456Z',
        pages: 4,
        records: 40,
        active: true,
      },
      checkpoint: { runId: '9', mode: 'full', pagesDone: 4, savedAt: '2026-05-01T12:00:30.000Z' },
      lastRun: { outcome: 'running', finishedAt: null },
      error: null,
    });
    expect(accountOf(ACME, statuses).resources[0]?.inFlight?.active).toBe(false);
    expect(accountOf(ACME, statuses).summary.running).toBe(1);
  });

  it('names a 403 not permitted with the scope to ask for, and says so for the account when every resource it ran was refused', () => {
    const refused = (id: string, name: string) =>
      run({
        id,
        outcome: 'failed',
        error: `403 from /v3/${name}: not permitted: the credential lacks this list's scope harvest:${name}:list`,
      });
    const one = accountOf(ACME, [
      resource('acme', 'jobs', run({ id: '1', outcome: 'succeeded' })),
      resource('acme', 'job_posts', refused('2', 'job_posts')),
    ]);
    expect(one.everyResourceRefused).toBeNull();
    expect(one.resources[1]).toMatchObject({
      state: 'not_permitted',
      notPermitted: {
        scope: 'harvest:job_posts:list',
        action: expect.stringMatching(/^ask for scope harvest:job_posts:list /),
      },
      error: expect.stringMatching(/^403 from \/v3\/job_posts/),
      action: expect.stringMatching(/^ask for scope harvest:job_posts:list /),
    });
    expect(one.summary).toMatchObject({ succeeded: 1, notPermitted: 1, failed: 0 });
    const every = accountOf(ACME, [
      resource('acme', 'jobs', refused('1', 'jobs')),
      resource('acme', 'job_posts', refused('2', 'job_posts')),
    ]);
    expect(every.everyResourceRefused).toMatch(
      /^every resource answered 403: the authorizing user is most likely not a site administrator \(or the credential holds none of the scopes harvest:jobs:list, harvest:job_posts:list\)/,
    );
  });

  it('says why an account needs re-authorizing and what to do, a connect link first (the customer is remote), on the account and each resource', () => {
    const report = accountOf(
      {
        name: 'beta',
        authMode: 'partner',
        state: 'needs_reauthorization',
        reauthorizationReason: 'the refresh token was revoked (invalid_grant)',
      },
      [resource('beta', 'jobs', run({ id: '3', outcome: 'failed', error: '401 from /token' }))],
    );
    expect(report.reauthorization).toEqual({
      reason: 'the refresh token was revoked (invalid_grant)',
      action:
        "send the customer's administrator a connect link ('hiresync accounts invite beta'), or run 'hiresync accounts authorize beta' where their browser can reach this host (its data is kept)",
    });
    expect(report.resources[0]).toMatchObject({
      state: 'failed',
      error: '401 from /token',
      action:
        "send the customer's administrator a connect link ('hiresync accounts invite beta'), or run 'hiresync accounts authorize beta' where their browser can reach this host (its data is kept)",
    });
  });

  it('names the command that runs a failed resource again as what to do, and hiresync migrate for tables that are missing', () => {
    const failed = accountOf({ name: 'acme', authMode: 'client_credentials', state: 'enabled' }, [
      resource(
        'acme',
        'scorecards',
        run({ id: '4', outcome: 'failed', error: '404 from /v3/scorecards: not found' }),
      ),
      resource('acme', 'jobs', undefined, {
        problem: "schema acme has no hiresync tables: run 'hiresync migrate'",
      }),
      resource('acme', 'offers'),
    ]);
    expect(failed.resources.map((r) => [r.resource, r.state, r.action])).toEqual([
      [
        'scorecards',
        'failed',
        "run it again once its cause is fixed: 'hiresync sync --account acme --resource scorecards' (the worker's next scheduled run retries it too)",
      ],
      ['jobs', 'never_run', "run 'hiresync migrate'"],
      ['offers', 'never_run', null],
    ]);
  });

  it('says why the credentials of an account were refused and what to do, on the account and each resource', () => {
    const action =
      "store the right secret with 'hiresync accounts update acme' (secret on standard input), then it is enabled again; 'hiresync accounts test acme' checks it ('hiresync accounts enable acme' if the fault was on the vendor's side and is fixed)";
    const report = accountOf(
      {
        name: 'acme',
        authMode: 'client_credentials',
        state: 'credentials_refused',
        refusalReason:
          'the token service refused its client secret (401 invalid_client: Client authentication failed)',
      },
      [resource('acme', 'jobs', run({ id: '3', outcome: 'failed', error: '401 from /token' }))],
    );
    expect(report.credentialsRefused).toEqual({
      reason:
        'the token service refused its client secret (401 invalid_client: Client authentication failed)',
      action,
    });
    expect(report.reauthorization).toBeNull();
    expect(report.resources[0]).toMatchObject({ state: 'failed', action });
    const keyed = accountOf(
      { name: 'beta', authMode: 'api_key', state: 'credentials_refused', refusalReason: null },
      [],
    );
    expect(keyed.credentialsRefused).toEqual({
      reason: 'the token service refused its credential',
      action: expect.stringMatching(
        /^store the right key with 'hiresync accounts update beta' \(key on standard input\), then it is enabled again; 'hiresync accounts test beta' checks it/,
      ),
    });
    expect(accountOf(ACME, []).credentialsRefused).toBeNull();
  });

  it('notes a clock skew beyond the lookback and the second of the Date header, not one within it', () => {
    const skewed = (ms: number) =>
      accountOf(ACME, [
        resource(
          'acme',
          'jobs',
          run({ id: '5', outcome: 'succeeded', api_clock_skew_ms: `${ms}` }),
        ),
      ]).resources[0]?.clockSkew;
    expect(skewed(-600_000)).toEqual({
      runId: '5',
      skewMs: -600_000,
      note: expect.stringMatching(
        /^the API's clock was 10\.0 min behind this worker's at the first response of run 5, more than HIRESYNC_UPDATED_LOOKBACK \(5\.0 min\)/,
      ),
    });
    expect(skewed(300_900)).toBeNull();
  });

  it("carries why an account's runs cannot be read", () => {
    const problem = "schema gamma has no hiresync tables: run 'hiresync migrate'";
    const report = accountOf({ name: 'gamma', authMode: 'api_key', state: 'enabled' }, [
      resource('gamma', 'jobs', undefined, { problem }),
    ]);
    expect(report.problem).toBe(problem);
    expect(report.resources[0]).toMatchObject({ state: 'never_run', error: problem });
  });
});
