// A partner account whose refresh is refused needs re-authorizing whichever
// shape the token endpoint refuses in: RFC 6749 5.2's `{"error":
// "invalid_grant", "error_description": …}` (the live service) or
// `{"message": …}`; the reason stored and shown carries what it said.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { partner } = cleanupAfterEach();

describe('a refresh refused', () => {
  it.each([
    ['{"error": "invalid_grant", "error_description": …}', true],
    ['{"message": …}', false],
  ])(
    'as %s puts the account in needs_reauthorization with the description shown',
    async (_shape, oauthErrorBodies) => {
      const { sim, store, env, provider } = await partner({ oauthErrorBodies });
      const refreshing = await provider();
      sim.revokeAuthorization('acme');
      await refreshing.getToken().catch(() => undefined);
      const stored = await store.get('acme');
      expect(stored?.state).toBe('needs_reauthorization');
      expect(stored?.partner?.reauthorizationReason).toContain('authorization revoked');

      const status = captureIo();
      expect(await main(['status', '--account', 'acme'], env, status)).toBe(0);
      expect(status.out()).toContain('authorization revoked');
    },
  );
});
