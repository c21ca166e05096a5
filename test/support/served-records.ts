import type { ApiRecord } from './analytics-reference/index.js';

/** A client of the simulator's API, as an integration would be: its token and base URL. */
export interface ApiReader {
  baseUrl: string;
  token: string;
}

/** A client credentials token from `authUrl`'s token endpoint. */
export async function apiReader(
  baseUrl: string,
  authUrl: string,
  clientId: string,
  clientSecret: string,
): Promise<ApiReader> {
  const res = await fetch(`${authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}`);
  const { access_token: token } = (await res.json()) as { access_token: string };
  return { baseUrl, token };
}

/** Query parameters every first request of a list carries (as hiresync's declarations send them). */
const CONSTANTS: Readonly<Record<string, string>> = {
  rejection_reasons: 'include_defaults=true',
  users: 'show_service_accounts=true',
};

/**
 * Every record of the list `/v3/<name>`: the first page with per_page=500
 * (and the list's constant parameters, and `query` when given), then each
 * `Link: rel="next"` URL.
 */
export async function servedRecords(
  reader: ApiReader,
  name: string,
  query?: string,
): Promise<ApiRecord[]> {
  const constant = CONSTANTS[name];
  let url: string | undefined =
    `${reader.baseUrl}/v3/${name}?per_page=500${constant ? `&${constant}` : ''}${query ? `&${query}` : ''}`;
  const records: ApiRecord[] = [];
  const seen = new Set<string>();
  while (url) {
    if (seen.has(url)) throw new Error(`next link loops: ${url}`);
    seen.add(url);
    const res: Response = await fetch(url, {
      headers: { authorization: `Bearer ${reader.token}` },
    });
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
    records.push(...((await res.json()) as ApiRecord[]));
    url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  }
  return records;
}

/**
 * Every record of each list in `names`, by name: its default walk, then the
 * extra walks `extraWalks` names for it (as HIRESYNC_EXTRA_WALKS's
 * `job_posts?active=false` reads the posts the default walk leaves out).
 */
export async function servedLists(
  reader: ApiReader,
  names: readonly string[],
  extraWalks: Readonly<Record<string, readonly string[]>> = {},
): Promise<Record<string, ApiRecord[]>> {
  const lists: Record<string, ApiRecord[]> = {};
  for (const name of names) {
    lists[name] = await servedRecords(reader, name);
    for (const query of extraWalks[name] ?? []) {
      lists[name].push(...(await servedRecords(reader, name, query)));
    }
  }
  return lists;
}
