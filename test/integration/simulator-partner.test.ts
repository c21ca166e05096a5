import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { simulatedAccounts } from '../../src/simulator/simulated-accounts.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import { runSimulate } from '../support/run-simulate.js';

const started: ApiSimulator[] = [];

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(started.splice(0).map((sim) => sim.close()));
});

/** Moves the clock (Date only: sockets and timers run as usual) `ms` ahead. */
function advanceClock(ms: number): void {
  vi.setSystemTime(Date.now() + ms);
}

async function startSim(options: SimulatorOptions = {}): Promise<ApiSimulator> {
  const sim = await ApiSimulator.start(options);
  started.push(sim);
  return sim;
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** The partner's loopback callback; nothing listens there, redirects are read, not followed. */
const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

interface Redirect {
  status: number;
  /** The redirect's target, when the answer is one. */
  location: URL | undefined;
  body: string;
}

/** An authorization request, as a browser sends it; the redirect is returned, not followed. */
async function authorize(sim: ApiSimulator, params: Record<string, string>): Promise<Redirect> {
  const res = await fetch(`${sim.authorizeUrl}?${new URLSearchParams(params)}`, {
    redirect: 'manual',
  });
  const location = res.headers.get('location');
  return {
    status: res.status,
    location: location === null ? undefined : new URL(location),
    body: await res.text(),
  };
}

/** A valid authorization request's parameters, with `overrides`. */
const authorization = (overrides: Record<string, string> = {}) => ({
  response_type: 'code',
  client_id: 'partner-client',
  redirect_uri: REDIRECT_URI,
  state: 'st-42',
  ...overrides,
});

interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** A token request of the partner app (HTTP Basic client authentication). */
async function tokenRequest(
  sim: ApiSimulator,
  form: Record<string, string>,
  [clientId, secret] = ['partner-client', 'partner-secret'],
): Promise<TokenAnswer> {
  const res = await fetch(`${sim.authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: basic(clientId, secret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(form).toString(),
  });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    headers: res.headers,
  };
}

/** The code of an approved authorization request. */
async function codeFor(sim: ApiSimulator, overrides: Record<string, string> = {}): Promise<string> {
  const answer = await authorize(sim, authorization(overrides));
  expect(answer.status).toBe(302);
  const code = answer.location?.searchParams.get('code');
  expect(code).toBeTruthy();
  return code as string;
}

interface Tokens {
  access: string;
  refresh: string;
}

/** The whole flow: authorize (for `account` when given) and exchange the code. */
async function connect(sim: ApiSimulator, account?: string): Promise<Tokens> {
  const code = await codeFor(sim, account === undefined ? {} : { sim_account: account });
  const answer = await tokenRequest(sim, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
  });
  expect(answer.status).toBe(200);
  return {
    access: answer.body.access_token as string,
    refresh: answer.body.refresh_token as string,
  };
}

/** A refresh; the answer as sent. */
const refresh = (sim: ApiSimulator, refreshToken: string) =>
  tokenRequest(sim, { grant_type: 'refresh_token', refresh_token: refreshToken });

/** A refresh expected to succeed with a rotated refresh token. */
async function rotate(sim: ApiSimulator, refreshToken: string): Promise<Tokens> {
  const answer = await refresh(sim, refreshToken);
  expect(answer.status).toBe(200);
  return {
    access: answer.body.access_token as string,
    refresh: answer.body.refresh_token as string,
  };
}

/** One jobs list request: its status and ids. */
async function listJobs(
  sim: ApiSimulator,
  token: string,
): Promise<{ status: number; ids: number[] }> {
  const res = await fetch(`${sim.url}/v3/jobs?per_page=500`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const body = (await res.json()) as unknown;
  const ids = Array.isArray(body) ? body.map((r) => (r as { id: number }).id) : [];
  return { status: res.status, ids };
}

/** Ids of account `name`'s jobs, newest first, as the simulator holds them. */
function jobIdsOf(sim: ApiSimulator, name: string): number[] {
  const dataset = sim.datasetOf(name);
  const ids: number[] = [];
  for (let i = dataset.size('jobs') - 1; i >= 0; i -= 1)
    if (dataset.isPresent('jobs', i)) ids.push(dataset.idOf('jobs', i));
  return ids;
}

const invalidGrant = expect.objectContaining({ error: 'invalid_grant' });

describe('the partner flow (authorization code grant)', () => {
  it("authorizes, redirects with code and state, exchanges the code, and the access token reads that account's data", async () => {
    const sim = await startSim({ accounts: simulatedAccounts(2, { records: 3 }) });
    const answer = await authorize(sim, authorization({ sim_account: 'acct002' }));
    expect(answer.status).toBe(302);
    const location = answer.location as URL;
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('state')).toBe('st-42');
    const code = location.searchParams.get('code') as string;
    expect(code).toBeTruthy();

    const tokens = await tokenRequest(sim, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get('cache-control')).toBe('no-store');
    expect(tokens.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.any(String),
    });
    const jobs = await listJobs(sim, tokens.body.access_token as string);
    expect(jobs.status).toBe(200);
    expect(jobs.ids).toEqual(jobIdsOf(sim, 'acct002'));
    expect(jobs.ids).not.toEqual(jobIdsOf(sim, 'acct001'));
    expect(sim.statsOf('acct002').listRequests).toBe(1);
    expect(sim.partnerStats('acct002')).toMatchObject({ codesIssued: 1, codesRedeemed: 1 });
    expect(sim.partnerStats('acct001')).toMatchObject({ codesIssued: 0, codesRedeemed: 0 });
  });

  it('approves for the default account unless authorizeAs or sim_account names another', async () => {
    const sim = await startSim({ accounts: simulatedAccounts(2, { records: 3 }) });
    const first = await connect(sim);
    expect((await listJobs(sim, first.access)).ids).toEqual(jobIdsOf(sim, 'default').slice(0, 500));
    sim.authorizeAs('acct001');
    const second = await connect(sim);
    expect((await listJobs(sim, second.access)).ids).toEqual(jobIdsOf(sim, 'acct001'));
    const third = await connect(sim, 'acct002');
    expect((await listJobs(sim, third.access)).ids).toEqual(jobIdsOf(sim, 'acct002'));
    expect((await authorize(sim, authorization({ sim_account: 'nobody' }))).status).toBe(400);
  });

  it('echoes the scope requested in the token response', async () => {
    const sim = await startSim({ partnerScopes: ['jobs:read', 'tracking_links:read'] });
    const code = await codeFor(sim, { scope: 'jobs:read' });
    const tokens = await tokenRequest(sim, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
    });
    expect(tokens.body.scope).toBe('jobs:read');
    const refused = await authorize(sim, authorization({ scope: 'candidates:write' }));
    expect(refused.location?.searchParams.get('error')).toBe('invalid_scope');
  });

  it("counts partner tokens against the authorizing account's own rate window", async () => {
    const sim = await startSim({
      accounts: simulatedAccounts(1, { records: 3, rateLimit: { limit: 1, windowMs: 60_000 } }),
    });
    const tokens = await connect(sim, 'acct001');
    expect((await listJobs(sim, tokens.access)).status).toBe(200);
    expect((await listJobs(sim, tokens.access)).status).toBe(429);
    expect(sim.statsOf('acct001').rateLimited).toBe(1);
    expect(sim.statsOf('default').listRequests).toBe(0);
  });
});

describe('authorization requests the simulator refuses', () => {
  it('answers 400 without redirecting to an unknown client or a redirect_uri off loopback', async () => {
    const sim = await startSim({ accounts: simulatedAccounts(1) });
    const refusals: Record<string, string>[] = [
      { client_id: 'acct001-client' },
      { client_id: 'someone-else' },
      { redirect_uri: 'https://partner.example/callback' },
      { redirect_uri: 'http://192.168.1.10:8080/callback' },
      { redirect_uri: 'http://127.0.0.1:53682/callback#fragment' },
      { redirect_uri: 'not a url' },
    ];
    for (const overrides of refusals) {
      const answer = await authorize(sim, authorization(overrides));
      expect(answer.status, JSON.stringify(overrides)).toBe(400);
      expect(answer.location).toBeUndefined();
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_request' });
    }
    const { client_id: _, ...withoutClient } = authorization();
    expect((await authorize(sim, withoutClient)).status).toBe(400);
  });

  it('redirects other errors with error and the state (RFC 6749 4.1.2.1)', async () => {
    const sim = await startSim();
    const wrongType = await authorize(sim, authorization({ response_type: 'token' }));
    expect(wrongType.status).toBe(302);
    expect(wrongType.location?.searchParams.get('error')).toBe('unsupported_response_type');
    expect(wrongType.location?.searchParams.get('state')).toBe('st-42');
    const { state: _, ...withoutState } = authorization();
    const noState = await authorize(sim, withoutState);
    expect(noState.location?.searchParams.get('error')).toBe('invalid_request');
    expect(noState.location?.searchParams.has('code')).toBe(false);
  });

  it('a denied authorization redirects with access_denied and the state, and the next is approved', async () => {
    const sim = await startSim();
    sim.denyNextAuthorization();
    const denied = await authorize(sim, authorization({ state: 'deny-me' }));
    expect(denied.status).toBe(302);
    expect(denied.location?.searchParams.get('error')).toBe('access_denied');
    expect(denied.location?.searchParams.get('state')).toBe('deny-me');
    expect(denied.location?.searchParams.has('code')).toBe(false);
    expect(sim.partnerStats('default')).toMatchObject({ authorizationsDenied: 1, codesIssued: 0 });
    await codeFor(sim);
  });
});

describe('the token endpoint of the partner app', () => {
  it('refuses a wrong client secret (401 invalid_client) and a code with another redirect_uri', async () => {
    const sim = await startSim();
    const code = await codeFor(sim);
    const wrongSecret = await tokenRequest(
      sim,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI },
      ['partner-client', 'not-the-secret'],
    );
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body).toMatchObject({ error: 'invalid_client' });
    const otherRedirect = await tokenRequest(sim, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://127.0.0.1:1/elsewhere',
    });
    expect(otherRedirect.status).toBe(400);
    expect(otherRedirect.body).toEqual(invalidGrant);
    const clientCredentials = await tokenRequest(sim, { grant_type: 'client_credentials' });
    expect(clientCredentials.body).toMatchObject({ error: 'unauthorized_client' });
  });

  it('a code works once: its reuse answers invalid_grant and revokes the tokens it gave', async () => {
    const sim = await startSim();
    const code = await codeFor(sim);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI };
    const first = await tokenRequest(sim, form);
    expect(first.status).toBe(200);
    const again = await tokenRequest(sim, form);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(invalidGrant);
    expect((await listJobs(sim, first.body.access_token as string)).status).toBe(401);
    expect((await refresh(sim, first.body.refresh_token as string)).body).toEqual(invalidGrant);
    expect(sim.partnerStats('default')).toMatchObject({ codesRedeemed: 1, invalidGrants: 2 });
  });

  it('a code expires', async () => {
    const sim = await startSim({ authorizationCodeTtlSeconds: 0.2 });
    const code = await codeFor(sim);
    await sleep(300);
    const late = await tokenRequest(sim, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
    });
    expect(late.status).toBe(400);
    expect(late.body).toEqual(invalidGrant);
  });

  it('rotates the refresh token on each of 3 refreshes and refuses every retired one with invalid_grant', async () => {
    const sim = await startSim({ partnerAccessTokenTtlSeconds: 15 });
    let tokens = await connect(sim);
    const retired: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const answer = await refresh(sim, tokens.refresh);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ token_type: 'Bearer', expires_in: 15 });
      const next = {
        access: answer.body.access_token as string,
        refresh: answer.body.refresh_token as string,
      };
      expect(next.refresh).toBeTruthy();
      expect([...retired, tokens.refresh]).not.toContain(next.refresh);
      retired.push(tokens.refresh);
      tokens = next;
      expect((await listJobs(sim, tokens.access)).status).toBe(200);
      const reused = await refresh(sim, retired.at(-1) as string);
      expect(reused.status).toBe(400);
      expect(reused.body).toEqual(invalidGrant);
    }
    for (const old of retired) expect((await refresh(sim, old)).body).toEqual(invalidGrant);
    // The newest still works: a retired token's reuse does not end the authorization by default.
    await rotate(sim, tokens.refresh);
    expect(sim.partnerStats('default')).toMatchObject({ refreshes: 4, invalidGrants: 6 });
  });

  it('without rotation a refresh answers no refresh token and the one held stays valid', async () => {
    const sim = await startSim({ rotateRefreshTokens: false });
    const tokens = await connect(sim);
    for (let i = 0; i < 2; i += 1) {
      const answer = await refresh(sim, tokens.refresh);
      expect(answer.status).toBe(200);
      expect(answer.body.refresh_token).toBeUndefined();
    }
  });

  it('with reuse detection a retired refresh token ends the whole authorization', async () => {
    const sim = await startSim({ revokeOnRefreshTokenReuse: true });
    const first = await connect(sim);
    const second = await rotate(sim, first.refresh);
    expect((await refresh(sim, first.refresh)).body).toEqual(invalidGrant);
    expect((await refresh(sim, second.refresh)).body).toEqual(invalidGrant);
    expect((await listJobs(sim, second.access)).status).toBe(401);
  });

  it('a refresh token unused for refreshTokenTtlSeconds expires; each use starts a new one', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const sim = await startSim({ refreshTokenTtlSeconds: 1 });
    let tokens = await connect(sim);
    // Three uses 0.9 s apart: 2.7 s in all, longer than one lifetime.
    for (let i = 0; i < 3; i += 1) {
      advanceClock(900);
      tokens = await rotate(sim, tokens.refresh);
    }
    advanceClock(1000);
    const late = await refresh(sim, tokens.refresh);
    expect(late.status).toBe(400);
    expect(late.body).toEqual(invalidGrant);
  });

  it('partner access tokens expire after partnerAccessTokenTtlSeconds and a refresh gives a working one', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const sim = await startSim({ partnerAccessTokenTtlSeconds: 0.8, tokenTtlSeconds: 3600 });
    const tokens = await connect(sim);
    advanceClock(799);
    expect((await listJobs(sim, tokens.access)).status).toBe(200);
    advanceClock(1);
    expect((await listJobs(sim, tokens.access)).status).toBe(401);
    const renewed = await rotate(sim, tokens.refresh);
    expect((await listJobs(sim, renewed.access)).status).toBe(200);
  });
});

describe('revoking and losing partner authorizations', () => {
  it("revokeAuthorization answers that account's refreshes invalid_grant and its lists 401, and leaves others working", async () => {
    const sim = await startSim({ accounts: simulatedAccounts(2, { records: 3 }) });
    const a = await connect(sim, 'acct001');
    const b = await connect(sim, 'acct002');
    sim.revokeAuthorization('acct001');
    const refused = await refresh(sim, a.refresh);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(invalidGrant);
    expect((await listJobs(sim, a.access)).status).toBe(401);
    expect((await listJobs(sim, b.access)).status).toBe(200);
    await rotate(sim, b.refresh);
    expect(sim.partnerStats('acct001')).toMatchObject({
      invalidGrants: 1,
      authorizationsRevoked: 1,
    });
    // Authorizing again works.
    const again = await connect(sim, 'acct001');
    expect((await listJobs(sim, again.access)).status).toBe(200);
  });

  it('drop-after-rotation: the refresh rotates server-side, the response never arrives, the old token is refused', async () => {
    const sim = await startSim({ accounts: simulatedAccounts(1, { records: 3 }) });
    const tokens = await connect(sim, 'acct001');
    const seen: string[] = [];
    const stop = sim.onRefresh((account) => {
      seen.push(account);
    });
    sim.dropNextRefreshResponse('acct001');
    await expect(refresh(sim, tokens.refresh)).rejects.toThrow();
    stop();
    expect(seen).toEqual(['acct001']);
    const retry = await refresh(sim, tokens.refresh);
    expect(retry.status).toBe(400);
    expect(retry.body).toEqual(invalidGrant);
    expect(sim.partnerStats('acct001')).toMatchObject({
      refreshes: 1,
      refreshResponsesDropped: 1,
      invalidGrants: 1,
    });
    // The access token the client held before still reads until it expires.
    expect((await listJobs(sim, tokens.access)).status).toBe(200);
  });

  it('onRefresh runs after the rotation and before the response is written', async () => {
    const sim = await startSim();
    const tokens = await connect(sim);
    let released: () => void = () => undefined;
    sim.onRefresh(
      () =>
        new Promise<void>((resolve) => {
          released = resolve;
        }),
    );
    let answered = false;
    const pending = refresh(sim, tokens.refresh).then((answer) => {
      answered = true;
      return answer;
    });
    await expect.poll(() => sim.partnerStats('default').refreshes).toBe(1);
    await sleep(50);
    expect(answered).toBe(false);
    released();
    expect((await pending).status).toBe(200);
  });
});

describe('hiresync simulate --partner', () => {
  it('prints the partner app credentials and the authorize URL, which approves', async () => {
    const { out, stop } = await runSimulate(['--partner']);
    try {
      expect(out).toContain(
        'partner app: HIRESYNC_PARTNER_CLIENT_ID=partner-client  (secret: partner-secret)',
      );
      const authorizeUrl = /HIRESYNC_AUTHORIZE_URL=(\S+)/.exec(out)?.[1] as string;
      expect(authorizeUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize$/);
      const res = await fetch(`${authorizeUrl}?${new URLSearchParams(authorization())}`, {
        redirect: 'manual',
      });
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get('location') as string).searchParams.get('code')).toBeTruthy();
    } finally {
      await stop();
    }
  });

  it('prints nothing about the partner app without --partner', async () => {
    const { out, stop } = await runSimulate([]);
    await stop();
    expect(out).not.toContain('PARTNER');
    expect(out).not.toContain('AUTHORIZE');
  });
});
