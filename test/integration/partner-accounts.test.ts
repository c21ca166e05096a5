import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { refreshTokenPurpose } from '../../src/accounts/refresh-token-vault.js';
import { SecretBox } from '../../src/accounts/secret-box.js';
import { AccountDisabledError } from '../../src/accounts/stored-account.js';
import { createApp } from '../../src/app.js';
import { registryOf } from '../../src/commands/account-options.js';
import { loadConfig } from '../../src/config/load-config.js';
import { readPartner } from '../../src/config/partner.js';
import { parseSecretKeys, SecretKeys } from '../../src/config/secret-keys.js';
import type { PartnerConfig } from '../../src/config/types.js';
import { ConfigError, ReauthorizationRequiredError } from '../../src/errors.js';
import { main } from '../../src/main.js';
import { runOnce } from '../../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { Secret } from '../../src/secret.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import type { Database } from '../../src/warehouse/tables.js';
import { runAccounts } from '../support/accounts-cli.js';
import { captureIo } from '../support/capture-io.js';
import { captureLogger } from '../support/capture-logger.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { tokenProviderOf } from '../support/partner-harness.js';
import {
  clearRedisPrefix,
  newRedisPrefix,
  PARTNER_APP_ENV,
  simulatorEnv,
} from '../support/test-env.js';

const SECRET_KEY = randomBytes(32).toString('base64');
const counts = (n: number) => ({ jobs: n, job_posts: n, tracking_links: n });

let sim: ApiSimulator;
let t: TestDatabase;
let env: Record<string, string>;
let partner: PartnerConfig;
let keys: SecretKeys;
let box: SecretBox;
const pools: Kysely<Database>[] = [];

beforeEach(async () => {
  sim = await ApiSimulator.start({
    clientSecrets: ['sync-secret'],
    dataset: { counts: counts(20) },
    accounts: ['acme', 'beta', 'gamma'].map((name, i) => ({
      name,
      dataset: { seed: 31 + i, idOffset: (i + 1) * 1_000_000, counts: counts(25) },
    })),
  });
  t = await createTestDatabase(inject('databaseUrl'));
  await migrateAll(t.db);
  env = {
    DATABASE_URL: t.url,
    REDIS_URL: inject('redisUrl'),
    HIRESYNC_REDIS_PREFIX: newRedisPrefix(),
    HIRESYNC_SECRET_KEY: SECRET_KEY,
    ...simulatorEnv(sim),
    ...PARTNER_APP_ENV,
    HIRESYNC_RUN_BACKOFF: '200ms',
    HIRESYNC_RUN_ATTEMPTS: '3',
    HIRESYNC_PER_PAGE: '10',
  };
  partner = readPartner(env).partner as PartnerConfig;
  const parsed = parseSecretKeys(SECRET_KEY);
  if (!('keys' in parsed)) throw new Error(parsed.problem);
  keys = new SecretKeys(parsed.keys);
  box = new SecretBox(parsed.keys);
});

afterEach(async () => {
  await Promise.all(pools.splice(0).map((db) => db.destroy()));
  await sim.close();
  await t.drop();
  await clearRedisPrefix(env);
});

/** The account store a process of this deployment would have, on a pool of its own when asked. */
function storeOf(db: Kysely<Database> = t.db): AccountStore {
  return new AccountStore(db, keys, { partner });
}

/** Another process's pool on the test database. */
function otherPool(): Kysely<Database> {
  const db = createDatabase(t.url);
  pools.push(db);
  return db;
}

/** `hiresync accounts ARGV` in process. */
function accounts(argv: string[], input = '', overrides: Record<string, string> = {}) {
  return runAccounts({ ...env, ...overrides }, argv, input);
}

/** `hiresync accounts authorize ARGV` running in process: its exit, its output, and the URL it printed. */
function startAuthorize(argv: string[]) {
  const io = captureIo();
  const exit = main(['accounts', 'authorize', ...argv], env, io);
  const url = (async () => {
    for (let i = 0; i < 200; i += 1) {
      const match = /^(https?:\/\/\S+)$/m.exec(io.out());
      if (match?.[1]) return new URL(match[1]);
      if ((await Promise.race([exit, sleep(50)])) !== undefined) break;
    }
    throw new Error(`no authorize URL printed: ${io.out()} ${io.err()}`);
  })();
  return { io, exit, url };
}

/** The customer approves in the browser: the authorize URL, and the callback it redirects to. */
async function approve(url: URL, account: string): Promise<URL> {
  const request = new URL(url);
  request.searchParams.set('sim_account', account);
  const res = await fetch(request, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location') as string);
}

/** The browser follows the redirect to the loopback callback. */
async function callback(location: URL): Promise<{ status: number; text: string }> {
  const res = await fetch(location);
  return { status: res.status, text: await res.text() };
}

/** Authorizes `account` through `accounts authorize` in process; returns its output. */
async function authorizeThroughBrowser(account: string) {
  const run = startAuthorize([account, '--port', '0', '--timeout', '30s']);
  const location = await approve(await run.url, account);
  const page = await callback(location);
  const code = await run.exit;
  return { code, page, stdout: run.io.out(), stderr: run.io.err(), location };
}

/** One refresh grant of `account`, as a run's token provider sends it: through the vault of `store`. */
async function refresh(store: AccountStore, account: string): Promise<string> {
  return tokenProviderOf(await store.resolve(account)).getToken();
}

interface TokenRow {
  token: string;
  authorized_at: string;
  refreshed_at: string | null;
  refresh_started_at: string | null;
  reauthorization_reason: string | null;
  state: string;
  secret: string | null;
}

async function tokenRow(account: string): Promise<TokenRow | undefined> {
  const { rows } = await sql<TokenRow>`
    select t.*, a.state, a.secret from hiresync.refresh_tokens t
    join hiresync.accounts a on a.name = t.account where t.account = ${account}`.execute(t.db);
  return rows[0];
}

/** Every value the control schema holds, as text: a plaintext secret must be in none. */
async function controlText(): Promise<string> {
  const { rows } = await sql<{ row: string }>`
    select row_to_json(a)::text as row from hiresync.accounts a
    union all select row_to_json(r)::text from hiresync.refresh_tokens r`.execute(t.db);
  return rows.map((r) => r.row).join('\n');
}

/** A refresh token of `account` obtained outside hiresync (the partner's own flow). */
async function refreshTokenFor(account: string): Promise<string> {
  const redirectUri = 'http://127.0.0.1:53682/callback';
  const authorize = new URL(sim.authorizeUrl);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: 'partner-client',
    redirect_uri: redirectUri,
    state: 'st',
    sim_account: account,
  }))
    authorize.searchParams.set(k, v);
  const location = new URL(
    (await fetch(authorize, { redirect: 'manual' })).headers.get('location') as string,
  );
  const res = await fetch(`${sim.authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from('partner-client:partner-secret').toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code') as string,
      redirect_uri: redirectUri,
    }).toString(),
  });
  return ((await res.json()) as { refresh_token: string }).refresh_token;
}

describe('hiresync accounts authorize', () => {
  it('prints the authorize URL, redeems the code from the loopback callback and registers the account with its refresh token sealed', async () => {
    const result = await authorizeThroughBrowser('acme');
    expect(result.code, result.stderr).toBe(0);
    expect(result.page).toEqual({ status: 200, text: 'authorized; you can close this page\n' });
    expect(result.stdout).toContain('authorized account acme');

    const printed = new URL(/^(https?:\/\/\S+)$/m.exec(result.stdout)?.[1] as string);
    expect(printed.origin + printed.pathname).toBe(sim.authorizeUrl);
    const query = printed.searchParams;
    expect(query.get('response_type')).toBe('code');
    expect(query.get('client_id')).toBe('partner-client');
    expect(query.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(Buffer.from(query.get('state') as string, 'base64url')).toHaveLength(32);
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(query.has('scope')).toBe(false);

    const row = await tokenRow('acme');
    expect(row).toMatchObject({ state: 'enabled', secret: null, refresh_started_at: null });
    expect(row?.token.startsWith('hs1.')).toBe(true);
    const plaintext = box.open(row?.token as string, refreshTokenPurpose('acme'));
    const code = result.location.searchParams.get('code') as string;
    for (const secret of [plaintext, code]) {
      expect(await controlText()).not.toContain(secret);
      expect(result.stdout + result.stderr).not.toContain(secret);
    }
    expect(sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 1, invalidGrants: 0 });

    // Its schema is migrated, and the stored token works.
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from information_schema.tables
      where table_schema = 'acme' and table_name = 'sync_runs'`.execute(t.db);
    expect(rows[0]?.n).toBe(1);
    await refresh(storeOf(), 'acme');
    expect(sim.partnerStats('acme')).toMatchObject({ refreshes: 1, invalidGrants: 0 });
  });

  it('sends a PKCE challenge: its code, taken on the way back, is refused without the verifier, and the command then redeems it', async () => {
    const run = startAuthorize(['acme', '--port', '0', '--timeout', '30s']);
    const location = await approve(await run.url, 'acme');
    const taken = await fetch(`${sim.authUrl}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('partner-client:partner-secret').toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: location.searchParams.get('code') as string,
        redirect_uri: `${location.origin}${location.pathname}`,
        code_verifier: 'a-guess-at-the-verifier-that-is-long-enough-43',
      }).toString(),
    });
    expect(taken.status).toBe(400);
    expect(((await taken.json()) as { error_description: string }).error_description).toBe(
      'code_verifier does not match the code_challenge',
    );
    expect((await callback(location)).status).toBe(200);
    expect(await run.exit, run.io.err()).toBe(0);
    expect(sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 1 });
  });

  it('answers a callback with another or no state 400 "state mismatch" and keeps waiting for the right one', async () => {
    const run = startAuthorize(['acme', '--port', '0', '--timeout', '30s']);
    const location = await approve(await run.url, 'acme');
    for (const state of ['forged-state', undefined]) {
      const wrong = new URL(location);
      if (state === undefined) wrong.searchParams.delete('state');
      else wrong.searchParams.set('state', state);
      const page = await callback(wrong);
      expect(page.status).toBe(400);
      expect(page.text).toContain('state mismatch');
    }
    // A forged error does not end the wait either.
    const forgedError = new URL(location.origin + location.pathname);
    forgedError.searchParams.set('error', 'access_denied');
    expect((await callback(forgedError)).status).toBe(400);
    expect(await Promise.race([run.exit, sleep(300).then(() => 'waiting')])).toBe('waiting');
    expect(await storeOf().get('acme')).toBeUndefined();

    expect((await callback(location)).status).toBe(200);
    expect(await run.exit).toBe(0);
    expect(run.io.err()).toContain('ignored a callback whose state does not match');
    expect((await storeOf().get('acme'))?.state).toBe('enabled');
  });

  it('gives up with exit 1 when no authorization arrives within --timeout', async () => {
    const run = startAuthorize(['acme', '--port', '0', '--timeout', '300ms']);
    await run.url;
    expect(await run.exit).toBe(1);
    expect(run.io.err()).toContain('no authorization arrived within 1 s');
    expect(await storeOf().get('acme')).toBeUndefined();
  });

  it('exits 1 with the error when the customer denies the authorization', async () => {
    sim.denyNextAuthorization();
    const run = startAuthorize(['acme', '--port', '0', '--timeout', '30s']);
    const location = await approve(await run.url, 'acme');
    expect(location.searchParams.get('error')).toBe('access_denied');
    const page = await callback(location);
    expect(page.status).toBe(400);
    expect(await run.exit).toBe(1);
    expect(run.io.err()).toContain('the authorization was refused (access_denied');
    expect(await storeOf().get('acme')).toBeUndefined();
  });

  it("blames a registered account's own auth URL, and 'accounts update NAME --auth-url', not HIRESYNC_AUTH_URL, when its token endpoint is missing", async () => {
    const missing = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    });
    await new Promise<void>((r) => missing.listen(0, '127.0.0.1', () => r()));
    try {
      const authUrl = `http://127.0.0.1:${(missing.address() as { port: number }).port}/oauth`;
      const added = await accounts(
        ['add', 'acme', '--partner', '--auth-url', authUrl, '--no-test'],
        'refresh-token-1\n',
      );
      expect(added.code, added.stderr).toBe(0);
      const run = startAuthorize(['acme', '--port', '0', '--timeout', '30s']);
      const request = await run.url;
      // The browser comes back with a code, as the authorization server would send it.
      const back = new URL(request.searchParams.get('redirect_uri') as string);
      back.searchParams.set('code', 'some-code');
      back.searchParams.set('state', request.searchParams.get('state') as string);
      await callback(back);
      expect(await run.exit).toBe(1);
      expect(run.io.err()).toContain(
        "no token endpoint at /oauth/token (404): check account acme's auth URL ('hiresync accounts update acme --auth-url URL' changes it)",
      );
      expect(run.io.err()).not.toContain('HIRESYNC_AUTH_URL');
    } finally {
      await new Promise<void>((r) => missing.close(() => r()));
    }
  });

  it('refuses, with exit 1 and before printing a URL, an account that is not a partner account', async () => {
    const added = await accounts(['add', 'beta', '--api-key', '--no-test'], 'some-api-key\n');
    expect(added.code, added.stderr).toBe(0);
    const result = await accounts(['authorize', 'beta', '--port', '0']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('not partner authorization');
    expect(result.stdout).toBe('');
  });
});

describe('hiresync accounts add --partner', () => {
  it('registers a partner account from a refresh token on standard input, sealed, with its schema migrated', async () => {
    const token = await refreshTokenFor('beta');
    // Untested: the refresh token given is what is stored (a test would rotate it;
    // accounts-test.test.ts covers that).
    const result = await accounts(['add', 'beta', '--partner', '--no-test'], `${token}\n`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('added account beta (partner authorization, schema beta)');
    expect(result.stdout + result.stderr).not.toContain(token);
    expect(await controlText()).not.toContain(token);
    const row = await tokenRow('beta');
    expect(row?.token.startsWith('hs1.')).toBe(true);
    expect(box.open(row?.token as string, refreshTokenPurpose('beta'))).toBe(token);
    expect((await storeOf().get('beta'))?.credentialNamespace).toMatch(/^[0-9a-f]{32}$/);

    await refresh(storeOf(), 'beta');
    expect(sim.partnerStats('beta')).toMatchObject({ refreshes: 1, invalidGrants: 0 });
  });

  it('needs the partner app: exit 2 naming HIRESYNC_PARTNER_CLIENT_ID and _SECRET', async () => {
    const result = await accounts(['add', 'beta', '--partner'], 'token\n', {
      HIRESYNC_PARTNER_CLIENT_ID: '',
      HIRESYNC_PARTNER_CLIENT_SECRET: '',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('HIRESYNC_PARTNER_CLIENT_ID: is required');
    expect(result.stderr).toContain('HIRESYNC_PARTNER_CLIENT_SECRET: is required');
  });
});

describe('PostgresRefreshTokenVault', () => {
  it('commits each rotated refresh token before handing out the access token: successive refreshes never reuse one', async () => {
    await storeOf().addPartner(
      'acme',
      sim.url,
      sim.authUrl,
      new Secret(await refreshTokenFor('acme')),
    );
    const sealed: string[] = [];
    const access: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      access.push(await refresh(storeOf(), 'acme'));
      const row = await tokenRow('acme');
      sealed.push(box.open(row?.token as string, refreshTokenPurpose('acme')));
      expect(row).toMatchObject({ refresh_started_at: null, reauthorization_reason: null });
      expect(row?.refreshed_at).not.toBeNull();
    }
    expect(new Set(sealed).size).toBe(5);
    expect(new Set(access).size).toBe(5);
    expect(sim.partnerStats('acme')).toMatchObject({ refreshes: 5, invalidGrants: 0 });
  });

  it('runs one refresh at a time per account across two processes: no refresh token is presented twice', async () => {
    await storeOf().addPartner(
      'acme',
      sim.url,
      sim.authUrl,
      new Secret(await refreshTokenFor('acme')),
    );
    const stores = [storeOf(otherPool()), storeOf(otherPool())];
    await Promise.all(
      stores.flatMap((store) => Array.from({ length: 4 }, () => refresh(store, 'acme'))),
    );
    expect(sim.partnerStats('acme')).toMatchObject({ refreshes: 8, invalidGrants: 0 });
    expect((await tokenRow('acme'))?.state).toBe('enabled');
  });

  it('puts the account in needs_reauthorization with the reason once the customer revoked the authorization', async () => {
    await storeOf().addPartner(
      'acme',
      sim.url,
      sim.authUrl,
      new Secret(await refreshTokenFor('acme')),
    );
    await refresh(storeOf(), 'acme');
    sim.revokeAuthorization('acme');
    const refused = await refresh(storeOf(), 'acme').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ReauthorizationRequiredError);
    expect((refused as Error).message).toContain("'hiresync accounts authorize acme'");
    const row = await tokenRow('acme');
    expect(row).toMatchObject({ state: 'needs_reauthorization', refresh_started_at: null });
    expect(row?.reauthorization_reason).toContain('its refresh token was refused');
    expect(row?.reauthorization_reason).not.toContain('interrupted');
    // Its runs are skipped from now on, with what to do.
    const skipped = await storeOf()
      .resolve('acme')
      .catch((error: unknown) => error);
    expect(skipped).toBeInstanceOf(AccountDisabledError);
    expect((skipped as Error).message).toContain("run 'hiresync accounts authorize acme'");
  });

  it('keeps refresh_started_at when a refresh response is lost, and says the rotated token was lost when the next refresh is refused', async () => {
    await storeOf().addPartner(
      'acme',
      sim.url,
      sim.authUrl,
      new Secret(await refreshTokenFor('acme')),
    );
    sim.dropNextRefreshResponse('acme');
    await expect(refresh(storeOf(), 'acme')).rejects.toThrow();
    const interrupted = await tokenRow('acme');
    expect(interrupted?.refresh_started_at).not.toBeNull();
    expect(interrupted?.state).toBe('enabled');
    expect((await storeOf().get('acme'))?.partner?.refreshInterrupted).toBe(true);

    const refused = await refresh(storeOf(), 'acme').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ReauthorizationRequiredError);
    const row = await tokenRow('acme');
    expect(row).toMatchObject({ state: 'needs_reauthorization', refresh_started_at: null });
    expect(row?.reauthorization_reason).toContain(
      'a refresh was interrupted after the token endpoint rotated the token; the rotated token was lost',
    );
    expect(sim.partnerStats('acme')).toMatchObject({
      refreshResponsesDropped: 1,
      invalidGrants: 1,
    });
  });

  it('recovers from an interrupted refresh that the token endpoint had not answered: the stored token still works', async () => {
    await storeOf().addPartner(
      'acme',
      sim.url,
      sim.authUrl,
      new Secret(await refreshTokenFor('acme')),
    );
    // A process died after marking its refresh, before its request reached the endpoint.
    await sql`update hiresync.refresh_tokens set refresh_started_at = now()`.execute(t.db);
    await refresh(storeOf(), 'acme');
    expect(await tokenRow('acme')).toMatchObject({ state: 'enabled', refresh_started_at: null });
    expect(sim.partnerStats('acme')).toMatchObject({ refreshes: 1, invalidGrants: 0 });
  });
});

describe('AccountStore: partner accounts', () => {
  it('lists the enabled partner accounts whose token was not used within the keep-alive', async () => {
    for (const name of ['acme', 'beta', 'gamma'])
      await storeOf().addPartner(
        name,
        sim.url,
        sim.authUrl,
        new Secret(await refreshTokenFor(name)),
      );
    const store = storeOf();
    expect(await store.partnerAccountsDue(3_600_000)).toEqual([]);
    await sql`update hiresync.refresh_tokens set authorized_at = now() - interval '2 hours'`.execute(
      t.db,
    );
    await sql`update hiresync.refresh_tokens set refreshed_at = now() - interval '30 minutes' where account = 'beta'`.execute(
      t.db,
    );
    await store.setState('gamma', 'disabled');
    expect(await store.partnerAccountsDue(3_600_000)).toEqual(['acme']);
    expect(await store.partnerAccountsDue(60_000)).toEqual(['acme', 'beta']);
    expect(await store.statesByAccount()).toEqual(
      new Map([
        ['acme', 'enabled'],
        ['beta', 'enabled'],
        ['gamma', 'disabled'],
      ]),
    );
  });

  it('resolves a partner account only with the partner app: without it, a ConfigError naming the variables', async () => {
    await storeOf().addPartner(
      'acme',
      sim.url,
      sim.authUrl,
      new Secret(await refreshTokenFor('acme')),
    );
    const resolved = await storeOf().resolve('acme');
    expect(resolved.auth).toMatchObject({
      mode: 'partner',
      tokenUrl: `${sim.authUrl}/token`,
      clientId: 'partner-client',
      account: 'acme',
    });
    expect(resolved.refreshTokens).toBeDefined();
    const error = await new AccountStore(t.db, keys).resolve('acme').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('HIRESYNC_PARTNER_CLIENT_ID');
    expect((error as Error).message).toContain('HIRESYNC_PARTNER_CLIENT_SECRET');
  });

  it('rekey re-seals refresh tokens with the first key too', async () => {
    const token = await refreshTokenFor('acme');
    await storeOf().addPartner('acme', sim.url, sim.authUrl, new Secret(token));
    const newKey = randomBytes(32);
    const rotated = new SecretKeys([
      newKey,
      ...(parseSecretKeys(SECRET_KEY) as { keys: Buffer[] }).keys,
    ]);
    expect(await new AccountStore(t.db, rotated, { partner }).rekey()).toEqual({
      resealed: 1,
      current: 0,
    });
    const sealed = (await tokenRow('acme'))?.token as string;
    expect(new SecretBox(rotated.reveal()).isCurrent(sealed)).toBe(true);
    expect(new SecretBox([newKey]).open(sealed, refreshTokenPurpose('acme'))).toBe(token);
  });
});

describe('partner accounts end to end', () => {
  it('syncs a partner account, fails its runs without retry once the authorization is revoked, and syncs again with its data kept after accounts authorize', async () => {
    expect((await authorizeThroughBrowser('acme')).code).toBe(0);
    const config = loadConfig(env, RESOURCE_NAMES);
    const log = captureLogger('silent');
    const sync = async () => {
      const app = createApp(config, log.logger, {
        defaultMetrics: false,
        registry: registryOf(config),
      });
      try {
        return await runOnce(app, [{ account: 'acme', resource: 'jobs' }], 'auto');
      } finally {
        await app.close();
      }
    };
    const jobsOf = async () =>
      (
        await t.db
          .withSchema('acme')
          .selectFrom('jobs')
          .select('id')
          .where('deleted_at', 'is', null)
          .execute()
      ).length;

    expect((await sync())[0]).toMatchObject({ ok: true });
    const synced = await jobsOf();
    expect(synced).toBe(25);

    sim.revokeAuthorization('acme');
    const failed = (await sync())[0];
    expect(failed).toMatchObject({ ok: false });
    expect(failed && !failed.ok && failed.error).toContain('hiresync accounts authorize acme');
    expect(sim.partnerStats('acme').invalidGrants).toBe(1);

    const listed = await accounts(['list']);
    expect(listed.stdout).toMatch(/^acme\s+partner\s+acme\s+needs_reauthorization/m);
    expect(listed.stdout).toContain(
      'acme needs reauthorization: its refresh token was refused (token request to /oauth/token was refused (400): authorization revoked)',
    );
    expect(listed.stdout).toContain("run 'hiresync accounts authorize acme'");
    const enable = await accounts(['enable', 'acme']);
    expect(enable.code).toBe(1);
    expect(enable.stderr).toContain("run 'hiresync accounts authorize acme'");
    expect((await tokenRow('acme'))?.state).toBe('needs_reauthorization');

    const again = await authorizeThroughBrowser('acme');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('authorized account acme');
    expect(await tokenRow('acme')).toMatchObject({
      state: 'enabled',
      reauthorization_reason: null,
      refresh_started_at: null,
    });
    expect(await jobsOf()).toBe(synced);
    expect((await sync())[0]).toMatchObject({ ok: true });
    expect(await jobsOf()).toBe(25);
    expect(sim.partnerStats('acme').invalidGrants).toBe(1);
  });
});
