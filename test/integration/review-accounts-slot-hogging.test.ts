import { describe, expect, it } from 'vitest';
import { enqueueRun, type SyncJob } from '../../src/queue/sync-queue.js';
import { startAccountsHarness } from '../support/accounts-harness.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

describe("one account's rate limiting", () => {
  it("never holds another account's run back (README: one account's 429s never slow another)", async () => {
    const h = await startAccountsHarness({
      accounts: ['slow', 'fast'],
      records: 10,
      env: { HIRESYNC_CONCURRENCY: '2' },
    });
    defer(() => h.close());
    // slow's API answers its next requests with 429 and Retry-After: 15 s
    // (well within HIRESYNC_MAX_RETRY_AFTER: hiresync waits them out).
    h.sim.inject({ kind: 'rate-limit', retryAfterS: 15 }, 2, 'slow');
    const app = h.app();
    defer(() => app.close());
    const queued: SyncJob[] = [];
    for (const [account, resource] of [
      ['slow', 'jobs'],
      ['slow', 'job_posts'],
      ['fast', 'jobs'],
    ] as const) {
      queued.push(
        await enqueueRun(
          app.queue,
          { account, resource, requested: 'full', origin: 'cli' },
          h.config,
        ),
      );
    }
    const fast = queued[2] as SyncJob;
    const started = Date.now();
    app.startWorker();
    // fast's run is one page of 17 records, which its API serves at once.
    const state = await waitFor(
      async () => {
        const s = await fast.getState();
        return s === 'completed' || s === 'failed' ? s : undefined;
      },
      80_000,
      50,
    );
    const seconds = (Date.now() - started) / 1000;
    expect(state).toBe('completed');
    expect(seconds, "seconds fast's one-page run waited behind slow's 429s").toBeLessThan(8);
  }, 120_000);
});
