import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { completeAuthorization } from '../../src/accounts/complete-authorization.js';
import {
  type ConnectCallbackPorts,
  type ConnectCallbackRequest,
  connectCallback,
} from '../../src/accounts/connect-callback.js';
import { connectRedirectUri, createConnectLink } from '../../src/accounts/connect-links.js';
import { openConnectLink } from '../../src/accounts/connect-states.js';
import { checkNewAccount } from '../../src/accounts/register-account.js';
import { authorizeRequestUrl } from '../../src/api/authorization-request.js';
import { createHttp } from '../../src/api/http.js';
import { newPkce } from '../../src/api/pkce.js';
import { readPartner } from '../../src/config/partner.js';
import type { PartnerConfig } from '../../src/config/types.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { keysOf } from '../support/accounts-cli.js';
import { captureLogger } from '../support/capture-logger.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { newSecretKey, PARTNER_APP_ENV } from '../support/test-env.js';

// The operations behind `accounts authorize` and a connect link's callback,
// called as functions: the routes' pages and the CLI's output are
// connect-links.test.ts's and partner-accounts.test.ts's.
const PUBLIC_URL = 'http://127.0.0.1:1';
const REDIRECT_URI = connectRedirectUri(PUBLIC_URL);
const BROWSER = 'a'.repeat(64);

let sim: ApiSimulator;
let t: TestDatabase;
let partner: PartnerConfig;
const secretKeys = keysOf(newSecretKey());
let scheduled: string[];

beforeAll(async () => {
  sim = await ApiSimulator.start({
    accounts: [{ name: 'acme', dataset: { seed: 7, counts: { jobs: 3 } } }],
  });
  const read = readPartner({ ...PARTNER_APP_ENV, HIRESYNC_AUTHORIZE_URL: sim.authorizeUrl });
  if (!read.partner) throw new Error('no partner app');
  partner = read.partner;
});
afterAll(async () => {
  await sim.close();
});
beforeEach(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
  await migrateAll(t.db);
  scheduled = [];
  return () => t.drop();
});

function ports(overrides: Partial<ConnectCallbackPorts> = {}): ConnectCallbackPorts {
  return {
    db: t.db,
    secretKeys,
    partner,
    redirectUri: REDIRECT_URI,
    http: createHttp({ timeoutMs: 5000 }),
    logger: captureLogger('silent').logger,
    exchangeTimeoutMs: 5000,
    warn: () => {},
    schedule: async (account) => {
      scheduled.push(account);
    },
    ...overrides,
  };
}

/** The customer approves at the simulator: the code of an authorization request. */
async function approve(state: string, codeChallenge: string, redirectUri = REDIRECT_URI) {
  const url = new URL(
    authorizeRequestUrl(sim.authorizeUrl, {
      clientId: partner.clientId,
      redirectUri,
      state,
      scope: partner.scope,
      codeChallenge,
    }),
  );
  url.searchParams.set('sim_account', 'acme');
  const approved = await fetch(url, { redirect: 'manual' });
  const code = new URL(approved.headers.get('location') ?? 'http://invalid/').searchParams.get(
    'code',
  );
  if (!code) throw new Error(`the simulator did not approve (${approved.status})`);
  return code;
}

/** A link for the new account acme, opened by {@link BROWSER}: its state, and the code approved for it. */
async function openedLink() {
  const { url } = await createConnectLink(t.db, {
    account: 'acme',
    expiresInMs: 3_600_000,
    publicUrl: PUBLIC_URL,
    secretKeys,
    partner,
    urls: { baseUrl: sim.url, authUrl: sim.authUrl },
  });
  const token = url.slice(url.lastIndexOf('/') + 1);
  const opened = await openConnectLink(t.db, token, secretKeys.reveal(), { browserHash: BROWSER });
  if (!opened.ok) throw new Error(`link refused: ${opened.refusal.kind}`);
  const { state, codeChallenge } = opened.link;
  return { token, state, code: await approve(state, codeChallenge) };
}

function callback(state: string, code: string): ConnectCallbackRequest {
  return { state, browserHash: BROWSER, codes: [code], errors: [], errorDescription: undefined };
}

describe('connectCallback', () => {
  it('connects a new account, marks the link used and schedules the account', async () => {
    const { state, code } = await openedLink();
    const outcome = await connectCallback(ports())(callback(state, code));
    expect(outcome).toMatchObject({
      kind: 'connected',
      name: 'acme',
      account: { name: 'acme', state: 'enabled', authMode: 'partner' },
      previousState: undefined,
    });
    expect(outcome).not.toHaveProperty('unfinished');
    expect(outcome).not.toHaveProperty('notScheduled');
    expect(scheduled).toEqual(['acme']);
    const { rows } = await sql<{ used: boolean }>`
      select used_at is not null as used from hiresync.connect_links`.execute(t.db);
    expect(rows).toEqual([{ used: true }]);
  });

  it('refuses a state used once already as replayed, changing nothing', async () => {
    const { state, code } = await openedLink();
    const complete = connectCallback(ports());
    expect(await complete(callback(state, code))).toMatchObject({ kind: 'connected' });
    const again = await complete(callback(state, code));
    expect(again).toEqual({
      kind: 'state refused',
      refusal: { kind: 'replayed', account: 'acme', linkUsed: true },
    });
    expect(scheduled).toEqual(['acme']);
  });

  it('refuses an expired state, registering nothing', async () => {
    const { state, code } = await openedLink();
    await sql`update hiresync.connect_states set expires_at = now() - interval '1 second'`.execute(
      t.db,
    );
    const outcome = await connectCallback(ports())(callback(state, code));
    expect(outcome).toEqual({
      kind: 'state refused',
      refusal: { kind: 'state expired', account: 'acme' },
    });
    expect(await new AccountStore(t.db).get('acme')).toBeUndefined();
  });

  it('refuses a state claimed from another browser than the one that opened the link', async () => {
    const { state, code } = await openedLink();
    const outcome = await connectCallback(ports())({
      ...callback(state, code),
      browserHash: 'b'.repeat(64),
    });
    expect(outcome).toEqual({
      kind: 'state refused',
      refusal: { kind: 'other browser', account: 'acme' },
    });
    expect(await new AccountStore(t.db).get('acme')).toBeUndefined();
  });

  it("answers the vendor's error as such, leaving the link unused", async () => {
    const { token, state } = await openedLink();
    const outcome = await connectCallback(ports())({
      ...callback(state, ''),
      codes: [],
      errors: ['access_denied'],
      errorDescription: 'the user said no',
    });
    expect(outcome).toEqual({
      kind: 'vendor error',
      account: 'acme',
      error: 'access_denied',
      description: 'the user said no',
    });
    const reopened = await openConnectLink(t.db, token, secretKeys.reveal(), {
      browserHash: BROWSER,
    });
    expect(reopened.ok).toBe(true);
  });

  it('reports a failed exchange, leaving the link unused and nothing registered', async () => {
    const { token, state } = await openedLink();
    // A code approved for another request: its PKCE verifier is not this state's.
    const other = await approve('other-state', newPkce().challenge);
    const outcome = await connectCallback(ports())(callback(state, other));
    expect(outcome).toMatchObject({ kind: 'failed', account: 'acme' });
    expect(outcome.kind === 'failed' && outcome.error.message).toContain('code_verifier');
    expect(await new AccountStore(t.db).get('acme')).toBeUndefined();
    expect(scheduled).toEqual([]);
    const reopened = await openConnectLink(t.db, token, secretKeys.reveal(), {
      browserHash: BROWSER,
    });
    expect(reopened.ok).toBe(true);
  });

  it('connects all the same when scheduling fails, saying why', async () => {
    const { state, code } = await openedLink();
    const outcome = await connectCallback(
      ports({
        schedule: async () => {
          throw new Error('Redis is down');
        },
      }),
    )(callback(state, code));
    expect(outcome).toMatchObject({ kind: 'connected', name: 'acme' });
    expect(outcome.kind === 'connected' && outcome.notScheduled?.message).toBe('Redis is down');
    expect(await new AccountStore(t.db).get('acme')).toMatchObject({ state: 'enabled' });
  });
});

describe('completeAuthorization', () => {
  it('registers a new account with the refresh token its code yields', async () => {
    const store = new AccountStore(t.db, secretKeys, { partner });
    const owner = await checkNewAccount(t.db, store, 'acme');
    const pkce = newPkce();
    const code = await approve('st', pkce.challenge);
    const outcome = await completeAuthorization(
      { ...ports(), store, warn: () => {} },
      { register: { baseUrl: sim.url, authUrl: sim.authUrl, owner } },
      { name: 'acme', code, redirectUri: REDIRECT_URI, codeVerifier: pkce.verifier },
    );
    expect(outcome).toMatchObject({
      kind: 'authorized',
      account: { name: 'acme', state: 'enabled', schema: 'acme' },
      previousState: undefined,
    });
    // Once only: the same code again is refused by the token service, and nothing changes.
    const existing = await store.get('acme');
    if (!existing) throw new Error('acme is not registered');
    const again = await completeAuthorization(
      { ...ports(), store, warn: () => {} },
      { existing, authUrl: sim.authUrl },
      { name: 'acme', code, redirectUri: REDIRECT_URI, codeVerifier: pkce.verifier },
    );
    expect(again).toMatchObject({ kind: 'exchange failed' });
    expect(await store.get('acme')).toMatchObject({ state: 'enabled' });
  });

  it('reports a refused exchange and registers nothing', async () => {
    const store = new AccountStore(t.db, secretKeys, { partner });
    const owner = await checkNewAccount(t.db, store, 'acme');
    const code = await approve('st', newPkce().challenge);
    const outcome = await completeAuthorization(
      { ...ports(), store, warn: () => {} },
      { register: { baseUrl: sim.url, authUrl: sim.authUrl, owner } },
      { name: 'acme', code, redirectUri: REDIRECT_URI, codeVerifier: newPkce().verifier },
    );
    expect(outcome).toMatchObject({ kind: 'exchange failed' });
    expect(outcome.kind === 'exchange failed' && outcome.error.message).toContain('code_verifier');
    expect(await store.get('acme')).toBeUndefined();
  });
});
