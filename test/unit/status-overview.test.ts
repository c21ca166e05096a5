import { describe, expect, it } from 'vitest';
import { STALEST_SHOWN } from '../../src/status/overview.js';
import { accountOf, reportOf, resource, run } from '../support/status-fixture.js';

const ENABLED = { authMode: 'client_credentials', state: 'enabled' };

/** An enabled account whose jobs last succeeded at `finished` (Postgres text), or never ran. */
function succeededAt(name: string, finished: string | undefined) {
  return accountOf(
    { name, ...ENABLED },
    finished === undefined
      ? [resource(name, 'jobs')]
      : [resource(name, 'jobs', run({ id: '1', outcome: 'succeeded', finished_at: finished }))],
  );
}

describe('the overview of a status report', () => {
  it('counts accounts per state and the resources they sync per state, over every account', () => {
    const { overview } = reportOf([
      accountOf({ name: 'a', ...ENABLED }, [
        resource('a', 'jobs', run({ id: '1', outcome: 'succeeded' })),
        resource('a', 'users', run({ id: '2', outcome: 'failed', error: '500 from /v3/users' })),
      ]),
      accountOf({ name: 'b', ...ENABLED }, [
        resource('b', 'jobs', run({ id: '3', outcome: 'running' })),
        resource('b', 'users'),
      ]),
      accountOf({ name: 'c', authMode: 'partner', state: 'disabled' }, []),
    ]);
    expect(overview.accounts).toBe(3);
    expect(overview.accountStates).toEqual({ enabled: 2, disabled: 1 });
    expect(overview.resources).toEqual({
      succeeded: 1,
      failed: 1,
      notPermitted: 0,
      neverRun: 1,
      running: 1,
    });
  });

  it('names each failing resource with the number of accounts it fails in, the most first, disabled accounts left out', () => {
    const failing = (name: string, state: string, resources: string[], error = '500 from /v3/x') =>
      accountOf(
        { name, authMode: 'client_credentials', state },
        resources.map((r, i) =>
          resource(name, r, run({ id: String(i), outcome: 'failed', error })),
        ),
      );
    const { overview } = reportOf([
      failing('a', 'enabled', ['jobs', 'users']),
      failing('b', 'enabled', ['users']),
      failing('c', 'enabled', ['offices'], '403 from /v3/offices: not permitted'),
      failing('d', 'disabled', ['jobs', 'offices']),
    ]);
    expect(overview.failingResources).toEqual([
      { resource: 'users', failed: 2, notPermitted: 0 },
      { resource: 'jobs', failed: 1, notPermitted: 0 },
      { resource: 'offices', failed: 0, notPermitted: 1 },
    ]);
  });

  it('lists every account that fails the check or whose runs cannot be read, with why in a few words', () => {
    const { overview } = reportOf([
      accountOf({ name: 'fine', ...ENABLED }, [
        resource('fine', 'jobs', run({ id: '1', outcome: 'succeeded' })),
      ]),
      accountOf({ name: 'gone', authMode: 'partner', state: 'needs_reauthorization' }, []),
      accountOf({ name: 'mixed', ...ENABLED }, [
        resource('mixed', 'jobs', run({ id: '2', outcome: 'failed', error: '500 from /v3/jobs' })),
        resource(
          'mixed',
          'users',
          run({ id: '3', outcome: 'failed', error: '403 from /v3/users' }),
        ),
      ]),
      accountOf({ name: 'broken', ...ENABLED }, [
        resource('broken', 'jobs', undefined, { problem: 'schema broken has no hiresync tables' }),
      ]),
    ]);
    expect(overview.needingAction).toEqual([
      { account: 'gone', state: 'needs_reauthorization', why: 'needs re-authorizing' },
      { account: 'mixed', state: 'enabled', why: 'failed: jobs; not permitted: users' },
      { account: 'broken', state: 'enabled', why: 'runs cannot be read' },
    ]);
  });

  it(`names the ${STALEST_SHOWN} accounts not disabled whose last success is oldest, those that never succeeded first`, () => {
    const accounts = [
      ...Array.from({ length: 12 }, (_, i) =>
        succeededAt(`s${i}`, `2026-05-${String(20 - i).padStart(2, '0')} 12:00:00+00`),
      ),
      succeededAt('never', undefined),
      accountOf({ name: 'off', authMode: 'client_credentials', state: 'disabled' }, []),
    ];
    const { overview } = reportOf(accounts);
    expect(overview.stalest.map((s) => s.account)).toEqual([
      'never',
      's11',
      's10',
      's9',
      's8',
      's7',
      's6',
      's5',
      's4',
      's3',
    ]);
    expect(overview.stalest[1]).toEqual({
      account: 's11',
      state: 'enabled',
      lastSuccess: '2026-05-09T12:00:00Z',
    });
  });
});
