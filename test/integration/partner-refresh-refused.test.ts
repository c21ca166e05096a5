// What a refused refresh grant does to a partner account: an enabled account
// whose customer's grant is refused (invalid_grant) needs re-authorizing, and
// `status` and `accounts list` both say why; a disabled one stays disabled,
// even after `accounts authorize` (enabling is the operator's decision); and
// the partner app's own credentials refused (401 invalid_client, RFC 6749
// 5.2) is the app's error, not the customer's: fixing the secret is enough.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { Secret } from '../../src/secret.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { grantRefreshToken as grant } from '../support/partner-grant.js';
import { tokenProviderOf } from '../support/partner-harness.js';

const { partner } = cleanupAfterEach();

describe('a disabled partner account whose refresh is refused', () => {
  it('stays disabled, and stays disabled after accounts authorize', async () => {
    const { sim, store, provider } = await partner();
    // A run resolved the account (and its vault) while it was enabled.
    const refreshing = await provider();
    // The operator disables it; meanwhile the customer revoked the app.
    await store.setState('acme', 'disabled');
    sim.revokeAuthorization('acme');
    await refreshing.getToken().catch(() => undefined);
    expect.soft((await store.get('acme'))?.state).toBe('disabled');

    // Authorizing again must not enable it: that is the operator's decision.
    const outcome = await store.authorize('acme', new Secret(await grant(sim)));
    expect(outcome.account.state).toBe('disabled');
  });
});

describe("the partner app's own credentials refused (401 invalid_client)", () => {
  it('does not put the customer accounts in needs_reauthorization: fixing the secret restores them', async () => {
    const { sim, config, store } = await partner();
    // The operator deploys with a mistyped partner client secret.
    const app = config.partner as NonNullable<typeof config.partner>;
    const mistyped = { ...app, clientSecret: new Secret('partner-secret-typo') };
    const resolved = await store.resolve('acme');
    const wrongAuth = { ...resolved.auth, clientSecret: mistyped.clientSecret };
    const provider = tokenProviderOf({ ...resolved, auth: wrongAuth });
    const refused = await provider.getToken().catch((error: unknown) => error as Error);
    expect(refused).toBeInstanceOf(Error);
    // Nothing about the customer's grant is wrong.
    expect(sim.partnerStats('acme').invalidGrants).toBe(0);
    expect.soft((await store.get('acme'))?.state).toBe('enabled');

    // The secret is fixed: the account works again with its (valid) refresh token.
    const fixed = await store
      .resolve('acme')
      .then(() => 'resolved')
      .catch((error: unknown) => (error as Error).message);
    expect(fixed).toBe('resolved');
  });
});

describe('status of an account that needs re-authorizing', () => {
  it('shows the reason, as accounts list does', async () => {
    const { sim, store, env, provider } = await partner();
    const refreshing = await provider();
    sim.revokeAuthorization('acme');
    await refreshing.getToken().catch(() => undefined);
    const reason = (await store.get('acme'))?.partner?.reauthorizationReason as string;
    expect(reason).toContain('authorization revoked');

    const list = captureIo();
    expect(await main(['accounts', 'list'], env, list)).toBe(0);
    expect(list.out()).toContain('authorization revoked');
    const status = captureIo();
    expect(await main(['status', '--account', 'acme'], env, status)).toBe(0);
    expect(status.out()).toContain('hiresync accounts authorize acme');
    expect(status.out()).toContain('authorization revoked');
  });
});
