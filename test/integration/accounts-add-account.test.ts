import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import type { Account } from '../../src/accounts/account.js';
import { AccountStore } from '../../src/accounts/account-store.js';
import {
  type AccountTester,
  type AddAccountOptions,
  addAccount,
  type TokenTest,
} from '../../src/accounts/add-account.js';
import { readPartner } from '../../src/config/partner.js';
import { Secret } from '../../src/secret.js';
import { keysOf } from '../support/accounts-cli.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { newSecretKey, PARTNER_APP_ENV } from '../support/test-env.js';

// `addAccount` called as a function, with a tester of its own in place of the
// API (the CLI's test of an account against the simulator is accounts-test.test.ts's).
let t: TestDatabase;
let store: AccountStore;

beforeEach(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
  const { partner } = readPartner(PARTNER_APP_ENV);
  store = new AccountStore(t.db, keysOf(newSecretKey()), { partner });
});
afterEach(async () => {
  await t.drop();
});

const credentials = {
  name: 'acme',
  baseUrl: 'https://api.example.com/harvest',
  auth: {
    mode: 'client_credentials' as const,
    authUrl: 'https://auth.example.com/oauth',
    clientId: 'acme-client',
    clientSecret: new Secret(`secret-${randomUUID()}`),
  },
};
const partner = {
  name: 'acme',
  baseUrl: 'https://api.example.com/harvest',
  authUrl: 'https://auth.example.com/oauth',
  refreshToken: new Secret(`refresh-${randomUUID()}`),
};

/** What a tester saw of the account when asked for a token, and whether it was closed. */
interface Seen {
  minted: Array<{ adding: boolean | undefined; stored: string | undefined }>;
  closed: boolean;
}

/** A tester whose token test answers `token`, and whose resources read `['jobs: ok']`. */
function tester(token: TokenTest, seen: Seen) {
  return async (resolve: (name: string) => Promise<Account>): Promise<AccountTester<string>> => ({
    mintToken: async (name) => {
      const account = await resolve(name);
      seen.minted.push({ adding: account.auth.adding, stored: (await store.get(name))?.state });
      return token;
    },
    readResources: async (name) => [`${(await resolve(name)).name}: ok`],
    close: async () => {
      seen.closed = true;
    },
  });
}

function add(overrides: Partial<AddAccountOptions<string>>) {
  return addAccount<string>({
    db: t.db,
    store,
    account: { credentials },
    reuseData: false,
    openTester: undefined,
    warn: () => {},
    ...overrides,
  });
}

async function schemaExists(schema: string): Promise<boolean> {
  const { rows } = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(t.db);
  return rows.length > 0;
}

const refused: TokenTest = {
  ok: false,
  error: 'invalid_client',
  cause: new Error('invalid_client'),
};

describe('addAccount', () => {
  it('untested, registers the account and makes its schema ready', async () => {
    const outcome = await add({});
    expect(outcome).toMatchObject({
      kind: 'added',
      account: { name: 'acme', state: 'enabled', schema: 'acme' },
      resources: undefined,
    });
    expect(await schemaExists('acme')).toBe(true);
  });

  it('tested, mints a token with the credentials before registering them, then reads its resources', async () => {
    const seen: Seen = { minted: [], closed: false };
    const outcome = await add({ openTester: tester({ ok: true }, seen) });
    expect(outcome).toMatchObject({
      kind: 'added',
      account: { name: 'acme', state: 'enabled' },
      resources: ['acme: ok'],
    });
    expect(seen).toEqual({ minted: [{ adding: true, stored: undefined }], closed: true });
  });

  it('refuses credentials that mint no token, registering nothing', async () => {
    const seen: Seen = { minted: [], closed: false };
    const outcome = await add({ openTester: tester(refused, seen) });
    expect(outcome.kind).toBe('refused');
    expect(outcome.kind === 'refused' && outcome.error.message).toBe(
      "account acme was not added, and nothing is registered: no access token could be minted with the credentials given (invalid_client); give the right ones to 'hiresync accounts add acme' again (with --no-test it registers them untested)",
    );
    expect(await store.get('acme')).toBeUndefined();
    expect(await schemaExists('acme')).toBe(false);
    expect(seen.closed).toBe(true);
  });

  it('tests a partner account stored disabled, and enables it once its token is minted', async () => {
    const seen: Seen = { minted: [], closed: false };
    const outcome = await add({ account: { partner }, openTester: tester({ ok: true }, seen) });
    expect(outcome).toMatchObject({
      kind: 'added',
      account: { name: 'acme', state: 'enabled', authMode: 'partner' },
    });
    expect(seen.minted).toEqual([{ adding: true, stored: 'disabled' }]);
  });

  it('refuses a partner account whose refresh token mints none, deleting the row it stored to test it', async () => {
    const seen: Seen = { minted: [], closed: false };
    const outcome = await add({ account: { partner }, openTester: tester(refused, seen) });
    expect(outcome.kind).toBe('refused');
    expect(seen.minted).toEqual([{ adding: true, stored: 'disabled' }]);
    expect(await store.get('acme')).toBeUndefined();
    expect(await schemaExists('acme')).toBe(false);
  });
});
