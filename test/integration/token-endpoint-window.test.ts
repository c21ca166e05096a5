// The token endpoint has its own rate-limit window (60 s on the live
// service), apart from the lists'. Many accounts' runs starting at once ask
// it for one token per credential (single-flight across the account's
// resources); a token request answered 429 waits its Retry-After, and no run fails.
import { describe, expect, it } from 'vitest';
import { startAccountsHarness, targetsOf } from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

describe("the token endpoint's own window", () => {
  it("many accounts' runs wait out its 429s and all succeed, one token per credential", async () => {
    const accounts = ['a1', 'a2', 'a3', 'a4', 'a5'];
    const h = await startAccountsHarness({
      accounts,
      records: 20,
      simulator: { tokenEndpointWindow: { limit: 2, windowMs: 1000 } },
      env: { HIRESYNC_CONCURRENCY: '18' },
    });
    defer(() => h.close());
    const outcomes = await h.sync(targetsOf(['default', ...accounts]), 'full');
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    // Six credentials, three resources each: six tokens, the window hit and waited out.
    expect(h.sim.stats.tokensIssued).toBe(6);
    expect(h.sim.stats.tokenRequestsRateLimited).toBeGreaterThan(0);
    for (const account of ['default', ...accounts])
      expect(await h.liveIds(account, 'jobs')).toEqual(h.expectedIds(account, 'jobs'));
  });
});
