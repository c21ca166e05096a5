import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { enqueueRun } from '../../src/queue/sync-job.js';
import { type AccountsHarness, startAccountsHarness } from '../support/accounts-harness.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { captureIo } from '../unit/commands/capture-io.js';

const { defer } = cleanupAfterEach();

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
  it('`accounts disable` stops the run after the page in hand (README: "stops its runs")', async () => {
    const h = await startAccountsHarness({ accounts: ['alpha'], records: 200 });
    defer(() => h.close());
    const { code, extraRequests } = await runWhile(h, ['disable', 'alpha']);
    expect(code).toBe(0);
    expect(extraRequests, "alpha's list requests after it was disabled").toBeLessThanOrEqual(1);
  }, 90_000);

  it('`accounts remove` stops the run after the page in hand: a removed account syncs nothing more', async () => {
    const h = await startAccountsHarness({ accounts: ['alpha'], records: 200 });
    defer(() => h.close());
    const { code, extraRequests } = await runWhile(h, ['remove', 'alpha']);
    expect(code).toBe(0);
    expect(extraRequests, "alpha's list requests after it was removed").toBeLessThanOrEqual(1);
  }, 90_000);
});
