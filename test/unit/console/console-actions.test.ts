// The console's POSTs through serveConsole over a real local HTTP server,
// with the worker's operations recorded in memory: one guard takes every
// action or none, each action calls its operation with the form's fields,
// and each leaves one event in the log.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConsoleActions, MadeLink } from '../../../src/console/action-ports.js';
import { ACTION_NAMES } from '../../../src/console/console-actions.js';
import { createFormToken, formTokenKeys } from '../../../src/console/form-token.js';
import { type ConsoleOptions, serveConsole } from '../../../src/console/serve-console.js';
import { HiresyncError } from '../../../src/errors.js';
import { Secret } from '../../../src/secret.js';
import type { StatusReport } from '../../../src/status/report-types.js';
import { captureLogger } from '../../support/capture-logger.js';

const PASSWORD = 'a console password';
const LOGIN = `Basic ${Buffer.from(`hiresync:${PASSWORD}`).toString('base64')}`;
const LINK_URL = 'http://127.0.0.1:1/connect/the-secret-token-of-a-link';

const REPORT: StatusReport = {
  generatedAt: '2026-11-26T04:00:00.000Z',
  overview: { accounts: 0 } as unknown as StatusReport['overview'],
  accounts: [],
  typedViewBlocks: [],
  check: { passed: true, problems: [] } as unknown as StatusReport['check'],
};

/** The fields each action's form carries. */
const FORMS: Record<(typeof ACTION_NAMES)[number], Record<string, string>> = {
  reauthorize: { account: 'acme' },
  invite: { account: 'newco' },
  withdraw: { account: 'acme', link: '17' },
  sync: { account: 'acme', resource: 'jobs' },
  disable: { account: 'acme' },
  enable: { account: 'acme' },
  test: { account: 'acme' },
};

interface Deployment {
  url: string;
  calls: string[];
  log: () => Record<string, unknown>[];
  token: () => string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function start(overrides: Partial<ConsoleActions> = {}): Promise<Deployment> {
  const calls: string[] = [];
  const spent = new Set<string>();
  const made = (account: string): MadeLink => ({
    account,
    url: LINK_URL,
    expiresAt: '2026-12-03T04:00:00.000Z',
    withdrawn: 0,
  });
  const actions: ConsoleActions = {
    pendingLinks: async () => [],
    inviteUnavailable: undefined,
    invite: async (account) => {
      calls.push(`invite ${account}`);
      return made(account);
    },
    withdrawLink: async (account, id) => {
      calls.push(`withdraw ${account} ${id}`);
      return true;
    },
    syncNow: async (account, resource) => {
      calls.push(`sync ${account} ${resource}`);
      return { jobId: '42', already: false };
    },
    setEnabled: async (account, enabled) => {
      calls.push(`${enabled ? 'enable' : 'disable'} ${account}`);
      return { changed: true, schedulersRemoved: 2 };
    },
    test: async (account) => {
      calls.push(`test ${account}`);
      return {
        passed: false,
        token: `${account} (client credentials): access token minted`,
        resources: [
          { resource: 'jobs', outcome: 'ok', detail: undefined },
          {
            resource: 'job_posts',
            outcome: 'not permitted (scope harvest:job_posts:list)',
            detail:
              "403 from /v3/job_posts: have an administrator authorize again: 'hiresync accounts authorize acme'",
          },
        ],
      };
    },
    ...overrides,
  };
  const { logger, lines } = captureLogger('info');
  const options: ConsoleOptions = {
    password: new Secret(PASSWORD),
    secretKeys: [],
    publicUrl: undefined,
    readReport: async () => REPORT,
    links: {
      unavailable: undefined,
      create: async (account) => {
        calls.push(`reauthorize ${account}`);
        return made(account);
      },
    },
    actions,
    spendFormToken: async (token) => {
      if (spent.has(token)) return false;
      spent.add(token);
      return true;
    },
    logger: logger.child({ component: 'console' }),
  };
  const server = createServer((req, res) => void serveConsole(req, res, options));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    calls,
    log: () => lines().map((l) => JSON.parse(l) as Record<string, unknown>),
    // A fresh page's token.
    token: () => createFormToken(formTokenKeys(PASSWORD, []), Date.now()),
  };
}

async function post(
  d: Deployment,
  form: Record<string, string>,
  headers: Record<string, string> = { origin: d.url, 'sec-fetch-site': 'same-origin' },
): Promise<{ status: number; page: string }> {
  const response = await fetch(`${d.url}/`, {
    method: 'POST',
    headers: {
      authorization: LOGIN,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, page: await response.text() };
}

describe('the console actions behind one guard', () => {
  it.each(ACTION_NAMES)(
    'does nothing for %s when the form comes from another site, carries no token, a forged one or another content type',
    async (action) => {
      const d = await start();
      const form = { action, ...FORMS[action] };
      const crossSite = await post(
        d,
        { ...form, token: d.token() },
        {
          origin: 'https://evil.example',
          'sec-fetch-site': 'cross-site',
        },
      );
      expect(crossSite.status).toBe(403);
      expect(crossSite.page).toContain('Refused: nothing was done');
      const noToken = await post(d, form);
      expect(noToken.status).toBe(403);
      expect(noToken.page).toContain('The form carries no token');
      const forged = await post(d, { ...form, token: `${d.token().slice(0, -4)}AAAA` });
      expect(forged.status).toBe(403);
      const json = await post(
        d,
        { ...form, token: d.token() },
        {
          origin: d.url,
          'content-type': 'application/json',
        },
      );
      expect(json.status).toBe(415);
      expect(d.calls).toEqual([]);
      const refusals = d.log().filter((l) => l.msg === 'console action refused');
      expect(refusals).toHaveLength(4);
      for (const line of refusals)
        expect(line).toMatchObject({ component: 'console', outcome: 'refused' });
    },
  );

  it.each(ACTION_NAMES)(
    'takes %s from the console with a fresh token, once: the same form sent again (a reload) does nothing',
    async (action) => {
      const d = await start();
      const form = { action, ...FORMS[action], token: d.token() };
      const first = await post(d, form);
      expect(first.status).toBe(200);
      expect(d.calls).toHaveLength(1);
      const again = await post(d, form);
      expect(again.status).toBe(409);
      expect(again.page).toContain('This form was sent already');
      expect(d.calls).toHaveLength(1);
    },
  );

  it('takes a form once however its token is spelled: the same signature in another base64url spelling is refused', async () => {
    const d = await start();
    const token = d.token();
    const first = await post(d, { action: 'sync', ...FORMS.sync, token });
    expect(first.status).toBe(200);
    // The signature's last character carries 2 unused bits: 4 spellings decode to the same bytes.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(token.slice(-1));
    const respelled = [1, 2, 3].map((k) => `${token.slice(0, -1)}${alphabet[last ^ k]}`);
    for (const variant of respelled) {
      const again = await post(d, { action: 'sync', ...FORMS.sync, token: variant });
      expect(again.status).toBe(403);
    }
    expect(d.calls).toEqual(['sync acme jobs']);
  });

  it('calls each operation with the form’s fields, and logs one event per action with the action, account, resource and outcome, never the link', async () => {
    const d = await start();
    for (const action of ACTION_NAMES)
      await post(d, { action, ...FORMS[action], token: d.token() });
    expect(d.calls).toEqual([
      'reauthorize acme',
      'invite newco',
      'withdraw acme 17',
      'sync acme jobs',
      'disable acme',
      'enable acme',
      'test acme',
    ]);
    const events = d.log().filter((l) => l.action !== undefined);
    expect(events.map((e) => [e.msg, e.action, e.account, e.resource, e.outcome])).toEqual([
      [
        'connect link made',
        'reauthorize',
        'acme',
        undefined,
        'made, expires 2026-12-03T04:00:00.000Z',
      ],
      ['connect link made', 'invite', 'newco', undefined, 'made, expires 2026-12-03T04:00:00.000Z'],
      ['connect link withdrawn', 'withdraw', 'acme', undefined, 'withdrawn'],
      ['run queued', 'sync', 'acme', 'jobs', 'queued (job 42)'],
      ['account disabled', 'disable', 'acme', undefined, 'disabled'],
      ['account enabled', 'enable', 'acme', undefined, 'enabled'],
      ['account tested', 'test', 'acme', undefined, 'failed'],
    ]);
    for (const event of events) expect(event.component).toBe('console');
    expect(
      d
        .log()
        .map((l) => JSON.stringify(l))
        .join('\n'),
    ).not.toContain('/connect/');
  });

  it('answers each action with a page saying what was done and linking back; a new customer’s link is shown once on the console', async () => {
    const d = await start();
    const sync = await post(d, { action: 'sync', ...FORMS.sync, token: d.token() });
    expect(sync.page).toContain('A run of acme/jobs is queued');
    expect(sync.page).toContain('<a href="./">Back to the console</a>');
    const disabled = await post(d, { action: 'disable', ...FORMS.disable, token: d.token() });
    expect(disabled.page).toContain('The account acme is disabled');
    expect(disabled.page).toContain('Its schedules were removed (2)');
    const tested = await post(d, { action: 'test', ...FORMS.test, token: d.token() });
    expect(tested.page).toContain('The credentials of acme do not work for everything');
    expect(tested.page).toContain('not permitted (scope harvest:job_posts:list)');
    expect(tested.page).toContain('have an administrator authorize again');
    const invited = await post(d, { action: 'invite', ...FORMS.invite, token: d.token() });
    expect(invited.page).toContain('Connect link for newco');
    expect(invited.page).toContain(LINK_URL);
  });

  it('says why an operation refused (409) or failed (503) and that nothing was done; an unknown action is a 400', async () => {
    const d = await start({
      syncNow: async () => {
        throw new HiresyncError(
          'account acme is disabled: its runs are skipped until it is enabled, so no run was queued',
        );
      },
      setEnabled: async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      },
      withdrawLink: async () => false,
    });
    const refused = await post(d, { action: 'sync', ...FORMS.sync, token: d.token() });
    expect(refused.status).toBe(409);
    expect(refused.page).toContain('Nothing was done');
    expect(refused.page).toContain('account acme is disabled');
    const failed = await post(d, { action: 'disable', ...FORMS.disable, token: d.token() });
    expect(failed.status).toBe(503);
    expect(failed.page).toContain('Check that Postgres and Redis answer');
    const gone = await post(d, { action: 'withdraw', ...FORMS.withdraw, token: d.token() });
    expect(gone.status).toBe(409);
    expect(gone.page).toContain('is not pending any more');
    const unknown = await post(d, { action: 'drop-everything', account: 'acme', token: d.token() });
    expect(unknown.status).toBe(400);
    expect(
      d
        .log()
        .filter((l) => l.msg === 'console action refused')
        .map((l) => l.outcome),
    ).toEqual([
      'refused: account acme is disabled: its runs are skipped until it is enabled, so no run was queued',
      'failed: connect ECONNREFUSED 127.0.0.1:5432',
      'refused: the link 17 of acme is not pending any more (used, expired, withdrawn or removed): nothing was withdrawn',
      'unknown action',
    ]);
  });

  it('refuses the action when the spent tokens cannot be read (503), doing nothing', async () => {
    const d = await start();
    const options = { spendFormToken: async () => Promise.reject(new Error('Redis is gone')) };
    // The same server, its token store failing.
    const server = createServer(
      (req, res) =>
        void serveConsole(req, res, {
          password: new Secret(PASSWORD),
          secretKeys: [],
          publicUrl: undefined,
          readReport: async () => REPORT,
          links: {
            unavailable: undefined,
            create: async () => Promise.reject(new Error('not called')),
          },
          actions: { pendingLinks: async () => [] } as unknown as ConsoleActions,
          logger: captureLogger().logger,
          ...options,
        }),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const answer = await post(
      { ...d, url },
      { action: 'disable', account: 'acme', token: d.token() },
      { origin: url },
    );
    expect(answer.status).toBe(503);
    expect(answer.page).toContain('cannot tell whether this form was sent already');
  });
});
