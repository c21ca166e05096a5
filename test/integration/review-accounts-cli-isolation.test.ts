import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { secretPurpose } from '../../src/accounts/account-store.js';
import { SecretBox } from '../../src/accounts/secret-box.js';
import { main } from '../../src/main.js';
import { Secret } from '../../src/secret.js';
import { startAccountsHarness } from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { captureIo } from '../unit/commands/capture-io.js';

const { defer } = cleanupAfterEach();

describe("one account's broken state and the commands over several accounts", () => {
  it("`sync --account alpha --account beta` still syncs beta when no configured key opens alpha's credential", async () => {
    const h = await startAccountsHarness({ accounts: ['alpha', 'beta'] });
    defer(() => h.close());
    // alpha's credential was sealed with a key this host no longer holds.
    const lost = new SecretBox([randomBytes(32)]);
    await sql`update hiresync.accounts set secret = ${lost.seal('alpha-secret', secretPurpose('alpha'))}
              where name = 'alpha'`.execute(h.database.db);
    const io = captureIo();
    const code = await main(
      ['sync', '--account', 'alpha', '--account', 'beta', '--resource', 'jobs'],
      h.env,
      io,
    );
    expect(code).toBe(1);
    expect(io.err()).toMatch(/HIRESYNC_SECRET_KEY/);
    // README: "A credential no configured key opens fails only that account's runs".
    expect(await h.liveIds('beta', 'jobs'), "beta's jobs").toEqual(h.expectedIds('beta', 'jobs'));
  });

  it('`status` still reports every other account when one registered account has no schema (its add could not migrate it)', async () => {
    const h = await startAccountsHarness({ accounts: ['alpha'] });
    defer(() => h.close());
    // Registered, but its schema never made ready (the add's migration failed, or
    // another `status` ran between the add's insert and its migration).
    await h.store.add({
      name: 'gamma',
      baseUrl: h.sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: h.sim.authUrl,
        clientId: 'gamma-client',
        clientSecret: new Secret('gamma-secret'),
      },
    });
    const io = captureIo();
    const code = await main(['status'], h.env, io);
    expect({ code, stderr: io.err() }).toEqual({ code: 0, stderr: '' });
    expect(io.out()).toMatch(/^alpha\s+jobs/m);
    expect(io.out()).toMatch(/^default\s+jobs/m);
  });
});
