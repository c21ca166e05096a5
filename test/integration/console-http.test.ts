// The console over plain HTTP, as any client (not a browser) meets it: the
// login, the headers of its pages, what it never shows, what it refuses to
// change, and that the worker serves nothing else.
import { describe, expect, it } from 'vitest';
import {
  type RefreshTokenTables,
  refreshTokenPurpose,
} from '../../src/accounts/refresh-token-vault.js';
import { SecretBox } from '../../src/accounts/secret-box.js';
import { CONSOLE_PASSWORD, startConsoleDeployment } from '../support/console-deployment.js';
import { basicAuth, CONSOLE_LOGIN, formToken, postToConsole } from '../support/console-http.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { PARTNER_APP_ENV } from '../support/test-env.js';

const { partner, cli } = cleanupAfterEach();

describe('the console over HTTP', () => {
  it('asks for the login (401, WWW-Authenticate Basic) without a password, with a wrong one, or another user', async () => {
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli);
    for (const headers of [
      {} as Record<string, string>,
      { authorization: basicAuth('hiresync', 'not the console password') },
      { authorization: basicAuth('admin', CONSOLE_PASSWORD) },
      { authorization: `Bearer ${CONSOLE_PASSWORD}` },
    ]) {
      const response = await fetch(`${deployment.url}/`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(
        'Basic realm="hiresync console", charset="UTF-8"',
      );
      const page = await response.text();
      expect(page).not.toContain('beta');
      expect(page).toContain('User hiresync, and the password in HIRESYNC_CONSOLE_PASSWORD.');
    }
    const refused = await postToConsole(
      deployment,
      { account: 'acme' },
      { authorization: basicAuth('hiresync', 'wrong password!') },
    );
    expect(refused.status).toBe(401);
    expect(await deployment.linkCount()).toBe(0);
  }, 60_000);

  it('serves the page with the password: no-store, no framing, no referrer, a CSP that runs no script', async () => {
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli);
    const response = await fetch(`${deployment.url}/`, { headers: CONSOLE_LOGIN });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
    );
    const page = await response.text();
    expect(page).not.toMatch(/<script/i);
    expect(page).toContain('<h3>beta <span class="badge bad">credentials refused</span></h3>');
    expect(page).toContain('<h3>acme <span class="badge warn">needs reauthorization</span></h3>');
  }, 60_000);

  it('never shows a secret: not the password, the secret key, the partner secret, a refused client secret, a refresh token or a link made', async () => {
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli);
    const first = await (await fetch(`${deployment.url}/`, { headers: CONSOLE_LOGIN })).text();
    const made = await postToConsole(deployment, { account: 'acme', token: formToken(first) });
    expect(made.status).toBe(200);
    const link = /<p class="link">([^<]+)<\/p>/.exec(made.page)?.[1] ?? '';
    expect(link).toMatch(new RegExp(`^${deployment.url}/connect/\\S+$`));
    // acme's refresh token (refused now, but a secret still), as stored and in plaintext.
    const { token: sealed } = await h.database.db
      .withTables<RefreshTokenTables>()
      .selectFrom('hiresync.refresh_tokens')
      .select('token')
      .where('account', '=', 'acme')
      .executeTakeFirstOrThrow();
    const box = new SecretBox(h.config.secretKeys?.reveal() ?? []);
    const refreshToken = box.open(sealed, refreshTokenPurpose('acme'));
    const after = await (await fetch(`${deployment.url}/`, { headers: CONSOLE_LOGIN })).text();
    for (const page of [first, after]) {
      for (const secret of [
        CONSOLE_PASSWORD,
        h.env.HIRESYNC_SECRET_KEY as string,
        PARTNER_APP_ENV.HIRESYNC_PARTNER_CLIENT_SECRET,
        'beta-secret-the-api-refuses',
        h.env.HIRESYNC_CLIENT_SECRET as string,
        link,
        link.split('/connect/')[1] as string,
        sealed,
        refreshToken,
      ]) {
        expect(page).not.toContain(secret);
      }
    }
  }, 60_000);

  it('makes no link on a POST from another origin, without the form token, with a forged or for an account that needs nothing', async () => {
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli);
    const page = await (await fetch(`${deployment.url}/`, { headers: CONSOLE_LOGIN })).text();
    const token = formToken(page);

    const crossSite = await postToConsole(
      deployment,
      { account: 'acme', token },
      { origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    expect(crossSite.page).toContain(
      'it was sent from another site (Origin https://evil.example), not from this console',
    );
    const crossSiteFetch = await postToConsole(
      deployment,
      { account: 'acme', token },
      { 'sec-fetch-site': 'cross-site' },
    );
    expect(crossSiteFetch.status).toBe(403);

    const noToken = await postToConsole(
      deployment,
      { account: 'acme' },
      { origin: deployment.url },
    );
    expect(noToken.status).toBe(403);
    expect(noToken.page).toContain('The form carries no token');
    const forged = await postToConsole(
      deployment,
      { account: 'acme', token: `${token.slice(0, -4)}AAAA` },
      { origin: deployment.url },
    );
    expect(forged.status).toBe(403);
    expect(forged.page).toContain('a forged token');

    const healthy = await postToConsole(
      deployment,
      { account: 'beta', token },
      { origin: deployment.url },
    );
    expect(healthy.status).toBe(409);
    expect(healthy.page).toContain(
      'No connect link was made for beta: account beta is credentials refused, not waiting to be re-authorized',
    );
    // Each page's token is taken once: a fresh page for each try.
    const fresh = async () =>
      formToken(await (await fetch(`${deployment.url}/`, { headers: CONSOLE_LOGIN })).text());
    const unknown = await postToConsole(
      deployment,
      { account: 'nobody', token: await fresh() },
      { origin: deployment.url },
    );
    expect(unknown.status).toBe(409);

    const json = await postToConsole(
      deployment,
      { account: 'acme', token },
      { origin: deployment.url, 'content-type': 'application/json' },
    );
    expect(json.status).toBe(415);
    for (const method of ['PUT', 'DELETE']) {
      const response = await fetch(`${deployment.url}/`, {
        method,
        headers: { ...CONSOLE_LOGIN, origin: deployment.url },
      });
      expect(response.status).toBe(405);
    }
    expect(await deployment.linkCount()).toBe(0);

    // The same form from the console itself, on a fresh page, makes one.
    const form = { account: 'acme', token: await fresh() };
    const made = await postToConsole(deployment, form, { origin: deployment.url });
    expect(made.status).toBe(200);
    expect(made.page).toContain('Connect link for acme');
    expect(await deployment.linkCount()).toBe(1);
    // Sent again (a reload of the answer): refused, no second link withdrawing the first.
    const reloaded = await postToConsole(deployment, form, { origin: deployment.url });
    expect(reloaded.status).toBe(409);
    expect(reloaded.page).toContain('This form was sent already');
    expect(await deployment.linkCount()).toBe(1);
    expect(deployment.worker.stdout()).toContain('"msg":"connect link made"');
    expect(deployment.worker.stdout()).not.toContain('/connect/');
  }, 60_000);

  it("serves the console at the public URL's path too, for a proxy that passes it on, and its form posts there", async () => {
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli, {}, '/hiresync');
    const response = await fetch(`${deployment.url}/hiresync/`, { headers: CONSOLE_LOGIN });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('<form method="post">');
    const made = await fetch(`${deployment.url}/hiresync/`, {
      method: 'POST',
      headers: {
        ...CONSOLE_LOGIN,
        origin: deployment.url,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ account: 'acme', token: formToken(page) }).toString(),
    });
    expect(made.status).toBe(200);
    expect(await made.text()).toContain(`${deployment.url}/hiresync/connect/`);
    expect(await deployment.linkCount()).toBe(1);
    for (const path of ['/hiresync', '/hiresync/x', '/other/']) {
      expect(
        (await fetch(`${deployment.url}${path}`, { headers: CONSOLE_LOGIN })).status,
        path,
      ).toBe(404);
    }
  }, 60_000);

  it('serves nothing else: any other path is 404, with or without the password', async () => {
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli);
    for (const path of [
      '/favicon.ico',
      '/console',
      '/index.html',
      '/healthz/',
      '/metrics/x',
      '//127.0.0.1/',
      '/%2F',
      '/.env',
    ]) {
      for (const headers of [{}, CONSOLE_LOGIN] as Record<string, string>[]) {
        const response = await fetch(`${deployment.url}${path}`, { headers });
        expect(response.status, path).toBe(404);
        expect(await response.text(), path).not.toContain('beta');
      }
    }
    expect((await fetch(`${deployment.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${deployment.url}/metrics`)).status).toBe(200);
  }, 60_000);

  it('is off without HIRESYNC_CONSOLE_PASSWORD: / answers 404 saying how to turn it on', async () => {
    const h = await partner();
    const deployment = await startConsoleDeployment(h, cli, {
      HIRESYNC_CONSOLE_PASSWORD: undefined,
    });
    for (const headers of [{}, CONSOLE_LOGIN] as Record<string, string>[]) {
      const response = await fetch(`${deployment.url}/`, { headers });
      expect(response.status).toBe(404);
      expect(response.headers.get('www-authenticate')).toBeNull();
      expect(await response.text()).toBe(
        'not found: the console is off; set HIRESYNC_CONSOLE_PASSWORD (12 characters or more) to serve it here, user hiresync (see docs/console.md)\n',
      );
    }
    const refused = await postToConsole(
      deployment,
      { account: 'acme' },
      { origin: deployment.url },
    );
    expect(refused.status).toBe(404);
    expect(await deployment.linkCount()).toBe(0);
    expect((await fetch(`${deployment.url}/healthz`)).status).toBe(200);
  }, 60_000);
});
