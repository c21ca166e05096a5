import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createConnectLink } from '../../src/accounts/connect-links.js';
import { refreshTokenPurpose } from '../../src/accounts/refresh-token-vault.js';
import { SecretBox } from '../../src/accounts/secret-box.js';
import { connectRoutes } from '../../src/http/connect-routes.js';
import { runOnce } from '../../src/queue/run-once.js';
import { Secret } from '../../src/secret.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { type ConnectHarness, startConnectHarness } from '../support/connect-harness.js';
import { freePort } from '../support/free-port.js';
import { waitFor } from '../support/lifecycle.js';
import { grantRefreshToken } from '../support/partner-grant.js';
import { tokenProviderOf } from '../support/partner-harness.js';
import { type CliProcess, spawnCli } from '../support/run-cli.js';

let h: ConnectHarness;
let worker: CliProcess | undefined;
afterEach(async () => {
  await worker?.kill();
  worker = undefined;
  await h?.close();
});

/** The page a response carries, with the headers every page must send. */
async function page(res: Response): Promise<{ status: number; text: string }> {
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'; /);
  return { status: res.status, text: await res.text() };
}

/** Opens `link` on the public URL's worker: the authorize URL it redirects to. */
async function open(link: URL): Promise<URL> {
  const res = await h.get(link);
  expect(res.status, await res.clone().text()).toBe(302);
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  return new URL(res.headers.get('location') as string);
}

/** The sealed and opened refresh token of `account`, and its account's state. */
async function tokenOf(account: string) {
  const { rows } = await sql<{ token: string; state: string; reason: string | null }>`
    select t.token, a.state, t.reauthorization_reason as reason from hiresync.refresh_tokens t
    join hiresync.accounts a on a.name = t.account where t.account = ${account}`.execute(
    h.database.db,
  );
  const row = rows[0];
  if (!row) return undefined;
  const box = new SecretBox(h.config.secretKeys?.reveal() ?? []);
  return { ...row, plaintext: box.open(row.token, refreshTokenPurpose(account)) };
}

/** One full run of `account`'s jobs, as a worker of the deployment runs it. */
async function syncJobs(account: string) {
  const [result] = await runOnce(h.workers[1].app, [{ account, resource: 'jobs' }], 'full');
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from hiresync.data_jobs
    where account = ${account} and deleted_at is null`.execute(h.database.db);
  return { result, rows: rows[0]?.n ?? 0 };
}

describe('connect links end to end', () => {
  it('connects a new partner account: invite, the link on one worker, the authorize endpoint, the callback on another; the account is registered with its token sealed, migrated, scheduled, and syncs', async () => {
    h = await startConnectHarness();
    const invited = await h.invite(['acme']);
    expect(invited.code, invited.stderr).toBe(0);
    const link = invited.link as URL;
    expect(link.origin).toBe(h.publicUrl);
    expect(invited.stdout).toContain('connect link for account acme, single use, valid until');
    const token = link.pathname.slice('/connect/'.length);

    const authorize = await open(link);
    expect(authorize.origin + authorize.pathname).toBe(h.sim.authorizeUrl);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'partner-client',
      redirect_uri: `${h.publicUrl}/oauth/callback`,
    });
    const state = authorize.searchParams.get('state') as string;
    expect(Buffer.from(state, 'base64url')).toHaveLength(32);
    expect(h.connected).toEqual([]);

    const callback = await h.approve(authorize, 'acme');
    expect(callback.origin + callback.pathname).toBe(`${h.publicUrl}/oauth/callback`);
    const code = callback.searchParams.get('code') as string;
    // The load balancer sends the browser's return to the other worker.
    const connected = await page(await h.get(h.at(callback, h.workers[1])));
    expect(connected.status, connected.text).toBe(200);
    expect(connected.text).toContain('The account acme is connected');
    expect(connected.text).toContain('You can close this page.');
    for (const secret of [code, state, token]) expect(connected.text).not.toContain(secret);

    const stored = await tokenOf('acme');
    expect(stored).toMatchObject({ state: 'enabled', reason: null });
    expect(stored?.token.startsWith('hs1.')).toBe(true);
    const everything = await h.snapshot();
    for (const secret of [stored?.plaintext as string, code, state, token]) {
      expect(everything).not.toContain(secret);
    }
    expect((await h.store.get('acme'))?.authMode).toBe('partner');
    const { rows: links } = await sql<{ used: boolean }>`
      select used_at is not null as used from hiresync.connect_links`.execute(h.database.db);
    expect(links).toEqual([{ used: true }]);
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 1, invalidGrants: 0 });

    // Scheduled at once by the worker that answered, not at the next check.
    expect(h.connected).toEqual(['acme']);
    const schedulers = (await h.workers[0].app.queue.getJobSchedulers()).map((s) => s.key ?? s.id);
    expect(schedulers).toEqual(expect.arrayContaining(['incremental:acme:jobs', 'full:acme:jobs']));

    const { result, rows } = await syncJobs('acme');
    expect(result).toMatchObject({ ok: true });
    expect(rows).toBe(25);
    for (const worker of h.workers) {
      for (const secret of [code, state, token]) expect(worker.log.text()).not.toContain(secret);
    }
  });

  it('re-authorizes an account in needs_reauthorization through a link: its token is replaced, it is enabled again and keeps its data', async () => {
    h = await startConnectHarness();
    await h.store.addPartner(
      'acme',
      h.sim.url,
      h.sim.authUrl,
      new Secret(await grantRefreshToken(h.sim)),
    );
    await migrateAll(h.database.db);
    expect((await syncJobs('acme')).rows).toBe(25);
    h.sim.revokeAuthorization('acme');
    await expect(tokenProviderOf(await h.store.resolve('acme')).getToken()).rejects.toThrow(
      'needs re-authorizing',
    );
    const before = await tokenOf('acme');
    expect(before?.state).toBe('needs_reauthorization');

    const invited = await h.invite(['acme']);
    expect(invited.code, invited.stderr).toBe(0);
    const callback = await h.approve(await open(invited.link as URL), 'acme');
    const connected = await page(await h.get(callback));
    expect(connected.status, connected.text).toBe(200);
    expect(connected.text).toContain('hiresync is authorized again to read the account acme');

    const after = await tokenOf('acme');
    expect(after).toMatchObject({ state: 'enabled', reason: null });
    expect(after?.plaintext).not.toBe(before?.plaintext);
    expect(h.connected).toEqual(['acme']);
    const { result, rows } = await syncJobs('acme');
    expect(result).toMatchObject({ ok: true });
    expect(rows).toBe(25);
  });

  it("hiresync worker serves the links at HIRESYNC_PUBLIC_URL and runs a connected account's first sync at once (built CLI)", async () => {
    h = await startConnectHarness();
    const port = await freePort();
    const env = {
      ...h.env,
      HIRESYNC_HTTP_PORT: String(port),
      HIRESYNC_PUBLIC_URL: `http://127.0.0.1:${port}/`,
    };
    worker = spawnCli(['worker'], { ...env, LOG_LEVEL: 'info' });
    await waitFor(async () => worker?.stdout().includes('worker started'), 20_000, 50);
    const invited = await h.invite(['acme'], env);
    expect(invited.code, invited.stderr).toBe(0);
    expect(invited.link?.origin).toBe(`http://127.0.0.1:${port}`);
    const callback = await h.approve(await open(invited.link as URL), 'acme');
    expect(callback.origin).toBe(`http://127.0.0.1:${port}`);
    const connected = await page(await h.get(callback));
    expect(connected.status, connected.text).toBe(200);

    const runs = async () => {
      const { rows } = await sql<{ outcome: string; records: string }>`
        select outcome, records from hiresync.data_sync_runs
        where account = 'acme' and outcome <> 'running'`.execute(h.database.db);
      return rows;
    };
    const [run] = await waitFor(async () => {
      const done = await runs();
      return done.length > 0 && done;
    }, 30_000);
    expect(run).toMatchObject({ outcome: 'succeeded' });
    worker.child.kill('SIGTERM');
    expect(await worker.exit).toBe(0);
    expect(worker.stdout() + worker.stderr()).not.toContain(
      invited.link?.pathname.slice('/connect/'.length),
    );
  });

  it('behind a reverse proxy: HIRESYNC_PUBLIC_URL decides the redirect URI, never X-Forwarded-*, and its path is served passed on or stripped', async () => {
    h = await startConnectHarness();
    const publicUrl = 'https://hiresync.example.com/sync';
    const { url } = await createConnectLink(h.database.db, {
      account: 'acme',
      expiresInMs: 3_600_000,
      publicUrl,
      secretKeys: h.config.secretKeys,
      partner: h.config.partner,
      urls: { baseUrl: h.sim.url, authUrl: h.sim.authUrl },
    });
    expect(url).toMatch(/^https:\/\/hiresync\.example\.com\/sync\/connect\/[\w-]+\.[\w-]+$/);
    const route = connectRoutes({
      db: h.workers[0].app.db,
      publicUrl,
      secretKeys: h.config.secretKeys as NonNullable<typeof h.config.secretKeys>,
      partner: h.config.partner as NonNullable<typeof h.config.partner>,
      authorizeEndpoint: () => h.sim.authorizeUrl,
      logger: h.workers[0].log.logger,
    });
    const proxied = createServer((req, res) => void route(req, res));
    await new Promise<void>((resolve) => proxied.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(proxied.address() as AddressInfo).port}`;
      const path = new URL(url).pathname;
      for (const forwarded of [path, path.replace(/^\/sync/, '')]) {
        const res = await fetch(`${origin}${forwarded}`, {
          redirect: 'manual',
          headers: {
            'x-forwarded-host': 'evil.example',
            'x-forwarded-proto': 'http',
            forwarded: 'host=evil.example;proto=http',
          },
        });
        expect(res.status).toBe(302);
        // The cookie binding the browser: Secure (https), for the public URL's callback path only.
        expect(res.headers.get('set-cookie')).toMatch(
          /^hiresync_connect_[0-9a-f]{16}=[\w-]{43}; Max-Age=900; Path=\/sync\/oauth\/callback; HttpOnly; SameSite=Lax; Secure$/,
        );
        const location = new URL(res.headers.get('location') as string);
        expect(location.searchParams.get('redirect_uri')).toBe(
          'https://hiresync.example.com/sync/oauth/callback',
        );
      }
    } finally {
      await new Promise((resolve) => proxied.close(resolve));
    }
  });

  it('refuses to invite an account that is not a partner account (exit 1, no link made)', async () => {
    h = await startConnectHarness();
    await h.store.add({
      name: 'beta',
      baseUrl: h.sim.url,
      auth: { mode: 'api_key', apiKey: new Secret('some-api-key') },
    });
    const invited = await h.invite(['beta']);
    expect(invited.code).toBe(1);
    expect(invited.stderr).toContain(
      'account beta authenticates with an API key, not partner authorization: a connect link applies to partner accounts only',
    );
    expect(invited.link).toBeUndefined();
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from hiresync.connect_links`.execute(h.database.db);
    expect(rows[0]?.n).toBe(0);
  });

  it('needs HIRESYNC_PUBLIC_URL, HIRESYNC_SECRET_KEY and the partner app: exit 2 naming each, before connecting', async () => {
    h = await startConnectHarness();
    const invited = await h.invite(['acme'], {
      HIRESYNC_PUBLIC_URL: '',
      HIRESYNC_SECRET_KEY: '',
      HIRESYNC_PARTNER_CLIENT_ID: '',
      HIRESYNC_PARTNER_CLIENT_SECRET: '',
      DATABASE_URL: 'postgres://127.0.0.1:1/nowhere',
    });
    expect(invited.code).toBe(2);
    for (const variable of [
      'HIRESYNC_PUBLIC_URL: is required to make a connect link',
      'HIRESYNC_SECRET_KEY: is required to sign a connect link',
      'HIRESYNC_PARTNER_CLIENT_ID: is required to make a connect link',
      'HIRESYNC_PARTNER_CLIENT_SECRET: is required to make a connect link',
    ]) {
      expect(invited.stderr).toContain(variable);
    }
    const plain = await h.invite(['acme'], { HIRESYNC_PUBLIC_URL: 'http://hiresync.example.com' });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain(
      'HIRESYNC_PUBLIC_URL: must use https:// (plain http is allowed only for loopback hosts)',
    );
    const long = await h.invite(['acme', '--expires', '31d']);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('--expires must be a duration from 1m to 30d');
  });
});
