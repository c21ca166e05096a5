import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  authorizeRequestUrl,
  loopbackRedirectUri,
  newState,
  readCallback,
} from '../../../src/api/authorization-request.js';
import { parsePort, parseTimeout } from '../../../src/commands/accounts/authorize.js';
import { reauthorizationNote } from '../../../src/commands/accounts/list.js';
import { authorizeEndpoint, loadPartnerApp } from '../../../src/commands/accounts/partner-app.js';
import { ConfigError, UsageError } from '../../../src/errors.js';
import { main } from '../../../src/main.js';
import { captureIo } from '../../support/capture-io.js';

describe('the authorization request', () => {
  it('carries response_type=code, the client id, the loopback redirect URI, the state, the PKCE challenge (S256), and the scope only when set', () => {
    const request = {
      clientId: 'partner client',
      redirectUri: loopbackRedirectUri(8976),
      state: 'st/+=',
      scope: undefined,
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    };
    const url = new URL(authorizeRequestUrl('https://auth.example.com/oauth/authorize', request));
    expect(url.origin + url.pathname).toBe('https://auth.example.com/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'partner client',
      redirect_uri: 'http://127.0.0.1:8976/callback',
      state: 'st/+=',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const scoped = new URL(
      authorizeRequestUrl('https://auth.example.com/authorize', {
        ...request,
        scope: 'jobs:read candidates:read',
      }),
    );
    expect(scoped.searchParams.get('scope')).toBe('jobs:read candidates:read');
  });

  it('makes a new state of 32 random bytes, base64url, each time', () => {
    const a = newState();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(newState()).not.toBe(a);
  });
});

describe('readCallback', () => {
  const read = (query: string) => readCallback(new URLSearchParams(query), 'the-state');

  it('takes the code of an answer carrying the state', () => {
    expect(read('code=abc&state=the-state')).toEqual({ kind: 'code', code: 'abc' });
  });

  it('ignores an answer with no, another, or a repeated state, error answers included', () => {
    for (const query of [
      'code=abc',
      'code=abc&state=other',
      'code=abc&state=the-stat',
      'code=abc&state=the-state&state=the-state',
      'error=access_denied&state=forged',
    ])
      expect(read(query), query).toEqual({ kind: 'state mismatch' });
  });

  it('reads an error answer with its description', () => {
    expect(read('error=access_denied&error_description=no+thanks&state=the-state')).toEqual({
      kind: 'error',
      error: 'access_denied',
      description: 'no thanks',
    });
  });

  it('calls an answer with neither code nor error, or either twice, malformed', () => {
    expect(read('state=the-state').kind).toBe('malformed');
    expect(read('state=the-state&code=').kind).toBe('malformed');
    expect(read('state=the-state&code=a&code=b').kind).toBe('malformed');
  });
});

describe('accounts authorize options', () => {
  it('takes a port from 0 to 65535 and a duration as timeout', () => {
    expect(parsePort('8976')).toBe(8976);
    expect(parsePort('0')).toBe(0);
    for (const bad of ['-1', '65536', 'http', '80.5'])
      expect(() => parsePort(bad)).toThrow(UsageError);
    expect(parseTimeout('10m')).toBe(600_000);
    for (const bad of ['soon', '0', '30d']) expect(() => parseTimeout(bad)).toThrow(UsageError);
  });
});

describe('loadPartnerApp', () => {
  it('names both partner variables when neither is set', () => {
    const error = (() => {
      try {
        loadPartnerApp({}, 'authorize a partner account');
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.problems.map((p) => p.variable)).toEqual([
      'HIRESYNC_PARTNER_CLIENT_ID',
      'HIRESYNC_PARTNER_CLIENT_SECRET',
    ]);
  });

  it("authorizes at HIRESYNC_AUTHORIZE_URL when set, else at the account's auth URL + /authorize", () => {
    const app = {
      HIRESYNC_PARTNER_CLIENT_ID: 'p',
      HIRESYNC_PARTNER_CLIENT_SECRET: 's',
      HIRESYNC_AUTH_URL: 'https://auth.example.com/oauth',
    };
    const account = 'https://eu.auth.example.com/oauth';
    expect(authorizeEndpoint(app, loadPartnerApp(app, 'x'), account)).toBe(
      'https://eu.auth.example.com/oauth/authorize',
    );
    const explicit = { ...app, HIRESYNC_AUTHORIZE_URL: 'https://login.example.com/consent' };
    expect(authorizeEndpoint(explicit, loadPartnerApp(explicit, 'x'), account)).toBe(
      'https://login.example.com/consent',
    );
  });
});

describe('accounts list: an account waiting for reauthorization', () => {
  it('says why and what to do', () => {
    const note = reauthorizationNote({
      name: 'acme',
      partner: { reauthorizationReason: 'its refresh token was refused (400)' },
    } as Parameters<typeof reauthorizationNote>[0]);
    expect(note).toBe(
      "acme needs reauthorization: its refresh token was refused (400); send the customer's administrator a connect link ('hiresync accounts invite acme'), or run 'hiresync accounts authorize acme' where their browser can reach this host (its data is kept)",
    );
  });
});

/** A configuration whose servers do not exist: nothing here may connect. */
const ENV = {
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x',
  HIRESYNC_BASE_URL: 'https://api.example.com',
  HIRESYNC_AUTH_URL: 'https://auth.example.com',
  HIRESYNC_SECRET_KEY: randomBytes(32).toString('base64'),
  HIRESYNC_PARTNER_CLIENT_ID: 'partner-client',
  HIRESYNC_PARTNER_CLIENT_SECRET: 'partner-secret',
};

describe('accounts authorize: usage and configuration errors, before connecting', () => {
  let connect: ReturnType<typeof vi.spyOn>;
  beforeEach(() => {
    connect = vi.spyOn(net.Socket.prototype, 'connect');
  });
  afterEach(() => {
    expect(connect, 'no connection was attempted').not.toHaveBeenCalled();
    connect.mockRestore();
  });

  async function run(argv: string[], env: Record<string, string> = ENV) {
    const io = captureIo();
    const code = await main(['accounts', 'authorize', ...argv], env, io);
    return { code, stdout: io.out(), stderr: io.err() };
  }

  it('reports every missing variable at once with exit 2', async () => {
    const result = await run(['acme'], { DATABASE_URL: ENV.DATABASE_URL });
    expect(result.code).toBe(2);
    for (const variable of [
      'HIRESYNC_SECRET_KEY',
      'HIRESYNC_PARTNER_CLIENT_ID',
      'HIRESYNC_PARTNER_CLIENT_SECRET',
    ])
      expect(result.stderr, variable).toContain(`${variable}: is required`);
    // The URLs are not required: unset, they are the live service's.
    expect(result.stderr).not.toContain('--base-url');
    expect(result.stdout).toBe('');
  });

  it('applies the https rule to HIRESYNC_AUTHORIZE_URL', async () => {
    const plain = await run(['acme'], {
      ...ENV,
      HIRESYNC_AUTHORIZE_URL: 'http://auth.example.com/a',
    });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('HIRESYNC_AUTHORIZE_URL: must use https://');
  });

  it('refuses default, a bad NAME, a bad --port or --timeout with exit 2', async () => {
    expect((await run(['default'])).stderr).toContain("the account default is the environment's");
    expect((await run(['Acme'])).code).toBe(2);
    expect((await run(['acme', '--port', '70000'])).stderr).toContain('--port must be');
    expect((await run(['acme', '--timeout', 'later'])).stderr).toContain('--timeout must be');
  });
});
