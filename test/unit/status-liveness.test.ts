import { describe, expect, it } from 'vitest';
import { checkReport } from '../../src/status/check.js';
import {
  ageText,
  checkDeployment,
  noWorkerProblem,
  staleProblems,
} from '../../src/status/liveness.js';
import { accountOf, resource, run } from '../support/status-fixture.js';

const MAX_AGE = 45_000;
const at = (iso: string) => Date.parse(iso);
const worker = (lastSeen: string, host = 'sync-1', pid = 4242) => ({
  host,
  pid,
  lastSeenMs: at(lastSeen),
});

describe('status --check --max-age: no worker seen', () => {
  it('does not judge a deployment that never ran a worker (it syncs from cron)', () => {
    expect(noWorkerProblem([], at('2026-05-01T12:00:00Z'), MAX_AGE)).toBeUndefined();
  });

  it('passes while the newest heartbeat is within the max age, whatever older workers were seen', () => {
    const workers = [worker('2026-04-01T00:00:00Z', 'old', 1), worker('2026-05-01T12:00:00Z')];
    expect(noWorkerProblem(workers, at('2026-05-01T12:00:30Z'), MAX_AGE)).toBeUndefined();
  });

  it('judges a stopped worker once its last heartbeat is older than the max age, naming it, when, and what to do', () => {
    const stopped = [worker('2026-05-01T12:00:00Z')];
    expect(noWorkerProblem(stopped, at('2026-05-01T12:03:00Z'), MAX_AGE)).toEqual({
      account: null,
      resource: null,
      kind: 'no_worker',
      message:
        "no worker seen for 3m (last: sync-1:4242 at 2026-05-01T12:00:00.000Z); start 'hiresync worker' or check its logs (status --check --max-age 45s)",
    });
  });

  it('counts a heartbeat exactly the max age old as seen, and one a millisecond older as not', () => {
    const workers = [worker('2026-05-01T12:00:00Z')];
    expect(noWorkerProblem(workers, at('2026-05-01T12:00:45Z'), MAX_AGE)).toBeUndefined();
    expect(noWorkerProblem(workers, at('2026-05-01T12:00:45.001Z'), MAX_AGE)?.kind).toBe(
      'no_worker',
    );
  });

  it('counts a heartbeat stamped after now (a clock behind) as seen now, not as a negative age', () => {
    const workers = [worker('2026-05-01T12:10:00Z')];
    expect(noWorkerProblem(workers, at('2026-05-01T12:00:00Z'), 0)).toBeUndefined();
  });

  it('counts a heartbeat stamped after now as seen only while its worker is alive: a stopped worker stamped ahead (Redis failed over to a clock behind) does not pass', () => {
    const ahead = { ...worker('2026-05-01T12:10:00Z'), alive: false };
    const problem = noWorkerProblem([ahead], at('2026-05-01T12:00:00Z'), MAX_AGE);
    expect(problem?.kind).toBe('no_worker');
    expect(problem?.message).toContain('sync-1:4242');
    expect(
      noWorkerProblem([{ ...ahead, alive: true }], at('2026-05-01T12:00:00Z'), MAX_AGE),
    ).toBeUndefined();
  });

  it('names the worker seen last among several', () => {
    const workers = [
      worker('2026-05-01T11:00:00Z', 'a', 1),
      worker('2026-05-01T11:30:00Z', 'b', 2),
    ];
    expect(noWorkerProblem(workers, at('2026-05-01T12:00:00Z'), MAX_AGE)?.message).toContain(
      'no worker seen for 30m (last: b:2 at 2026-05-01T11:30:00.000Z)',
    );
  });
});

describe('status --check --stale: a last success too old', () => {
  const ok = (id: string) => run({ id, outcome: 'succeeded' });
  // Its last success finished 2026-05-01 12:01:00.5 UTC.
  const SUCCESS = at('2026-05-01T12:01:00.5Z');
  const HOUR = 3_600_000;

  it('names each resource whose last success is older than --stale, with its age and what to do', () => {
    const accounts = [
      accountOf({ name: 'acme', authMode: 'partner', state: 'enabled' }, [
        resource('acme', 'jobs', ok('1')),
      ]),
    ];
    expect(staleProblems(accounts, SUCCESS + 7 * HOUR, 6 * HOUR, [])).toEqual([
      {
        account: 'acme',
        resource: 'jobs',
        kind: 'stale',
        message:
          "acme/jobs: last success 7h ago (2026-05-01T12:01:00.5Z), older than --stale 6h; 'hiresync status --account acme' shows its last run, and a worker must run ('hiresync worker', or cron's 'hiresync sync')",
      },
    ]);
  });

  it('passes a success exactly --stale old, and one stamped after now', () => {
    const accounts = [
      accountOf({ name: 'acme', authMode: 'partner', state: 'enabled' }, [
        resource('acme', 'jobs', ok('1')),
      ]),
    ];
    expect(staleProblems(accounts, SUCCESS + 6 * HOUR, 6 * HOUR, [])).toEqual([]);
    expect(staleProblems(accounts, SUCCESS - HOUR, 1, [])).toEqual([]);
  });

  it('names one cause once: leaves out disabled accounts, accounts that need re-authorizing, failed resources, resources never succeeded or no longer synced', () => {
    const accounts = [
      accountOf({ name: 'off', authMode: 'partner', state: 'disabled' }, [
        resource('off', 'jobs', ok('1')),
      ]),
      accountOf(
        {
          name: 'lapsed',
          authMode: 'partner',
          state: 'needs_reauthorization',
          reauthorizationReason: 'refresh token revoked',
        },
        [resource('lapsed', 'jobs', ok('2'))],
      ),
      accountOf(
        { name: 'acme', authMode: 'partner', state: 'enabled' },
        [
          resource('acme', 'jobs', run({ id: '4', outcome: 'failed', error: '503' }), {
            lastSuccess: ok('3'),
          }),
          resource('acme', 'users'),
          resource('acme', 'offices', ok('5')),
        ],
        [],
        ['jobs', 'users'],
      ),
    ];
    const named = checkReport(accounts).problems;
    expect(named.map((p) => `${p.account}/${p.resource}:${p.kind}`)).toEqual([
      'lapsed/null:needs_reauthorization',
      'acme/jobs:failed',
    ]);
    expect(staleProblems(accounts, SUCCESS + 30 * 24 * HOUR, HOUR, named)).toEqual([]);
  });
});

describe('status --check as a whole', () => {
  const failing = [
    accountOf({ name: 'acme', authMode: 'partner', state: 'enabled' }, [
      resource('acme', 'jobs', run({ id: '4', outcome: 'failed', error: '503' })),
    ]),
  ];
  const facts = {
    nowMs: at('2026-05-01T12:10:00Z'),
    workersNowMs: at('2026-05-01T12:10:00Z'),
    maxAgeMs: MAX_AGE,
  };

  it('passes a cron deployment with no worker and nothing failing, however small the max age', () => {
    expect(checkDeployment([], { ...facts, workers: [], maxAgeMs: 1 })).toEqual({
      passed: true,
      problems: [],
    });
  });

  it("names the stopped worker first, then the accounts' problems", () => {
    const check = checkDeployment(failing, { ...facts, workers: [worker('2026-05-01T12:00:00Z')] });
    expect(check.passed).toBe(false);
    expect(check.problems.map((p) => p.kind)).toEqual(['no_worker', 'failed']);
  });

  it('judges the workers by the clock that stamped them (Redis), not this host’s', () => {
    const workers = [worker('2026-05-01T12:00:00Z')];
    // This host's clock is 10 minutes ahead of Redis's: the worker was seen 20 s ago.
    const check = checkDeployment([], {
      ...facts,
      workers,
      workersNowMs: at('2026-05-01T12:00:20Z'),
    });
    expect(check).toEqual({ passed: true, problems: [] });
  });
});

describe('ageText', () => {
  it('says an age in its largest whole unit', () => {
    expect(
      [1, 1000, 59_999, 119_999, 120_000, 7_199_999, 7_200_000, 172_800_000].map(ageText),
    ).toEqual(['1ms', '1s', '59s', '119s', '2m', '119m', '2h', '2d']);
  });
});
