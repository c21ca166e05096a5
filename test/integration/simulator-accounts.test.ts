import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/commands/command.js';
import { simulate } from '../../src/commands/simulate.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import {
  type SimulatedAccount,
  simulatedAccounts,
} from '../../src/simulator/simulated-accounts.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';

const started: ApiSimulator[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((sim) => sim.close()));
});

async function startSim(options: SimulatorOptions): Promise<ApiSimulator> {
  const sim = await ApiSimulator.start(options);
  started.push(sim);
  return sim;
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A token by the client credentials grant. */
async function clientToken(sim: ApiSimulator, clientId: string, secret: string): Promise<string> {
  const res = await fetch(`${sim.authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: basic(clientId, secret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** A token from the transition endpoint, for a version 1/2 key. */
async function keyToken(sim: ApiSimulator, key: string): Promise<string> {
  const res = await fetch(`${sim.url}/auth/token`, {
    method: 'POST',
    headers: { authorization: basic(key, '') },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

interface Answer {
  status: number;
  ids: number[];
  next: string | undefined;
  headers: Headers;
}

/** One list request (a path, or a next link's full URL). */
async function list(sim: ApiSimulator, token: string, pathOrUrl: string): Promise<Answer> {
  const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${sim.url}${pathOrUrl}`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as unknown;
  const ids = Array.isArray(body) ? body.map((r) => (r as { id: number }).id) : [];
  const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  return { status: res.status, ids, next, headers: res.headers };
}

/** Every id of a list, following next links. */
async function walk(sim: ApiSimulator, token: string, path: string): Promise<number[]> {
  const ids: number[] = [];
  let target: string | undefined = path;
  while (target) {
    const page = await list(sim, token, target);
    expect(page.status).toBe(200);
    ids.push(...page.ids);
    target = page.next;
  }
  return ids;
}

const alpha: SimulatedAccount = {
  name: 'alpha',
  clientId: 'alpha-client',
  clientSecrets: ['alpha-secret'],
  apiKeys: ['alpha-key'],
  dataset: { seed: 11, idOffset: 1_000_000, counts: { jobs: 12, job_posts: 5, tracking_links: 7 } },
};
const beta: SimulatedAccount = {
  name: 'beta',
  clientId: 'beta-client',
  clientSecrets: ['beta-secret'],
  dataset: { seed: 22, idOffset: 2_000_000, counts: { jobs: 9, job_posts: 4, tracking_links: 6 } },
};

describe('a simulator of several accounts', () => {
  it('serves each account its own data to its own tokens', async () => {
    const sim = await startSim({ accounts: [alpha, beta] });
    const a = await walk(
      sim,
      await clientToken(sim, 'alpha-client', 'alpha-secret'),
      '/v3/jobs?per_page=5',
    );
    const b = await walk(
      sim,
      await clientToken(sim, 'beta-client', 'beta-secret'),
      '/v3/jobs?per_page=5',
    );
    expect(a).toEqual(
      [...sim.datasetOf('alpha').presentIndexes('jobs')].map((i) =>
        sim.datasetOf('alpha').idOf('jobs', i),
      ),
    );
    expect(a).toHaveLength(12);
    expect(b).toHaveLength(9);
    expect(a.filter((id) => b.includes(id))).toEqual([]);
    // The content differs too, not only the ids.
    const recordA = sim.datasetOf('alpha').record('tracking_links', 0) as Record<string, unknown>;
    const recordB = sim.datasetOf('beta').record('tracking_links', 0) as Record<string, unknown>;
    expect(recordA.token).not.toEqual(recordB.token);
    expect(recordA.credited_to).not.toEqual(recordB.credited_to);
  });

  it('keeps the top-level options as the default account, with the default credentials and data', async () => {
    const sim = await startSim({ dataset: { counts: { jobs: 3 } }, accounts: [alpha] });
    expect(sim.accountNames).toEqual(['default', 'alpha']);
    expect(sim.datasetOf('default')).toBe(sim.dataset);
    const ids = await walk(sim, await clientToken(sim, 'demo-client', 'demo-secret'), '/v3/jobs');
    expect(ids).toEqual([2, 1, 0].map((i) => sim.dataset.idOf('jobs', i)));
  });

  it("gives account A's token A's records and never B's", async () => {
    const sim = await startSim({ accounts: [alpha, beta] });
    const tokenA = await clientToken(sim, 'alpha-client', 'alpha-secret');
    const betaIds = new Set(
      await walk(sim, await clientToken(sim, 'beta-client', 'beta-secret'), '/v3/tracking_links'),
    );
    const seen = await walk(sim, tokenA, '/v3/tracking_links?per_page=2');
    expect(seen).toHaveLength(7);
    expect(seen.some((id) => betaIds.has(id))).toBe(false);
    // An API key of A reads A's data as well.
    expect(await walk(sim, await keyToken(sim, 'alpha-key'), '/v3/tracking_links')).toEqual(seen);
  });

  it("refuses with 422 a cursor of account A presented with B's token", async () => {
    const sim = await startSim({ accounts: [alpha, beta] });
    const first = await list(
      sim,
      await clientToken(sim, 'alpha-client', 'alpha-secret'),
      '/v3/jobs?per_page=2',
    );
    expect(first.next).toBeDefined();
    const crossed = await list(
      sim,
      await clientToken(sim, 'beta-client', 'beta-secret'),
      first.next as string,
    );
    expect(crossed.status).toBe(422);
  });

  it("refuses one account's credentials with another's secret", async () => {
    const sim = await startSim({ accounts: [alpha, beta] });
    const res = await fetch(`${sim.authUrl}/token`, {
      method: 'POST',
      headers: {
        authorization: basic('alpha-client', 'beta-secret'),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(res.status).toBe(401);
  });

  it('counts each account against its own rate window: A gets 429 while B still gets 200', async () => {
    const sim = await startSim({
      rateLimit: { limit: 2, windowMs: 60_000 },
      rateLimitHeaders: true,
      accounts: [alpha, beta],
    });
    const tokenA = await clientToken(sim, 'alpha-client', 'alpha-secret');
    const tokenB = await clientToken(sim, 'beta-client', 'beta-secret');
    const a1 = await list(sim, tokenA, '/v3/jobs');
    expect(a1.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await list(sim, tokenA, '/v3/jobs')).headers.get('x-ratelimit-remaining')).toBe('0');
    const a3 = await list(sim, tokenA, '/v3/jobs');
    expect(a3.status).toBe(429);
    expect(Number(a3.headers.get('retry-after'))).toBeGreaterThan(0);
    const b1 = await list(sim, tokenB, '/v3/jobs');
    expect(b1.status).toBe(200);
    expect(b1.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(b1.headers.get('x-ratelimit-limit')).toBe('2');
    expect(sim.statsOf('alpha')).toMatchObject({
      listRequests: 3,
      rateLimited: 1,
      tokensIssued: 1,
    });
    expect(sim.statsOf('beta')).toMatchObject({ listRequests: 1, rateLimited: 0, tokensIssued: 1 });
    expect(sim.statsOf('alpha').byStatus).toEqual({ 200: 2, 429: 1 });
    expect(sim.stats).toMatchObject({ listRequests: 4, rateLimited: 1, tokensIssued: 2 });
  });

  it("applies an account's own rate limit over the top-level one, and none when it says null", async () => {
    const sim = await startSim({
      rateLimit: { limit: 1, windowMs: 60_000 },
      accounts: [
        { ...alpha, rateLimit: { limit: 3, windowMs: 60_000 } },
        { ...beta, rateLimit: null },
      ],
    });
    const tokenA = await clientToken(sim, 'alpha-client', 'alpha-secret');
    const statusesA = [];
    for (let i = 0; i < 4; i += 1) statusesA.push((await list(sim, tokenA, '/v3/jobs')).status);
    expect(statusesA).toEqual([200, 200, 200, 429]);
    const tokenB = await clientToken(sim, 'beta-client', 'beta-secret');
    for (let i = 0; i < 5; i += 1) {
      const page = await list(sim, tokenB, '/v3/jobs');
      expect(page.status).toBe(200);
      expect(page.headers.get('x-ratelimit-remaining')).toBeNull();
    }
  });

  it("revoking A's tokens answers A 401 and leaves B working", async () => {
    const sim = await startSim({ accounts: [alpha, beta] });
    const tokenA = await clientToken(sim, 'alpha-client', 'alpha-secret');
    const tokenB = await clientToken(sim, 'beta-client', 'beta-secret');
    sim.revokeTokens('alpha');
    expect((await list(sim, tokenA, '/v3/jobs')).status).toBe(401);
    expect((await list(sim, tokenB, '/v3/jobs')).status).toBe(200);
    // A new token of A works again.
    expect(
      (await list(sim, await clientToken(sim, 'alpha-client', 'alpha-secret'), '/v3/jobs')).status,
    ).toBe(200);
    sim.expireTokens('beta');
    expect((await list(sim, tokenB, '/v3/jobs')).status).toBe(401);
  });

  it('a forbidden account answers 403 on lists while another answers 200, until allowed again', async () => {
    const sim = await startSim({ accounts: [{ ...alpha, forbidden: true }, beta] });
    const tokenA = await clientToken(sim, 'alpha-client', 'alpha-secret');
    const tokenB = await clientToken(sim, 'beta-client', 'beta-secret');
    expect((await list(sim, tokenA, '/v3/job_posts')).status).toBe(403);
    expect((await list(sim, tokenB, '/v3/job_posts')).status).toBe(200);
    sim.setForbidden('alpha', false);
    sim.setForbidden('beta', true);
    expect((await list(sim, tokenA, '/v3/job_posts')).status).toBe(200);
    expect((await list(sim, tokenB, '/v3/job_posts')).status).toBe(403);
    expect(sim.statsOf('beta').byStatus).toEqual({ 200: 1, 403: 1 });
  });

  it("applies a fault injected for one account to that account's requests only", async () => {
    const sim = await startSim({ accounts: [alpha, beta] });
    const tokenA = await clientToken(sim, 'alpha-client', 'alpha-secret');
    const tokenB = await clientToken(sim, 'beta-client', 'beta-secret');
    sim.inject({ kind: 'status', status: 503 }, 1, 'beta');
    expect((await list(sim, tokenA, '/v3/jobs')).status).toBe(200);
    expect((await list(sim, tokenB, '/v3/jobs')).status).toBe(503);
    expect((await list(sim, tokenB, '/v3/jobs')).status).toBe(200);
  });

  it("changes one account's data through datasetOf, leaving the others as they were", async () => {
    const sim = await startSim({ accounts: [alpha, beta] });
    const [added] = sim.datasetOf('alpha').grow('jobs', 1);
    const removed = sim.datasetOf('alpha').remove('jobs', 0);
    const a = await walk(sim, await clientToken(sim, 'alpha-client', 'alpha-secret'), '/v3/jobs');
    const b = await walk(sim, await clientToken(sim, 'beta-client', 'beta-secret'), '/v3/jobs');
    expect(a[0]).toBe(added);
    expect(a).not.toContain(removed);
    expect(a).toHaveLength(12);
    expect(b).toHaveLength(9);
    expect(() => sim.datasetOf('gamma')).toThrow(/no account gamma/);
  });

  it('refuses accounts that share a name, a client id or an API key', async () => {
    await expect(
      ApiSimulator.start({ accounts: [alpha, { ...beta, name: 'alpha' }] }),
    ).rejects.toThrow(/two simulated accounts are named alpha/);
    await expect(
      ApiSimulator.start({ accounts: [alpha, { ...beta, clientId: 'alpha-client' }] }),
    ).rejects.toThrow(/share client id/);
    await expect(
      ApiSimulator.start({ accounts: [{ ...alpha, apiKeys: ['demo-api-key'] }] }),
    ).rejects.toThrow(/share an API key/);
    await expect(ApiSimulator.start({ accounts: [{ ...alpha, name: 'default' }] })).rejects.toThrow(
      /top-level/,
    );
  });
});

describe('generated accounts', () => {
  it('are the same on every call: names, credentials and data', async () => {
    const first = simulatedAccounts(3, { records: 4, rateLimit: { limit: 5, windowMs: 1000 } });
    const second = simulatedAccounts(3, { records: 4, rateLimit: { limit: 5, windowMs: 1000 } });
    expect(first).toEqual(second);
    expect(first.map((a) => [a.name, a.clientId, a.clientSecrets, a.apiKeys])).toEqual([
      ['acct001', 'acct001-client', ['acct001-secret'], ['acct001-api-key']],
      ['acct002', 'acct002-client', ['acct002-secret'], ['acct002-api-key']],
      ['acct003', 'acct003-client', ['acct003-secret'], ['acct003-api-key']],
    ]);
    const simA = await startSim({ accounts: first });
    const simB = await startSim({ accounts: second });
    const recordsOf = (sim: ApiSimulator, name: string) =>
      [...sim.datasetOf(name).presentIndexes('tracking_links')].map((i) =>
        sim.datasetOf(name).record('tracking_links', i),
      );
    expect(recordsOf(simA, 'acct002')).toEqual(recordsOf(simB, 'acct002'));
    expect(recordsOf(simA, 'acct002')).toHaveLength(4);
    expect(recordsOf(simA, 'acct002')).not.toEqual(recordsOf(simA, 'acct003'));
  });

  it('each serve their own data under their own rate limit', async () => {
    const sim = await startSim({
      accounts: simulatedAccounts(3, { records: 4, rateLimit: { limit: 1, windowMs: 60_000 } }),
    });
    const seen = new Set<number>();
    for (const name of ['acct001', 'acct002', 'acct003']) {
      const token = await clientToken(sim, `${name}-client`, `${name}-secret`);
      const page = await list(sim, token, '/v3/jobs');
      expect(page.status).toBe(200);
      expect(page.ids).toHaveLength(4);
      for (const id of page.ids) seen.add(id);
      expect((await list(sim, token, '/v3/jobs')).status).toBe(429);
    }
    expect(seen.size).toBe(12);
    // The default account has no limit of its own here.
    const token = await clientToken(sim, 'demo-client', 'demo-secret');
    expect((await list(sim, token, '/v3/jobs?per_page=1')).status).toBe(200);
    expect((await list(sim, token, '/v3/jobs?per_page=1')).status).toBe(200);
  });
});

describe('hiresync simulate --accounts', () => {
  it("serves the extra accounts and prints each one's credentials", async () => {
    let out = '';
    let printed: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      printed = resolve;
    });
    const signals = new EventEmitter();
    const context: CommandContext = {
      env: {},
      stdout: {
        write: (text: string) => {
          out += text;
          if (out.includes('Stop with Ctrl-C')) printed();
        },
      },
      stderr: { write: () => undefined },
      signals,
    };
    const run = simulate.run(['--port', '0', '--accounts', '2', '--account-records', '3'], context);
    const stop = async () => {
      signals.emit('SIGTERM');
      expect(await run).toBe(0);
    };
    await ready;
    try {
      expect(out).toContain('HIRESYNC_CLIENT_ID=demo-client');
      expect(out).toContain(
        'account acct001: HIRESYNC_CLIENT_ID=acct001-client  (secret: acct001-secret; api key: acct001-api-key)',
      );
      expect(out).toContain('account acct002: HIRESYNC_CLIENT_ID=acct002-client');
      expect(out).not.toContain('acct003');
      const url = /listening on (\S+)/.exec(out)?.[1] as string;
      const res = await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: basic('acct002-client', 'acct002-secret'),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      });
      const { access_token } = (await res.json()) as { access_token: string };
      const jobs = await fetch(`${url}/v3/jobs`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      expect(((await jobs.json()) as unknown[]).length).toBe(3);
    } finally {
      await stop();
    }
  });
});
