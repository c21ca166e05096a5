import { describe, expect, it } from 'vitest';
import { credentialRefusalOf } from '../../../src/api/credential-refusal.js';
import type { AuthConfig } from '../../../src/config/types.js';
import { CredentialsRefusedError } from '../../../src/errors.js';
import { isUnrecoverable } from '../../../src/queue/error-policy.js';
import { Secret } from '../../../src/secret.js';

const clientCredentials = (extra: Partial<AuthConfig> = {}): AuthConfig =>
  ({
    mode: 'client_credentials',
    tokenUrl: 'https://auth.example.com/token',
    clientId: 'acme-client',
    clientSecret: new Secret('acme-secret-0b7e'),
    account: 'acme',
    ...extra,
  }) as AuthConfig;

const apiKey: AuthConfig = {
  mode: 'api_key',
  tokenUrl: 'https://api.example.com/auth/token',
  apiKey: new Secret('acme-key-77d1'),
  account: 'acme',
};

const oauth = (error: string, description?: string) =>
  JSON.stringify({ error, ...(description ? { error_description: description } : {}) });

describe('credentialRefusalOf', () => {
  it("refuses a registered account's client secret on a 401 or a 400 invalid_client, naming the status and the endpoint's text", () => {
    expect(
      credentialRefusalOf(
        clientCredentials(),
        401,
        oauth('invalid_client', 'Client authentication failed'),
      ),
    ).toBe(
      'the token service refused its client secret (401 invalid_client: Client authentication failed)',
    );
    expect(credentialRefusalOf(clientCredentials(), 400, oauth('invalid_client'))).toBe(
      'the token service refused its client secret (400 invalid_client)',
    );
    expect(credentialRefusalOf(clientCredentials(), 401, 'nope')).toBe(
      'the token service refused its client secret (401)',
    );
    expect(credentialRefusalOf(apiKey, 401, JSON.stringify({ message: 'Unauthorized' }))).toBe(
      'the token service refused its API key (401 Unauthorized)',
    );
  });

  it('says nothing of a 5xx, a 429, a timeout-like 408, a 403 (a sub), or another 400', () => {
    for (const status of [500, 502, 503, 429, 408, 403]) {
      expect(credentialRefusalOf(clientCredentials(), status, oauth('invalid_client'))).toBe(
        undefined,
      );
    }
    expect(credentialRefusalOf(clientCredentials(), 400, oauth('invalid_request'))).toBe(undefined);
  });

  it('says nothing of default, an account being added, or a partner account (needs_reauthorization is theirs)', () => {
    expect(credentialRefusalOf(clientCredentials({ account: undefined }), 401, '')).toBe(undefined);
    expect(credentialRefusalOf(clientCredentials({ adding: true }), 401, '')).toBe(undefined);
    const partner: AuthConfig = {
      mode: 'partner',
      tokenUrl: 'https://auth.example.com/token',
      clientId: 'partner',
      clientSecret: new Secret('partner-secret-c3a9'),
      account: 'acme',
    };
    expect(credentialRefusalOf(partner, 401, oauth('invalid_grant'))).toBe(undefined);
  });

  it('never puts the credential in the reason', () => {
    const reason = credentialRefusalOf(
      clientCredentials(),
      401,
      oauth('invalid_client', 'bad secret acme-secret-0b7e'),
    );
    expect(reason).not.toContain('acme-secret-0b7e');
  });
});

describe('an account in state credentials_refused', () => {
  it('fails its runs without retry, saying why and what to do', () => {
    const error = new CredentialsRefusedError(
      'acme',
      'client_credentials',
      'the token service refused its client secret (401)',
    );
    expect(isUnrecoverable(error)).toBe(true);
    expect(error.message).toBe(
      "account acme's credentials were refused: the token service refused its client secret (401); store the right secret with 'hiresync accounts update acme' (secret on standard input), then it is enabled again; 'hiresync accounts test acme' checks it ('hiresync accounts enable acme' if the fault was on the vendor's side and is fixed)",
    );
  });

  it("names an API-key account's base URL as the other fix: its token endpoint is BASE_URL/auth/token, where an API that is not the key's (another region, another vendor path) answers 401 too", () => {
    const error = new CredentialsRefusedError(
      'beta',
      'api_key',
      'the token service refused its API key (401 Unauthorized)',
    );
    expect(error.message).toContain(
      "if the key is right, its base URL may be wrong (its token endpoint is the base URL + /auth/token): 'hiresync accounts update beta --base-url URL' enables it too",
    );
  });
});
