// An operator's change to an account reaches the processes already running:
// disabling or removing it stops its run in flight after the page in hand,
// and an account removed and added again syncs with its new credentials.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { runOnce } from '../../src/queue/run-once.js';
import { enqueueRun } from '../../src/queue/sync-job.js';
import { Secret } from '../../src/secret.js';
import { type AccountsHarness, secretOf } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { defer, accounts } = cleanupAfterEach();

/**
 * A worker running alpha's full run of jobs (21 pages, 300 ms each); at its
 * second page, `hiresync accounts ARGV` runs. Resolves once the job settled,
 * with alpha's list requests after the command returned, and its exit code.
 */
async function runWhile(h: AccountsHarness, argv: string[]) {
  h.sim.inject({ kind: 'delay', ms: 300 }, 40, 'alpha');
  let command: Promise<{ code: number; requestsAfter: number }> | undefined;
  const app = h.app({
    onProgress: (p) => {
      if (p.account !== 'alpha' || p.pages !== 2 || command) return;
      command = (async () => {
        const io = captureIo();
        const code = await main(['accounts', ...argv], h.env, io);
        return { code, requestsAfter: h.sim.statsOf('alpha').listRequests };
      })();
    },
  });
  defer(() => app.close());
  app.startWorker();
  const job = await enqueueRun(
    app.queue,
    { account: 'alpha', resource: 'jobs', requested: 'full', origin: 'cli' },
    h.config,
  );
  await waitFor(
    async () => {
      const state = await job.getState();
      return state === 'completed' || state === 'failed';
    },
    60_000,
    50,
  );
  await waitFor(async () => command !== undefined);
  const { code, requestsAfter } = await (command as NonNullable<typeof command>);
  return { code, extraRequests: h.sim.statsOf('alpha').listRequests - requestsAfter };
}

describe('an account disabled or removed while its run is in flight', () => {
  it('`accounts disable` stops the run after the page in hand (docs/accounts.md: "stops its runs")', async () => {
    const h = await accounts({ accounts: ['alpha'], records: 200 });
    const { code, extraRequests } = await runWhile(h, ['disable', 'alpha']);
    expect(code).toBe(0);
    expect(extraRequests, "alpha's list requests after it was disabled").toBeLessThanOrEqual(1);
  }, 90_000);

  it('`accounts remove` stops the run after the page in hand: a removed account syncs nothing more', async () => {
    const h = await accounts({ accounts: ['alpha'], records: 200 });
    const { code, extraRequests } = await runWhile(h, ['remove', 'alpha']);
    expect(code).toBe(0);
    expect(extraRequests, "alpha's list requests after it was removed").toBeLessThanOrEqual(1);
  }, 90_000);
});

describe('a long-running process after an account is removed and added again', () => {
  it('syncs with the credentials the account has now, not those cached for its old registration', async () => {
    const h = await accounts({ accounts: ['alpha', 'beta'] });
    // One process (a worker) that lives through the operator's changes.
    const app = h.app();
    defer(() => app.close());
    const jobs = [{ account: 'alpha', resource: 'jobs' as const }];
    expect(await runOnce(app, jobs, 'full')).toMatchObject([{ ok: true }]);
    expect(await h.liveIds('alpha', 'jobs')).toEqual(h.expectedIds('alpha', 'jobs'));

    // alpha was registered with the wrong customer's client: the operator
    // removes it and adds it again with the right one (beta's credentials here).
    await h.store.remove('alpha');
    await h.store.add({
      name: 'alpha',
      baseUrl: h.sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: h.sim.authUrl,
        clientId: 'beta-client',
        clientSecret: new Secret(secretOf('beta')),
      },
    });
    const betaLists = h.sim.statsOf('beta').listRequests;

    expect(await runOnce(app, jobs, 'full')).toMatchObject([{ ok: true }]);
    // The run must have gone out with alpha's new credentials (beta's client)…
    expect(
      h.sim.statsOf('beta').listRequests - betaLists,
      'list requests made with the newly registered credentials',
    ).toBeGreaterThan(0);
    // …so alpha's schema now holds what that client reads.
    expect(await h.liveIds('alpha', 'jobs')).toEqual(h.expectedIds('beta', 'jobs'));
  });
});
