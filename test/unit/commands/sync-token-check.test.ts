import { describe, expect, it } from 'vitest';
import { runWhereReachable } from '../../../src/commands/sync-token-check.js';
import type { ResourceName } from '../../../src/config/load-config.js';
import {
  CredentialsRefusedError,
  HiresyncError,
  TransientApiError,
  UnreachableError,
} from '../../../src/errors.js';
import type { RunOnceOutcome } from '../../../src/queue/run-once.js';
import type { AccountContext } from '../../../src/queue/sync-processor.js';
import type { ScheduleTarget } from '../../../src/queue/upsert-schedules.js';
import type { RunSummary } from '../../../src/sync/run-resource.js';
import { captureLogger } from '../../support/capture-logger.js';

const UNREACHABLE =
  'POST /oauth/token failed 6 times (ECONNREFUSED); http://127.0.0.1:9 is unreachable: check HIRESYNC_AUTH_URL and the network';

function targetsOf(accounts: string[], resources: ResourceName[] = ['jobs', 'job_posts']) {
  return accounts.flatMap((account) => resources.map((resource) => ({ account, resource })));
}

/** Contexts whose ensureToken does what `tokens` says of the account (resolves when absent). */
function contextsOf(tokens: Record<string, () => Promise<void>>) {
  return async (account: string) =>
    ({ ensureToken: tokens[account] ?? (async () => {}) }) as unknown as AccountContext;
}

/** A `run` that succeeds every target it is given, and remembers them. */
function recordingRun() {
  const ran: ScheduleTarget[][] = [];
  const run = async (targets: ScheduleTarget[]): Promise<RunOnceOutcome[]> => {
    ran.push(targets);
    return targets.map(({ account, resource }) => ({
      account,
      resource,
      ok: true,
      summary: { resource } as RunSummary,
    }));
  };
  return { ran, run };
}

describe("sync's token check before its runs", () => {
  it("does not start the runs of an account whose token service is unreachable, and runs the other accounts'", async () => {
    const log = captureLogger('info');
    const { ran, run } = recordingRun();
    const outcomes = await runWhereReachable(
      {
        contextOf: contextsOf({
          acme: async () => {
            throw new UnreachableError(UNREACHABLE);
          },
        }),
        logger: log.logger,
        concurrency: 2,
      },
      targetsOf(['default', 'acme', 'beta']),
      run,
    );
    expect(ran).toEqual([targetsOf(['default', 'beta'])]);
    expect(outcomes.map((o) => [o.account, o.resource, o.ok ? 'ok' : o.error])).toEqual([
      ['default', 'jobs', 'ok'],
      ['default', 'job_posts', 'ok'],
      ['acme', 'jobs', `not started: ${UNREACHABLE}`],
      ['acme', 'job_posts', `not started: ${UNREACHABLE}`],
      ['beta', 'jobs', 'ok'],
      ['beta', 'job_posts', 'ok'],
    ]);
    const warnings = log.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      component: 'sync',
      account: 'acme',
      err: { message: UNREACHABLE },
    });
  });

  it('finds the unreachable server in the causes of the error the token request threw', async () => {
    const { ran, run } = recordingRun();
    const outcomes = await runWhereReachable(
      {
        contextOf: contextsOf({
          default: async () => {
            throw new HiresyncError('no token', { cause: new UnreachableError(UNREACHABLE) });
          },
        }),
        logger: captureLogger('silent').logger,
        concurrency: 1,
      },
      targetsOf(['default']),
      run,
    );
    expect(ran).toEqual([]);
    expect(outcomes).toEqual([
      { account: 'default', resource: 'jobs', ok: false, error: 'not started: no token' },
      { account: 'default', resource: 'job_posts', ok: false, error: 'not started: no token' },
    ]);
  });

  it('leaves every other failure to the runs: refused credentials, a failing token service, an account that cannot be prepared', async () => {
    const { ran, run } = recordingRun();
    const log = captureLogger('info');
    const outcomes = await runWhereReachable(
      {
        contextOf: async (account) => {
          if (account === 'gone') throw new HiresyncError('cannot open its credentials');
          return (await contextsOf({
            refused: async () => {
              throw new CredentialsRefusedError('refused', 'client_credentials', 'invalid_client');
            },
            failing: async () => {
              throw new TransientApiError('POST /oauth/token answered 503 6 times in a row', 503);
            },
          })(account)) as AccountContext;
        },
        logger: log.logger,
        concurrency: 4,
      },
      targetsOf(['refused', 'failing', 'gone'], ['jobs']),
      run,
    );
    expect(ran).toEqual([targetsOf(['refused', 'failing', 'gone'], ['jobs'])]);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(log.lines()).toEqual([]);
  });

  it('checks each account once, at most HIRESYNC_CONCURRENCY accounts at once', async () => {
    const calls: string[] = [];
    let inFlight = 0;
    let most = 0;
    const release: (() => void)[] = [];
    const ensure = (account: string) => async () => {
      calls.push(account);
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise<void>((resolve) => release.push(resolve));
      inFlight -= 1;
    };
    const accounts = ['a', 'b', 'c', 'd', 'e'];
    const { run } = recordingRun();
    const done = runWhereReachable(
      {
        contextOf: contextsOf(Object.fromEntries(accounts.map((a) => [a, ensure(a)]))),
        logger: captureLogger('silent').logger,
        concurrency: 2,
      },
      targetsOf(accounts),
      run,
    );
    // Let the checks in flight finish one by one until every account was checked.
    while (calls.length < accounts.length || release.length > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      release.shift()?.();
    }
    const outcomes = await done;
    expect(calls).toEqual(accounts);
    expect(most).toBe(2);
    expect(outcomes).toHaveLength(10);
  });
});
