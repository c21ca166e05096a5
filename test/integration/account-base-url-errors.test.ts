import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/secret.js';
import { secretOf, startAccountsHarness } from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

describe("errors about a registered account's base URL", () => {
  it("name the account and 'hiresync accounts update NAME --base-url', not HIRESYNC_BASE_URL, when it is unreachable", async () => {
    const h = await startAccountsHarness({
      accounts: ['acme'],
      records: 5,
      env: { HIRESYNC_RUN_ATTEMPTS: '1', HIRESYNC_HTTP_MAX_RETRIES: '1' },
    });
    defer(() => h.close());
    await h.store.remove('acme');
    await h.store.add({
      name: 'acme',
      baseUrl: 'http://127.0.0.1:1/harvest',
      auth: {
        mode: 'client_credentials',
        authUrl: h.sim.authUrl,
        clientId: 'acme-client',
        clientSecret: new Secret(secretOf('acme')),
        sub: undefined,
      },
    });
    const [failed] = await h.sync([{ account: 'acme', resource: 'jobs' }]);
    const error = failed && !failed.ok ? failed.error : '';
    console.log(error);
    expect(error).toContain('unreachable');
    expect(error).not.toContain('HIRESYNC_BASE_URL');
    expect(error).toContain('accounts update acme --base-url');
  }, 60_000);
});
