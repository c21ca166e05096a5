import type { ApiSimulator } from './api-simulator.js';
import { PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET } from './simulator-options.js';

/**
 * A customer of the simulator (`account`) approves the partner app, and the
 * partner's own web app exchanges the code (authorization code grant): the
 * refresh token a partner then hands hiresync (`accounts add --partner`).
 * For tests, the soak and benchmarks; `hiresync accounts authorize` is the
 * other way in.
 */
export async function grantRefreshToken(sim: ApiSimulator, account: string): Promise<string> {
  const redirectUri = 'http://127.0.0.1:1/callback';
  const authorize = new URL(sim.authorizeUrl);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: PARTNER_CLIENT_ID,
    redirect_uri: redirectUri,
    state: 'st',
    sim_account: account,
  }))
    authorize.searchParams.set(k, v);
  const approved = await fetch(authorize, { redirect: 'manual' });
  const code = new URL(approved.headers.get('location') ?? 'http://invalid/').searchParams.get(
    'code',
  );
  if (!code) throw new Error(`the simulator did not approve the partner app for ${account}`);
  const res = await fetch(`${sim.authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${PARTNER_CLIENT_ID}:${PARTNER_CLIENT_SECRET}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
    }).toString(),
  });
  const token = ((await res.json()) as { refresh_token?: unknown }).refresh_token;
  if (typeof token !== 'string') throw new Error(`no refresh token for ${account} (${res.status})`);
  return token;
}
