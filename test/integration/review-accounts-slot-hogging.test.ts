import { describe, expect, it } from 'vitest';
import { enqueueRun, type SyncJob } from '../../src/queue/sync-job.js';
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
    // slow's API answers its next requests with 429 and Retry-After: 10 minutes
    // (within HIRESYNC_MAX_RETRY_AFTER: hiresync waits them out, and longer than
    // the test, so slow's runs are still waiting when fast's is done).
    h.sim.inject({ kind: 'rate-limit', retryAfterS: 600 }, 2, 'slow');
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
    const [slowJobs, slowPosts, fast] = queued as [SyncJob, SyncJob, SyncJob];
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
    expect(state).toBe('completed');
    // slow's runs, queued first, took both worker slots; fast's run finished
    // while they waited out their Retry-After off the slots, before slow's API
    // had answered anything but 429.
    expect(await slowJobs.getState()).toBe('delayed');
    expect(await slowPosts.getState()).toBe('delayed');
    const slow = h.sim.statsOf('slow');
    expect(slow.listRequests).toBeGreaterThan(0);
    expect(slow.byStatus['429']).toBe(slow.listRequests);
    expect(h.log.text()).toContain('run waiting for its rate limit off the worker slot');
  }, 120_000);
});
