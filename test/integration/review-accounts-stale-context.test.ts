import { describe, expect, it } from 'vitest';
import { runOnce } from '../../src/queue/run-once.js';
import { Secret } from '../../src/secret.js';
import { secretOf, startAccountsHarness } from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

describe('a long-running process after an account is removed and added again', () => {
  it('syncs with the credentials the account has now, not those cached for its old registration', async () => {
    const h = await startAccountsHarness({ accounts: ['alpha', 'beta'] });
    defer(() => h.close());
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
