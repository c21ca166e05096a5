import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { runOnce } from '../../src/queue/run-once.js';
import { Secret } from '../../src/secret.js';
import {
  type AccountsHarness,
  secretOf,
  startAccountsHarness,
  targetsOf,
} from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

const WRONG_SECRET = 'acme-wrong-secret-8c2e41';

async function harness(options: Parameters<typeof startAccountsHarness>[0]) {
  const h = await startAccountsHarness(options);
  defer(() => h.close());
  return h;
}

/** Registers acme again with `secret`, its tokens from `authUrl` (its data and schema stay). */
async function registerAcme(h: AccountsHarness, secret: string, authUrl = h.sim.authUrl) {
  await h.store.remove('acme');
  await h.store.add({
    name: 'acme',
    baseUrl: h.sim.url,
    auth: {
      mode: 'client_credentials',
      authUrl,
      clientId: 'acme-client',
      clientSecret: new Secret(secret),
    },
  });
}

/** `hiresync ARGV` in process, with `input` on standard input. */
async function cli(h: AccountsHarness, argv: string[], input = '') {
  const io = captureIo(input);
  const code = await main(argv, h.env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

function seriesValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Runs `targets` once in an app of its own; returns the outcomes and the app's metrics text. */
async function syncWithMetrics(h: AccountsHarness, targets: Parameters<typeof runOnce>[1]) {
  const app = h.app();
  try {
    const outcomes = await runOnce(app, targets, 'auto');
    return { outcomes, metrics: await app.metrics.registry.metrics() };
  } finally {
    await app.close();
  }
}

const refusedTokens = (metrics: string, account: string) =>
  seriesValue(metrics, `hiresync_token_requests_total{account="${account}",outcome="refused"}`) ??
  0;

/** A token endpoint that answers 503 to everything, or never answers (`hang`). */
async function brokenTokenEndpoint(mode: { hang: boolean }): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    if (mode.hang) return; // Never answered: the request times out.
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'token service unavailable' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth`;
}

describe('a registered account whose client secret the token service refuses', () => {
  it('goes to credentials_refused: its run fails at once, later runs fail without a token request, the other account goes on; status and list say why and what to do; update with the right secret enables it', async () => {
    const h = await harness({ accounts: ['acme', 'beta'], records: 12 });
    await registerAcme(h, WRONG_SECRET);

    const first = await syncWithMetrics(h, targetsOf(['acme', 'beta'], ['jobs']));
    expect(first.outcomes).toMatchObject([
      {
        account: 'acme',
        ok: false,
        error: expect.stringContaining(
          'account acme: the token service refused its client secret (401',
        ),
      },
      { account: 'beta', ok: true },
    ]);
    // Failed without retry (HIRESYNC_RUN_ATTEMPTS is 3): one token request, refused.
    expect(refusedTokens(first.metrics, 'acme')).toBe(1);
    expect(await h.liveIds('beta', 'jobs')).toEqual(h.expectedIds('beta', 'jobs'));
    const refused = await h.store.get('acme');
    expect(refused?.state).toBe('credentials_refused');
    expect(refused?.refusalReason).toBe(
      'the token service refused its client secret (401 invalid_client: Client authentication failed)',
    );

    // The next runs fail at once, without asking the token service; beta's go on.
    const second = await syncWithMetrics(h, targetsOf(['acme', 'beta'], ['jobs', 'job_posts']));
    expect(second.outcomes).toMatchObject([
      { account: 'acme', resource: 'jobs', ok: false },
      { account: 'acme', resource: 'job_posts', ok: false },
      { account: 'beta', resource: 'jobs', ok: true },
      { account: 'beta', resource: 'job_posts', ok: true },
    ]);
    for (const outcome of second.outcomes.filter((o) => o.account === 'acme')) {
      expect(outcome.ok ? '' : outcome.error).toContain(
        "account acme's credentials were refused: the token service refused its client secret (401",
      );
      expect(outcome.ok ? '' : outcome.error).toContain(
        "store the right secret with 'hiresync accounts update acme' (secret on standard input)",
      );
    }
    expect(refusedTokens(second.metrics, 'acme')).toBe(0);
    expect(
      seriesValue(second.metrics, 'hiresync_token_requests_total{account="acme",outcome="ok"}') ??
        0,
    ).toBe(0);
    expect(
      seriesValue(second.metrics, 'hiresync_account_credentials_refused{account="acme"}'),
    ).toBe(1);
    expect(
      seriesValue(second.metrics, 'hiresync_account_credentials_refused{account="beta"}'),
    ).toBe(0);

    // status --check fails for it; status and list --json say why and what to do.
    const check = await cli(h, ['status', '--check']);
    expect(check.code).toBe(1);
    expect(check.stdout + check.stderr).toContain(
      "acme: credentials refused: the token service refused its client secret (401 invalid_client: Client authentication failed); store the right secret with 'hiresync accounts update acme'",
    );
    const status = await cli(h, ['status', '--json']);
    const acmeStatus = (
      JSON.parse(status.stdout) as {
        accounts: Array<{ name: string; state: string; credentialsRefused: unknown }>;
      }
    ).accounts.find((a) => a.name === 'acme');
    expect(acmeStatus).toMatchObject({
      state: 'credentials_refused',
      credentialsRefused: {
        reason:
          'the token service refused its client secret (401 invalid_client: Client authentication failed)',
        action: expect.stringMatching(
          /^store the right secret with 'hiresync accounts update acme' \(secret on standard input\), then it is enabled again; 'hiresync accounts test acme' checks it/,
        ),
      },
    });
    const table = await cli(h, ['status']);
    expect(table.stdout).toMatch(/^acme\s+jobs\s.*failed \(account credentials_refused\)/m);
    expect(table.stdout).toContain(
      'acme: credentials refused: the token service refused its client secret',
    );
    const list = await cli(h, ['accounts', 'list', '--json']);
    const listed = (
      JSON.parse(list.stdout) as {
        accounts: Array<{ name: string; state: string; credentialsRefused: unknown }>;
      }
    ).accounts;
    expect(listed.find((a) => a.name === 'acme')).toMatchObject({
      state: 'credentials_refused',
      credentialsRefused: { reason: expect.stringContaining('401'), action: expect.any(String) },
    });
    expect(listed.find((a) => a.name === 'beta')).toMatchObject({
      state: 'enabled',
      credentialsRefused: null,
    });
    const listTable = await cli(h, ['accounts', 'list']);
    expect(listTable.stdout).toContain(
      "acme: credentials refused: the token service refused its client secret (401 invalid_client: Client authentication failed); store the right secret with 'hiresync accounts update acme'",
    );

    // A new secret enables it; the next sync succeeds.
    const update = await cli(h, ['accounts', 'update', 'acme'], `${secretOf('acme')}\n`);
    expect(update).toMatchObject({ code: 0, stderr: '' });
    expect(update.stdout).toContain('is enabled again');
    const enabled = await h.store.get('acme');
    expect(enabled).toMatchObject({ state: 'enabled', refusalReason: null });
    const [succeeded] = await h.sync([{ account: 'acme', resource: 'jobs' }]);
    expect(succeeded).toMatchObject({ ok: true });
    expect(await h.liveIds('acme', 'jobs')).toEqual(h.expectedIds('acme', 'jobs'));
    expect((await cli(h, ['status', '--check'])).code).toBe(0);

    for (const output of [h.log.text(), check.stdout, status.stdout, list.stdout]) {
      expect(output).not.toContain(WRONG_SECRET);
      expect(output).not.toContain(secretOf('acme'));
    }
  });

  it("accounts enable ends credentials_refused (the vendor's side was fixed), and disable works from it", async () => {
    const h = await harness({ accounts: ['acme'], records: 5 });
    await registerAcme(h, WRONG_SECRET);
    await h.sync([{ account: 'acme', resource: 'jobs' }]);
    expect((await h.store.get('acme'))?.state).toBe('credentials_refused');
    const disable = await cli(h, ['accounts', 'disable', 'acme']);
    expect(disable.code).toBe(0);
    expect(await h.store.get('acme')).toMatchObject({ state: 'disabled', refusalReason: null });
    await sql`update hiresync.accounts set state = 'credentials_refused', refusal_reason = 'refused' where name = 'acme'`.execute(
      h.database.db,
    );
    const enable = await cli(h, ['accounts', 'enable', 'acme']);
    expect(enable).toMatchObject({ code: 0, stdout: 'enabled account acme\n' });
    expect(await h.store.get('acme')).toMatchObject({ state: 'enabled', refusalReason: null });
    expect(await h.store.enabledNames()).toContain('acme');
  });
});

describe('a registered account whose token endpoint fails or times out', () => {
  it('stays enabled: a 5xx or a timeout is no refusal of its secret', async () => {
    const h = await harness({
      accounts: ['acme'],
      records: 5,
      env: {
        HIRESYNC_MAX_RETRIES: '0',
        HIRESYNC_HTTP_TIMEOUT: '300ms',
        HIRESYNC_RUN_ATTEMPTS: '1',
      },
    });
    const mode = { hang: false };
    await registerAcme(h, secretOf('acme'), await brokenTokenEndpoint(mode));
    const failing = await syncWithMetrics(h, [{ account: 'acme', resource: 'jobs' }]);
    expect(failing.outcomes).toMatchObject([{ account: 'acme', ok: false }]);
    expect(
      seriesValue(failing.metrics, 'hiresync_token_requests_total{account="acme",outcome="error"}'),
    ).toBeGreaterThan(0);
    expect(await h.store.get('acme')).toMatchObject({ state: 'enabled', refusalReason: null });

    mode.hang = true;
    const [timedOut] = await h.sync([{ account: 'acme', resource: 'jobs' }]);
    expect(timedOut).toMatchObject({ ok: false });
    expect(await h.store.get('acme')).toMatchObject({ state: 'enabled', refusalReason: null });

    // A 429 of the token service is waited out, and changes nothing either.
    await registerAcme(h, secretOf('acme'));
    h.sim.rateLimitTokenRequests(1, 1);
    const [limited] = await h.sync([{ account: 'acme', resource: 'jobs' }], 'auto');
    expect(limited).toMatchObject({ ok: true });
    expect(await h.store.get('acme')).toMatchObject({ state: 'enabled', refusalReason: null });
  });
});

describe('a credentials_refused account and the changes that do or do not end it', () => {
  it('a refusal answered to a token request of the old secret leaves the secret stored since by accounts update enabled', async () => {
    const h = await harness({ accounts: ['acme'], records: 5 });
    await registerAcme(h, WRONG_SECRET);
    // A run resolved acme with the wrong secret; its token request is in flight…
    const resolved = await h.store.resolve('acme');
    // …while the operator stores the right one.
    const update = await cli(h, ['accounts', 'update', 'acme'], `${secretOf('acme')}\n`);
    expect(update.code).toBe(0);
    await resolved.credentialRefusals?.refused('the token service refused its client secret (401)');
    expect(await h.store.get('acme')).toMatchObject({ state: 'enabled', refusalReason: null });
    const [run] = await h.sync([{ account: 'acme', resource: 'jobs' }]);
    expect(run).toMatchObject({ ok: true });
  });

  it('accounts update of its settings alone leaves it in credentials_refused', async () => {
    const h = await harness({ accounts: ['acme'], records: 5 });
    await registerAcme(h, WRONG_SECRET);
    await h.sync([{ account: 'acme', resource: 'jobs' }]);
    expect((await h.store.get('acme'))?.state).toBe('credentials_refused');
    const update = await cli(h, ['accounts', 'update', 'acme', '--incremental-every', '30m']);
    expect(update.code).toBe(0);
    expect(await h.store.get('acme')).toMatchObject({ state: 'credentials_refused' });
    expect(await h.store.enabledNames()).not.toContain('acme');
  });
});
