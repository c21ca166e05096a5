// The simulator as the live service answers partner scopes, OAuth errors and
// its token endpoint's own window: resourceScopes, oauthErrorBodies and
// tokenEndpointWindow.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { grantRefreshToken } from '../../src/simulator/partner-browser.js';
import {
  PARTNER_CLIENT_ID,
  PARTNER_CLIENT_SECRET,
  type SimulatorOptions,
} from '../../src/simulator/simulator-options.js';

const started: ApiSimulator[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((sim) => sim.close()));
});

async function startSim(options: SimulatorOptions = {}): Promise<ApiSimulator> {
  const sim = await ApiSimulator.start(options);
  started.push(sim);
  return sim;
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** POSTs a form to the token endpoint as `user:password`. */
function tokenRequest(sim: ApiSimulator, form: Record<string, string>, user: string, pass: string) {
  return fetch(`${sim.authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: basic(user, pass),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(form).toString(),
  });
}

/** A partner access token of the default account, granted `partnerScopes`. */
async function partnerToken(sim: ApiSimulator): Promise<{ token: string; scope: unknown }> {
  const refresh = await grantRefreshToken(sim, 'default');
  const res = await tokenRequest(
    sim,
    { grant_type: 'refresh_token', refresh_token: refresh },
    PARTNER_CLIENT_ID,
    PARTNER_CLIENT_SECRET,
  );
  const body = (await res.json()) as { access_token: string; scope?: unknown };
  return { token: body.access_token, scope: body.scope };
}

const list = (sim: ApiSimulator, name: string, token: string) =>
  fetch(`${sim.url}/v3/${name}?per_page=1`, { headers: { authorization: `Bearer ${token}` } });

describe('the simulator with resourceScopes', () => {
  it('answers 403 naming the scope for a list the partner grant lacks, and serves the others', async () => {
    const sim = await startSim({
      resourceScopes: true,
      partnerScopes: ['harvest:jobs:list', 'harvest:tracking_links:list'],
    });
    const { token, scope } = await partnerToken(sim);
    expect(scope).toBe('harvest:jobs:list harvest:tracking_links:list');
    expect((await list(sim, 'jobs', token)).status).toBe(200);
    expect((await list(sim, 'tracking_links', token)).status).toBe(200);
    const refused = await list(sim, 'job_posts', token);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      message: 'Missing required scope: harvest:job_posts:list',
    });
    // Granted afterwards: the same token reads it.
    sim.setPartnerScopes('default', [
      'harvest:jobs:list',
      'harvest:job_posts:list',
      'harvest:tracking_links:list',
    ]);
    expect((await list(sim, 'job_posts', token)).status).toBe(200);
  });

  it('is off by default: a partner token reads every list', async () => {
    const sim = await startSim({ partnerScopes: ['harvest:jobs:list'] });
    const { token } = await partnerToken(sim);
    expect((await list(sim, 'job_posts', token)).status).toBe(200);
  });
});

describe('the simulator with oauthErrorBodies', () => {
  const refuseRefresh = async (options: SimulatorOptions) => {
    const sim = await startSim(options);
    const res = await tokenRequest(
      sim,
      { grant_type: 'refresh_token', refresh_token: 'never-issued' },
      PARTNER_CLIENT_ID,
      PARTNER_CLIENT_SECRET,
    );
    const badClient = await tokenRequest(sim, { grant_type: 'client_credentials' }, 'x', 'y');
    const transition = await fetch(`${sim.url}/auth/token`, {
      method: 'POST',
      headers: { authorization: basic('unknown-key', '') },
    });
    return [
      [res.status, await res.json()],
      [badClient.status, await badClient.json()],
      [transition.status, await transition.json()],
    ];
  };

  it('true: every token-endpoint error in the RFC 6749 shape, 400 or 401', async () => {
    expect(await refuseRefresh({ oauthErrorBodies: true })).toEqual([
      [400, { error: 'invalid_grant', error_description: 'unknown refresh token' }],
      [401, { error: 'invalid_client', error_description: 'Client authentication failed' }],
      [401, { error: 'invalid_client', error_description: 'unknown API key' }],
    ]);
  });

  it('false: the same errors as {"message": …}', async () => {
    expect(await refuseRefresh({ oauthErrorBodies: false })).toEqual([
      [400, { message: 'invalid_grant: unknown refresh token' }],
      [401, { message: 'invalid_client: Client authentication failed' }],
      [401, { message: 'invalid_client: unknown API key' }],
    ]);
  });

  it('unset: as before, RFC 6749 at the OAuth endpoint and {"message"} at the transition endpoint', async () => {
    expect(await refuseRefresh({})).toEqual([
      [400, { error: 'invalid_grant', error_description: 'unknown refresh token' }],
      [401, { error: 'invalid_client', error_description: 'Client authentication failed' }],
      [401, { message: 'Unauthorized' }],
    ]);
  });
});

describe('the simulator with tokenEndpointWindow', () => {
  it('answers token requests beyond the limit 429 with Retry-After, apart from the lists window', async () => {
    const sim = await startSim({
      tokenEndpointWindow: { limit: 2, windowMs: 60_000 },
      rateLimit: { limit: 100, windowMs: 1000 },
    });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 3; i += 1) {
      const res = await tokenRequest(
        sim,
        { grant_type: 'client_credentials' },
        'demo-client',
        'demo-secret',
      );
      statuses.push(res.status);
      if (res.status === 429) retryAfter = res.headers.get('retry-after');
      await res.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(50);
    expect(sim.stats.tokenRequestsRateLimited).toBe(1);
    expect(sim.stats.rateLimited).toBe(0);
  });
});
