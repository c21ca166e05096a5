import type { ApiSimulator } from '../../src/simulator/api-simulator.js';

/**
 * A customer of the simulator approves the partner app, whose own web app
 * exchanges the code (authorization code grant): the refresh token hiresync
 * is then given (`accounts add --partner`).
 */
export async function grantRefreshToken(sim: ApiSimulator, account = 'acme'): Promise<string> {
  const redirectUri = 'http://127.0.0.1:1/callback';
  const authorize = new URL(sim.authorizeUrl);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: 'partner-client',
    redirect_uri: redirectUri,
    state: 'st',
    sim_account: account,
  }))
    authorize.searchParams.set(k, v);
  const code = new URL(
    (await fetch(authorize, { redirect: 'manual' })).headers.get('location') as string,
  ).searchParams.get('code') as string;
  const res = await fetch(`${sim.authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from('partner-client:partner-secret').toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
    }).toString(),
  });
  return ((await res.json()) as { refresh_token: string }).refresh_token;
}
