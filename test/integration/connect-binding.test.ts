// A connect link completes only in the browser that opened it, every
// authorization request carries PKCE, and a new link withdraws the older
// unused ones of its account (issue 30, item 4).
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { pkceChallenge } from '../../src/api/pkce.js';
import {
  type ConnectHarness,
  type CookieBrowser,
  startConnectHarness,
} from '../support/connect-harness.js';

let h: ConnectHarness;
afterEach(async () => {
  await h?.close();
});

/** A page's status and text. */
async function page(res: Response): Promise<{ status: number; text: string }> {
  expect(res.headers.get('cache-control')).toBe('no-store');
  return { status: res.status, text: await res.text() };
}

/** A new link for acme (`accounts invite`), and what the command printed. */
async function invite(): Promise<{ link: URL; stdout: string }> {
  const invited = await h.invite(['acme']);
  expect(invited.code, invited.stderr).toBe(0);
  return { link: invited.link as URL, stdout: invited.stdout };
}

/** `browser` opens `link`: the authorize URL it is redirected to. */
async function open(browser: Pick<CookieBrowser, 'get'>, link: URL): Promise<URL> {
  const res = await browser.get(link);
  expect(res.status, await res.clone().text()).toBe(302);
  return new URL(res.headers.get('location') as string);
}

/** How many states are spent, and how many links used. */
async function spent(): Promise<{ states: number; links: number }> {
  const { rows } = await sql<{ states: number; links: number }>`
    select (select count(*)::int from hiresync.connect_states where used_at is not null) as states,
      (select count(*)::int from hiresync.connect_links where used_at is not null) as links`.execute(
    h.database.db,
  );
  return rows[0] as { states: number; links: number };
}

describe('connect links are bound to the browser that opened them', () => {
  it("refuses a callback from a second browser carrying the first browser's state: nothing bound, the state spent, the link still usable in the right browser", async () => {
    h = await startConnectHarness();
    const { link } = await invite();
    // Someone opens the link and sends the authorize URL on to another tenant's administrator…
    const authorize = await open(h, link);
    const callback = await h.approve(authorize, 'beta');
    const before = await h.snapshot();

    // …whose browser comes back without the opener's cookie.
    const administrator = h.newBrowser();
    const refused = await page(await administrator.get(callback));
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Open the link again in this browser');
    expect(refused.text).toContain('a connect link completes only in the browser that opened it');
    expect(refused.text).toContain(
      'Nothing was changed. Open the connect link you were sent again, in the browser you approve with',
    );
    expect(await h.snapshot()).toBe(before);
    expect(await h.store.get('acme')).toBeUndefined();
    expect(h.sim.partnerStats('beta')).toMatchObject({ codesRedeemed: 0 });
    expect(await spent()).toEqual({ states: 1, links: 0 });

    // The refused callback spent the state: its code is never redeemed, even by the opener.
    const late = await page(await h.get(callback));
    expect(late.status).toBe(409);
    expect(late.text).toContain('This answer was received already');
    expect(h.sim.partnerStats('beta')).toMatchObject({ codesRedeemed: 0 });

    // The administrator opens the link in their own browser and approves there: connected.
    const own = await h.approve(await open(administrator, link), 'acme');
    const connected = await page(await administrator.get(own));
    expect(connected.status, connected.text).toBe(200);
    expect(connected.text).toContain('The account acme is connected');
    expect(await spent()).toEqual({ states: 2, links: 1 });
    // The cookie went with the callback.
    expect(administrator.cookies()).toEqual([]);
  });

  it('refuses a callback without any cookie, and one from a browser holding the cookie of another opening of the same link', async () => {
    h = await startConnectHarness();
    const { link } = await invite();
    const bare = await page(
      await fetch(await h.approve(await open(h, link), 'acme'), { redirect: 'manual' }),
    );
    expect(bare.status).toBe(403);
    expect(bare.text).toContain('Open the link again in this browser');
    const first = await h.approve(await open(h, link), 'acme');
    const other = h.newBrowser();
    await open(other, link);
    const refused = await page(await other.get(first));
    expect(refused.status).toBe(403);
    expect(await h.store.get('acme')).toBeUndefined();
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 0 });
  });

  it('binds the opening with a cookie limited to the callback, of which only the hash is stored, and completes in that browser', async () => {
    h = await startConnectHarness();
    const { link } = await invite();
    const browser = h.newBrowser();
    const authorize = await open(browser, link);
    const [cookie, ...more] = browser.cookies();
    expect(more).toEqual([]);
    expect(cookie?.name).toMatch(/^hiresync_connect_[0-9a-f]{16}$/);
    expect(cookie?.attributes).toEqual([
      'Max-Age=900',
      'Path=/oauth/callback',
      'HttpOnly',
      'SameSite=Lax',
    ]);
    const { rows } = await sql<{ row: string }>`
      select row_to_json(s)::text as row from hiresync.connect_states s`.execute(h.database.db);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.row).not.toContain(cookie?.value);
    expect(rows[0]?.row).toMatch(/"code_verifier":"hs1\./);

    const connected = await page(await browser.get(await h.approve(authorize, 'acme')));
    expect(connected.status, connected.text).toBe(200);
    expect((await h.store.get('acme'))?.authMode).toBe('partner');
    // The sealed verifier is erased once the state is claimed.
    const { rows: after } = await sql<{ verifier: string | null }>`
      select code_verifier as verifier from hiresync.connect_states`.execute(h.database.db);
    expect(after).toEqual([{ verifier: null }]);
  });
});

describe('PKCE', () => {
  it('every opening of a link asks with a fresh S256 challenge, and the exchange sends its verifier', async () => {
    h = await startConnectHarness();
    const { link } = await invite();
    const [a, b] = [await open(h, link), await open(h, link)];
    for (const authorize of [a, b]) {
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    expect(a.searchParams.get('code_challenge')).not.toBe(b.searchParams.get('code_challenge'));
    const connected = await page(await h.get(await h.approve(b, 'acme')));
    expect(connected.status, connected.text).toBe(200);
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 1, invalidGrants: 0 });
  });

  it('the simulator refuses a wrong or missing verifier for a code whose request carried a challenge, and still takes requests without one', async () => {
    h = await startConnectHarness();
    const redirectUri = 'http://127.0.0.1:53682/callback';
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const codeFor = async (pkce: Record<string, string>) => {
      const authorize = new URL(h.sim.authorizeUrl);
      const query = {
        response_type: 'code',
        client_id: 'partner-client',
        redirect_uri: redirectUri,
        state: 'st',
        sim_account: 'acme',
        ...pkce,
      };
      for (const [k, v] of Object.entries(query)) authorize.searchParams.set(k, v);
      const res = await fetch(authorize, { redirect: 'manual' });
      const location = new URL(res.headers.get('location') as string);
      return location.searchParams.get('code') ?? `error ${location.searchParams.get('error')}`;
    };
    const exchange = async (code: string, codeVerifier?: string) => {
      const res = await fetch(`${h.sim.authUrl}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from('partner-client:partner-secret').toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          ...(codeVerifier === undefined ? {} : { code_verifier: codeVerifier }),
        }).toString(),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    const challenged = await codeFor({
      code_challenge: pkceChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const wrong = await exchange(challenged, `${verifier.slice(0, -1)}A`);
    expect(wrong).toEqual({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'code_verifier does not match the code_challenge',
      },
    });
    expect((await exchange(challenged)).body.error_description).toBe(
      'code_verifier is required (PKCE)',
    );
    expect((await exchange(challenged, verifier)).status).toBe(200);

    expect(await codeFor({ code_challenge: pkceChallenge(verifier) })).toBe(
      'error invalid_request',
    );
    expect(await codeFor({ code_challenge: verifier, code_challenge_method: 'plain' })).toBe(
      'error invalid_request',
    );
    // Without a challenge, as a service that does not know PKCE: no verifier needed.
    expect((await exchange(await codeFor({}))).status).toBe(200);
  });
});

describe('a new link withdraws the older unused links of its account', () => {
  it('invite says so, the older link opens on the withdrawn page, a callback of its opening is refused, and the new link connects', async () => {
    h = await startConnectHarness();
    const first = await invite();
    expect(first.stdout).not.toContain('withdrawn');
    const earlyCallback = await h.approve(await open(h, first.link), 'acme');

    const second = await invite();
    expect(second.stdout).toContain('older unused links for acme were withdrawn: 1\n');

    const withdrawn = await page(await h.get(first.link));
    expect(withdrawn.status).toBe(410);
    expect(withdrawn.text).toContain('This link was withdrawn');
    expect(withdrawn.text).toContain('A newer connect link for the account acme was made on');
    const late = await page(await h.get(earlyCallback));
    expect(late.status).toBe(410);
    expect(late.text).toContain('This link was withdrawn');
    expect(await h.store.get('acme')).toBeUndefined();
    expect(h.sim.partnerStats('acme')).toMatchObject({ codesRedeemed: 0 });

    const connected = await page(await h.get(await h.approve(await open(h, second.link), 'acme')));
    expect(connected.status, connected.text).toBe(200);
    // A used link is not withdrawn by a later one; nothing is left to withdraw.
    const third = await invite();
    expect(third.stdout).not.toContain('withdrawn');
  });
});

describe('before migration hiresync/0014', () => {
  it('a link opened on a control schema without its columns says hiresync is not ready (503), not that something went wrong', async () => {
    h = await startConnectHarness();
    const { link } = await invite();
    await sql`alter table hiresync.connect_states drop column browser_hash, drop column code_verifier`.execute(
      h.database.db,
    );
    await sql`alter table hiresync.connect_links drop column withdrawn_at`.execute(h.database.db);
    const refused = await page(await h.get(link));
    expect(refused.status).toBe(503);
    expect(refused.text).toContain('hiresync is not ready');
  });
});
