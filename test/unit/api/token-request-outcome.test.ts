import { describe, expect, it } from 'vitest';
import { tokenRequestOutcome } from '../../../src/api/token-grants.js';
import {
  AuthError,
  ReauthorizationRequiredError,
  RedirectedError,
  RefreshRefusedError,
  TransientApiError,
} from '../../../src/errors.js';

describe('tokenRequestOutcome', () => {
  it('counts a 4xx answer of the token endpoint and a revoked authorization as refused', () => {
    expect(tokenRequestOutcome(new AuthError(401, '/oauth/token', 'refused', undefined))).toBe(
      'refused',
    );
    expect(
      tokenRequestOutcome(new RefreshRefusedError(400, '/oauth/token', 'invalid_grant', undefined)),
    ).toBe('refused');
    expect(tokenRequestOutcome(new ReauthorizationRequiredError('acme', 'invalid_grant'))).toBe(
      'refused',
    );
  });

  it('counts an unreachable or failing endpoint, a redirect or an unusable answer as an error', () => {
    expect(tokenRequestOutcome(new TransientApiError('unreachable', undefined))).toBe('error');
    expect(tokenRequestOutcome(new TransientApiError('503 five times', 503))).toBe('error');
    expect(tokenRequestOutcome(new RedirectedError(302, '/oauth/token', 'moved', undefined))).toBe(
      'error',
    );
    expect(
      tokenRequestOutcome(new AuthError(200, '/oauth/token', 'no access_token', undefined)),
    ).toBe('error');
  });
});
