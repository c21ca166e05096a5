import { describe, expect, it } from 'vitest';
import {
  refreshLockKey,
  refreshTokenPurpose,
  refusalReason,
} from '../../../src/accounts/refresh-token-vault.js';
import { registerSecret } from '../../../src/secret.js';
import { runLockKey } from '../../../src/warehouse/lock-keys.js';

const REFUSAL =
  "token request to /oauth/token was refused (400): refresh token already used (rotated); the refresh token of account acme was refused (revoked, expired unused, or already used), or the partner app's HIRESYNC_PARTNER_CLIENT_ID/HIRESYNC_PARTNER_CLIENT_SECRET are wrong";

describe('refusalReason', () => {
  it('says what the token endpoint answered, and that the customer must authorize again', () => {
    expect(refusalReason(REFUSAL, false)).toBe(
      'its refresh token was refused (token request to /oauth/token was refused (400): refresh token already used (rotated)): the customer revoked the authorization, or the token expired unused',
    );
  });

  it('says the rotated token was lost when the refused token followed an interrupted refresh', () => {
    expect(refusalReason(REFUSAL, true)).toMatch(
      /^a refresh was interrupted after the token endpoint rotated the token; the rotated token was lost, and the stored one was refused \(token request to \/oauth\/token was refused \(400\)/,
    );
  });

  it('never repeats a secret the endpoint echoed', () => {
    registerSecret('echoed-refresh-token-value');
    const reason = refusalReason(
      'token request to /oauth/token was refused (400): bad token echoed-refresh-token-value; advice',
      false,
    );
    expect(reason).not.toContain('echoed-refresh-token-value');
    expect(reason).toContain('[redacted]');
  });
});

describe('refresh lock and purpose', () => {
  it('gives each account a refresh lock of its own, apart from every run lock', () => {
    expect(refreshLockKey('acme')).toBe(refreshLockKey('acme'));
    expect(refreshLockKey('acme')).not.toBe(refreshLockKey('beta'));
    // A run lock is named account:resource; none may meet a refresh lock.
    for (const name of ['acme', 'refresh:acme', 'jobs', 'acme:jobs'])
      expect(refreshLockKey('acme')).not.toBe(runLockKey(name));
  });

  it('seals a refresh token for its account and field only', () => {
    expect(refreshTokenPurpose('acme')).toBe('account:acme:refresh_token');
  });
});
