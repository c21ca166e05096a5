// `accounts authorize` exits once the code is redeemed, even when the browser
// went away while the code was being exchanged (its outcome does not wait for
// the answer page to finish). Runs the built CLI (npm run build first).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, inject, it } from 'vitest';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { browserThatLeaves } from '../support/browser.js';
import { createTestDatabase } from '../support/databases.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { newRedisPrefix, newSecretKey, PARTNER_APP_ENV } from '../support/test-env.js';

const { defer, cli } = cleanupAfterEach();

describe('accounts authorize when the browser leaves during the code exchange', () => {
  it('exits (at the latest after --timeout) instead of hanging', async () => {
    const sim = await ApiSimulator.start({
      clientSecrets: ['sync-secret'],
      accounts: [{ name: 'acme', dataset: { seed: 5, idOffset: 1_000_000 } }],
    });
    defer(() => sim.close());
    const database = await createTestDatabase(inject('databaseUrl'));
    // The hanging child holds connections to the test database: it is killed
    // first (cleanups run last registered first).
    defer(() => database.drop());
    const env: Record<string, string> = {
      DATABASE_URL: database.url,
      HIRESYNC_REDIS_PREFIX: newRedisPrefix(),
      HIRESYNC_SECRET_KEY: newSecretKey(),
      HIRESYNC_BASE_URL: sim.url,
      HIRESYNC_AUTH_URL: sim.authUrl,
      ...PARTNER_APP_ENV,
    };
    const authorize = cli(['accounts', 'authorize', 'acme', '--port', '0', '--timeout', '3s'], env);

    let url: URL | undefined;
    for (let i = 0; i < 200 && !url; i += 1) {
      const match = /^(https?:\/\/\S+)$/m.exec(authorize.stdout());
      if (match?.[1]) url = new URL(match[1]);
      else await sleep(50);
    }
    if (!url)
      throw new Error(`no authorize URL printed: ${authorize.stdout()} ${authorize.stderr()}`);
    url.searchParams.set('sim_account', 'acme');
    const approved = await fetch(url, { redirect: 'manual' });
    const location = approved.headers.get('location') as string;
    // The browser reaches the callback, and the tab is closed the moment the
    // code is redeemed: while hiresync is still storing the token and writing the page.
    await browserThatLeaves(location, () => sim.partnerStats('acme').codesRedeemed > 0);

    // No deadline here: a command that never exits fails the test by its timeout.
    const code = await authorize.exit;
    expect(sim.partnerStats('acme').codesRedeemed).toBe(1);
    expect(code, `stdout: ${authorize.stdout()}\nstderr: ${authorize.stderr()}`).not.toBeNull();
  });
});
