/**
 * What a simulator serves, read over HTTP as an API client reads it: a
 * client-credentials token, then each list walked by its `next` links. Tests
 * that compute expected answers from the records the simulator served (the
 * analytics truth tests) start here rather than from the simulator's insides.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { SHOW_HIDDEN_PARAMETER, WORLD_RESOURCES } from '../../src/simulator/world/world.js';

export type ServedRecord = Record<string, unknown>;

/** Whose records to read: an account's client credentials (default: the default account's demo ones). */
export interface ServedRecordsOptions {
  clientId?: string;
  clientSecret?: string;
  /** Parameters of the first request, e.g. `include_defaults=true` or `updated_at=gte|…`. */
  query?: string;
}

/** A client-credentials access token of `clientId` from the simulator's token endpoint. */
export async function simulatorToken(
  sim: ApiSimulator,
  clientId = 'demo-client',
  clientSecret = 'demo-secret',
): Promise<string> {
  const res = await fetch(`${sim.authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  if (res.status !== 200) throw new Error(`token request for ${clientId}: ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/**
 * Every record of `resource` the simulator lists (id-descending, as served),
 * walked with per_page 500; a 429 waits its Retry-After and asks again.
 */
export async function servedRecords(
  sim: ApiSimulator,
  resource: string,
  options: ServedRecordsOptions = {},
): Promise<ServedRecord[]> {
  const token = await simulatorToken(sim, options.clientId, options.clientSecret);
  const records: ServedRecord[] = [];
  let url: string | undefined =
    `${sim.url}/v3/${resource}?per_page=500${options.query ? `&${options.query}` : ''}`;
  while (url) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    if (res.status === 429) {
      await sleep(1000 * Number(res.headers.get('retry-after') ?? 1));
      continue;
    }
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    records.push(...((await res.json()) as ServedRecord[]));
    url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  }
  return records;
}

/** The lists a v3 world is made of: the world's own and the catalog's it names. */
export const WORLD_LISTS: readonly string[] = [
  ...WORLD_RESOURCES,
  'jobs',
  'job_posts',
  'tracking_links',
  'sources',
  'referrers',
  'job_boards',
];

/**
 * Every list of an account's v3 world as a client syncing all of it reads
 * them: hidden rows included (`include_defaults=true` on rejection_reasons,
 * `show_service_accounts=true` on users, `active=false` walked too for job
 * posts), by resource name.
 */
export async function servedWorld(
  sim: ApiSimulator,
  options: Omit<ServedRecordsOptions, 'query'> = {},
): Promise<Record<string, ServedRecord[]>> {
  const out: Record<string, ServedRecord[]> = {};
  for (const resource of WORLD_LISTS) {
    const parameter = SHOW_HIDDEN_PARAMETER[resource];
    out[resource] = await servedRecords(sim, resource, {
      ...options,
      ...(parameter ? { query: `${parameter}=true` } : {}),
    });
  }
  const inactive = await servedRecords(sim, 'job_posts', { ...options, query: 'active=false' });
  const seen = new Set((out.job_posts ?? []).map((p) => p.id));
  out.job_posts = [...(out.job_posts ?? []), ...inactive.filter((p) => !seen.has(p.id))];
  return out;
}
