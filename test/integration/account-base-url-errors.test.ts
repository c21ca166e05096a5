import { createServer, type ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/secret.js';
import {
  type AccountsHarness,
  secretOf,
  startAccountsHarness,
} from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

/** Registers `acme` again with `baseUrl` (the simulator's token service stays its auth URL). */
async function moveAcme(h: AccountsHarness, baseUrl: string): Promise<void> {
  await h.store.remove('acme');
  await h.store.add({
    name: 'acme',
    baseUrl,
    auth: {
      mode: 'client_credentials',
      authUrl: h.sim.authUrl,
      clientId: 'acme-client',
      clientSecret: new Secret(secretOf('acme')),
      sub: undefined,
    },
  });
}

/** A base URL whose every answer is written by `answer`. */
async function apiAnswering(answer: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((_req, res) => answer(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  defer(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/harvest`;
}

async function errorOfRun(h: AccountsHarness): Promise<string> {
  const [failed] = await h.sync([{ account: 'acme', resource: 'jobs' }]);
  return failed && !failed.ok ? failed.error : '';
}

describe("errors about a registered account's base URL", () => {
  const harness = async () => {
    const h = await startAccountsHarness({
      accounts: ['acme'],
      records: 5,
      env: { HIRESYNC_RUN_ATTEMPTS: '1', HIRESYNC_MAX_RETRIES: '1' },
    });
    defer(() => h.close());
    return h;
  };

  it("name the account and 'hiresync accounts update NAME --base-url', not HIRESYNC_BASE_URL, when it is unreachable", async () => {
    const h = await harness();
    await moveAcme(h, 'http://127.0.0.1:1/harvest');
    const error = await errorOfRun(h);
    expect(error).toContain('unreachable');
    expect(error).not.toContain('HIRESYNC_BASE_URL');
    expect(error).toContain(
      "check account acme's base URL ('hiresync accounts update acme --base-url URL'",
    );
  }, 60_000);

  it('name the account, not HIRESYNC_BASE_URL, when it answers a body that is not JSON (a login page)', async () => {
    const h = await harness();
    await moveAcme(
      h,
      await apiAnswering((res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body>Sign in</body></html>');
      }),
    );
    const error = await errorOfRun(h);
    expect(error).toContain('is not JSON');
    expect(error).not.toContain('HIRESYNC_BASE_URL');
    expect(error).toContain(
      "check account acme's base URL ('hiresync accounts update acme --base-url URL'",
    );
  }, 60_000);

  it('name the account, not HIRESYNC_BASE_URL, when a next link leads to another origin', async () => {
    const h = await harness();
    await moveAcme(
      h,
      await apiAnswering((res) => {
        res.writeHead(200, {
          'content-type': 'application/json',
          link: '<https://elsewhere.example.com/v3/jobs?page=2>; rel="next"',
        });
        res.end('[]');
      }),
    );
    const error = await errorOfRun(h);
    expect(error).toContain('refused a next link to https://elsewhere.example.com');
    expect(error).not.toContain('HIRESYNC_BASE_URL');
    expect(error).toContain(
      "check account acme's base URL ('hiresync accounts update acme --base-url URL'",
    );
  }, 60_000);
});
