import { describe, expect, it } from 'vitest';
import { describeTokenError } from '../../../src/api/token-answer.js';
import { CredentialsRefusedError, ReauthorizationRequiredError } from '../../../src/errors.js';
import { Secret } from '../../../src/secret.js';
import { stateThatCaused } from '../../../src/status/state-caused.js';

const refusedToken = describeTokenError(
  {
    mode: 'client_credentials',
    tokenUrl: 'https://auth.example.test/token',
    clientId: 'beta-client',
    clientSecret: new Secret('wrong'),
    sub: undefined,
    account: 'beta',
  },
  401,
  '{"error":"invalid_client","error_description":"Client authentication failed"}',
);
const refusedKey = describeTokenError(
  {
    mode: 'api_key',
    tokenUrl: 'https://api.example.test/auth/token',
    apiKey: new Secret('k'),
    account: 'beta',
  },
  401,
  '{}',
);

describe('which failed runs an account state caused', () => {
  it('takes the error of a refused refresh grant as caused by needs_reauthorization', () => {
    const error = new ReauthorizationRequiredError('acme', 'invalid_grant: revoked').message;
    expect(stateThatCaused('acme', 'needs_reauthorization', error)).toBe('needs_reauthorization');
    const lost = new ReauthorizationRequiredError('acme', 'no refresh token is stored for it');
    expect(stateThatCaused('acme', 'needs_reauthorization', lost.message)).toBe(
      'needs_reauthorization',
    );
  });

  it('takes a refused secret or key, at the token request or from the account state, as caused by credentials_refused', () => {
    for (const error of [
      refusedToken,
      refusedKey,
      new CredentialsRefusedError(
        'beta',
        'client_credentials',
        'the token service refused its client secret (401)',
      ).message,
    ]) {
      expect(stateThatCaused('beta', 'credentials_refused', error)).toBe('credentials_refused');
    }
  });

  it("leaves the resource's own failures, another account's errors and accounts no longer in that state alone", () => {
    const reauth = new ReauthorizationRequiredError('acme', 'revoked').message;
    expect(
      stateThatCaused('acme', 'needs_reauthorization', '503 from /v3/jobs: try again later'),
    ).toBeUndefined();
    expect(
      stateThatCaused('acme', 'needs_reauthorization', '403 from /v3/jobs: harvest:jobs:list'),
    ).toBeUndefined();
    expect(stateThatCaused('acme', 'needs_reauthorization', null)).toBeUndefined();
    // Another account of the same prefix, or another account altogether.
    expect(stateThatCaused('acm', 'needs_reauthorization', reauth)).toBeUndefined();
    expect(stateThatCaused('acme2', 'credentials_refused', refusedToken)).toBeUndefined();
    // Re-authorized (enabled) or disabled: its old failures are the resources' own.
    expect(stateThatCaused('acme', 'enabled', reauth)).toBeUndefined();
    expect(stateThatCaused('beta', 'disabled', refusedToken)).toBeUndefined();
    // A state's failure is not the other state's.
    expect(stateThatCaused('acme', 'credentials_refused', reauth)).toBeUndefined();
    expect(stateThatCaused('beta', 'needs_reauthorization', refusedToken)).toBeUndefined();
  });
});
