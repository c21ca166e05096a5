import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createConnectLink } from '../../src/accounts/connect-links.js';
import { newConnectToken } from '../../src/accounts/connect-token.js';
import { SecretKeys } from '../../src/config/secret-keys.js';
import type { PartnerConfig } from '../../src/config/types.js';
import { connectRoutes } from '../../src/http/connect-routes.js';
import { main } from '../../src/main.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { captureIo } from '../support/capture-io.js';
import { captureLogger } from '../support/capture-logger.js';
import { type ConnectHarness, startConnectHarness } from '../support/connect-harness.js';

let h: ConnectHarness;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await h?.close();
});

/** The page a response carries (status and text), checking the headers every page sends. */
async function page(res: Response): Promise<{ status: number; text: string }> {
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  return { status: res.status, text: await res.text() };
}

/** A new link for `account` (`accounts invite`). */
async function invite(account = 'acme'): Promise<URL> {
  const invited = await h.invite([account]);
  expect(invited.code, invited.stderr).toBe(0);
  return invited.link as URL;
}

/** Opens `link`: the authorize URL the worker redirects to. */
async function open(link: URL): Promise<URL> {
  const res = await h.get(link);
  expect(res.status, await res.clone().text()).toBe(302);
  return new URL(res.headers.get('location') as string);
}

/** Opens `link` and approves at the simulator: the callback URL the browser comes back to. */
async function approved(link: URL, account = 'acme'): Promise<URL> {
  return h.approve(await open(link), account);
}

async function count(table: 'connect_states' | 'connect_links'): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from ${sql.table(`hiresync.${table}`)}`.execute(h.database.db);
  return rows[0]?.n ?? -1;
}

/** Makes `table`'s rows expire (or have expired) a second ago. */
async function expire(table: 'connect_states' | 'connect_links'): Promise<void> {
  await sql`update ${sql.table(`hiresync.${table}`)} set expires_at = now() - interval '1 second'`.execute(
    h.database.db,
  );
}

/** A bare HTTP server answering with `route` alone; its origin. */
async function serve(route: ReturnType<typeof connectRoutes>): Promise<string> {
  const server: Server = createServer((req, res) => {
    void route(req, res).then((answered) => {
      if (!answered) res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What a worker of the deployment with `keys` as HIRESYNC_SECRET_KEY, on `databaseUrl`, answers with. */
async function workerWith(keys: Buffer[], databaseUrl = h.database.url): Promise<string> {
  const db = createDatabase(databaseUrl, { max: 2 });
  cleanups.push(() => db.destroy());
  return serve(
    connectRoutes({
      db,
      publicUrl: h.publicUrl,
      secretKeys: new SecretKeys(keys),
      partner: h.config.partner as PartnerConfig,
      authorizeEndpoint: () => h.sim.authorizeUrl,
      logger: captureLogger('silent').logger,
    }),
  );
}

describe('connect links: every failure says why and changes nothing', () => {
  it('refuses a used link and changes nothing', async () => {
    h = await startConnectHarness();
    const link = await invite();
    expect((await page(await h.get(await approved(link)))).status).toBe(200);
    const before = await h.snapshot();
    const states = await count('connect_states');

    const again = await page(await h.get(link));
    expect(again.status).toBe(410);
    expect(again.text).toContain('This link was used already');
    expect(again.text).toContain('this one connected the account acme on');
    expect(await h.snapshot()).toBe(before);
    expect(await count('connect_states')).toBe(states);
  });

  it('refuses an expired link and changes nothing', async () => {
    h = await startConnectHarness();
    const link = await invite();
    await expire('connect_links');
    const before = await h.snapshot();
    const refused = await page(await h.get(link));
    expect(refused.status).toBe(410);
    expect(refused.text).toContain('This link has expired');
    expect(refused.text).toContain('This connect link for the account acme was valid until');
    expect(await h.snapshot()).toBe(before);
    expect(await count('connect_states')).toBe(0);
  });

  it('refuses a forged token without asking Postgres, and opens a link signed with a key rotated to second place', async () => {
    h = await startConnectHarness();
    const link = await invite();
    const token = link.pathname.slice('/connect/'.length);
    const last = token.at(-1) === 'A' ? 'B' : 'A';
    const otherKey = randomBytes(32);
    const forgeries = [
      `${token.slice(0, -1)}${last}`,
      newConnectToken([otherKey]).token,
      'not-a-token',
      '',
    ];
    const before = await h.snapshot();
    for (const forged of forgeries) {
      const refused = await page(await h.get(`${h.publicUrl}/connect/${forged}`));
      expect(refused.status).toBe(404);
      expect(refused.text).toContain('This link is not valid');
    }
    // A worker whose database cannot be reached answers a forgery all the same.
    const unreachable = await workerWith(
      [...(h.config.secretKeys?.reveal() ?? [])],
      'postgres://postgres@127.0.0.1:1/nowhere',
    );
    for (const forged of forgeries) {
      const refused = await page(await h.get(`${unreachable}/connect/${forged}`));
      expect(refused.status).toBe(404);
    }
    expect(await h.snapshot()).toBe(before);
    expect(await count('connect_states')).toBe(0);

    // HIRESYNC_SECRET_KEY rotated (a new key first): the link still opens.
    const rotated = await workerWith([otherKey, ...(h.config.secretKeys?.reveal() ?? [])]);
    const res = await h.get(`${rotated}/connect/${token}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toContain(h.sim.authorizeUrl);
  });

  it('answers a callback with an unknown or no state 400 and changes nothing', async () => {
    h = await startConnectHarness();
    const link = await invite();
    const callback = await approved(link);
    const before = await h.snapshot();
    for (const state of [randomBytes(32).toString('base64url'), undefined]) {
      const forged = new URL(callback);
      if (state === undefined) forged.searchParams.delete('state');
      else forged.searchParams.set('state', state);
      const refused = await page(await h.get(forged));
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('This answer was not expected');
      expect(refused.text).toContain('whose state this hiresync never issued');
    }
    expect(await h.snapshot()).toBe(before);
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 0 });
    // The genuine answer still connects.
    expect((await page(await h.get(callback))).status).toBe(200);
  });

  it('refuses a replayed callback without sending its code again', async () => {
    h = await startConnectHarness();
    const callback = await approved(await invite());
    expect((await page(await h.get(callback))).status).toBe(200);
    const before = await h.snapshot();
    for (const worker of h.workers) {
      const replayed = await page(await h.get(h.at(callback, worker)));
      expect(replayed.status).toBe(409);
      expect(replayed.text).toContain('This answer was received already');
      expect(replayed.text).toContain(
        'The account was connected by its link; nothing more is needed.',
      );
    }
    expect(await h.snapshot()).toBe(before);
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 1, invalidGrants: 0 });
  });

  it("shows the authorization server's error, escaped, and leaves the link usable", async () => {
    h = await startConnectHarness();
    const link = await invite();
    const before = await h.snapshot();
    h.sim.denyNextAuthorization();
    const denied = await approved(link);
    expect(denied.searchParams.get('error')).toBe('access_denied');
    const refused = await page(await h.get(denied));
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('The authorization was not granted');
    expect(refused.text).toContain(
      'it answered: access_denied: the user denied the authorization.',
    );
    expect(await h.snapshot()).toBe(before);

    // Whatever the answer carries is shown as text, never as markup.
    const state = (await open(link)).searchParams.get('state') as string;
    const crafted = new URL(`${h.publicUrl}/oauth/callback`);
    crafted.searchParams.set('state', state);
    crafted.searchParams.set('error', 'invalid_request');
    crafted.searchParams.set('error_description', '<script>alert("x")</script> & <b>');
    const escaped = await page(await h.get(crafted));
    expect(escaped.status).toBe(400);
    expect(escaped.text).toContain(
      'invalid_request: &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;',
    );
    expect(escaped.text).not.toContain('<script>');
    expect(await h.snapshot()).toBe(before);

    expect((await page(await h.get(await approved(link)))).status).toBe(200);
  });

  it('a code taken on its way back is useless without the PKCE verifier: its exchange is refused, and the callback then connects', async () => {
    h = await startConnectHarness();
    const link = await invite();
    const callback = await approved(link);
    // Someone reads the code off the redirect and tries to redeem it first.
    const taken = await fetch(`${h.sim.authUrl}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('partner-client:partner-secret').toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') as string,
        redirect_uri: `${h.publicUrl}/oauth/callback`,
      }).toString(),
    });
    expect(taken.status).toBe(400);
    expect(await taken.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'code_verifier is required (PKCE)',
    });
    const connected = await page(await h.get(callback));
    expect(connected.status, connected.text).toBe(200);
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 1 });
  });

  it('says the code expired when it did before the callback, and changes nothing', async () => {
    h = await startConnectHarness({ authorizationCodeTtlSeconds: 0 });
    const link = await invite();
    const before = await h.snapshot();
    const refused = await page(await h.get(await approved(link)));
    expect(refused.status).toBe(502);
    expect(refused.text).toContain('invalid_grant: authorization code expired');
    expect(await h.snapshot()).toBe(before);
  });

  it('says the token endpoint could not be reached, and changes nothing', async () => {
    h = await startConnectHarness();
    const { url } = await createConnectLink(h.database.db, {
      account: 'beta',
      expiresInMs: 3_600_000,
      publicUrl: h.publicUrl,
      secretKeys: h.config.secretKeys,
      partner: h.config.partner,
      urls: { baseUrl: h.sim.url, authUrl: 'http://127.0.0.1:1/oauth' },
    });
    const before = await h.snapshot();
    const failed = await page(await h.get(await approved(new URL(url), 'beta')));
    expect(failed.status).toBe(502);
    expect(failed.text).toContain('The account could not be connected');
    expect(failed.text).toContain('(ECONNREFUSED); http://127.0.0.1:1 is unreachable');
    expect(await h.snapshot()).toBe(before);
    expect(await h.store.get('beta')).toBeUndefined();
  });

  it('refuses a callback whose state or link expired since the link was opened', async () => {
    h = await startConnectHarness();
    const link = await invite();
    const late = await approved(link);
    await expire('connect_states');
    const tooLong = await page(await h.get(late));
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toContain('This authorization took too long');

    const lateLink = await approved(link);
    await expire('connect_links');
    const expired = await page(await h.get(lateLink));
    expect(expired.status).toBe(410);
    expect(expired.text).toContain('This link has expired');
    const { rows } = await sql<{ used: boolean }>`
      select used_at is not null as used from hiresync.connect_links`.execute(h.database.db);
    expect(rows).toEqual([{ used: false }]);
    expect(await h.store.get('acme')).toBeUndefined();
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 0 });
  });

  it('connects once when the link is opened in two tabs: the second callback finds the link used', async () => {
    h = await startConnectHarness();
    const link = await invite();
    const [first, second] = [await approved(link), await approved(link)];
    const results = await Promise.all([
      h.get(first).then(page),
      h.get(h.at(second as URL, h.workers[1])).then(page),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 410]);
    expect(results.find((r) => r.status === 410)?.text).toContain('This link was used already');
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 1 });
  });

  it('connects accounts whose callbacks arrive at once on a worker with as few connections as callbacks', async () => {
    h = await startConnectHarness();
    // A worker whose pool has two connections, and two callbacks at the same moment:
    // neither may hold a connection while it waits for another.
    const worker = await workerWith([...(h.config.secretKeys?.reveal() ?? [])]);
    const { url: betaLink } = await createConnectLink(h.database.db, {
      account: 'beta',
      expiresInMs: 3_600_000,
      publicUrl: h.publicUrl,
      secretKeys: h.config.secretKeys,
      partner: h.config.partner,
      urls: { baseUrl: h.sim.url, authUrl: h.sim.authUrl },
    });
    const callbacks = [await approved(await invite()), await approved(new URL(betaLink), 'beta')];
    const results = await Promise.all(
      callbacks.map((callback) =>
        h.get(`${worker}${callback.pathname}${callback.search}`).then(page),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect((await h.store.list()).map((a) => a.name).sort()).toEqual(['acme', 'beta']);
  });

  it('refuses every link of an account removed since, even one made when it was new, and registers nothing', async () => {
    h = await startConnectHarness();
    const [first, second] = [await invite(), await invite()];
    // Both live at once, as links made before migration hiresync/0014 may be
    // (a new link withdraws the older ones since).
    await sql`update hiresync.connect_links set withdrawn_at = null`.execute(h.database.db);
    const opened = await approved(second);
    expect((await page(await h.get(await approved(first)))).status).toBe(200);
    const io = captureIo();
    expect(await main(['accounts', 'remove', 'acme'], h.env, io), io.err()).toBe(0);
    const before = await h.snapshot();

    // The second link was made for a new account: it must not register the removed one again.
    const refused = await page(await h.get(second));
    expect(refused.status).toBe(404);
    expect(refused.text).toContain('This link is not known');
    const late = await page(await h.get(opened));
    expect(late.status).toBe(400);
    expect(await h.snapshot()).toBe(before);
    expect(await h.store.get('acme')).toBeUndefined();
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 1 });
  });

  it('says the account is authorized, not that nothing changed, when its schema cannot be brought up to date after the token was stored', async () => {
    h = await startConnectHarness();
    expect((await page(await h.get(await approved(await invite())))).status).toBe(200);
    await sql`update hiresync.accounts set state = 'needs_reauthorization' where name = 'acme'`.execute(
      h.database.db,
    );
    const link = await invite();
    // Its views predate a release, and a table of someone else's stands where
    // one must go: bringing the schema up to date fails.
    await sql`update hiresync.schema_layouts set layout = 'an earlier release' where schema = 'acme'`.execute(
      h.database.db,
    );
    await sql`drop view acme.sources cascade`.execute(h.database.db);
    await sql`create table acme.sources (note text)`.execute(h.database.db);
    const answered = await page(await h.get(await approved(link)));
    expect((await h.store.get('acme'))?.state).toBe('enabled');
    expect(answered.text).not.toContain('Nothing was changed');
    expect(answered.text).toContain('hiresync is authorized again to read the account acme');
    expect(answered.text).toContain('run &#39;hiresync migrate&#39; to finish');
    // Authorized: the link is used, as for any connected account.
    const again = await page(await h.get(link));
    expect(again.status).toBe(410);
  });

  it('answers only GET', async () => {
    h = await startConnectHarness();
    const link = await invite();
    const res = await fetch(link, { method: 'POST', redirect: 'manual' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(await count('connect_states')).toBe(0);
  });

  it('answers a path no URL parser takes (//) 404 saying what is served, not 500', async () => {
    h = await startConnectHarness();
    for (const path of ['//', '//?state=x', '///connect/x']) {
      const res = await h.get(`${h.publicUrl}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).toContain('not found');
    }
  });
});
