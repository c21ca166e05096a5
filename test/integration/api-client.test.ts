import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fetchPages } from '../../src/api/fetch-pages.js';
import {
  AuthError,
  CrossOriginLinkError,
  CursorRejectedError,
  ForbiddenError,
  PaginationLoopError,
  TransientApiError,
  UnexpectedBodyError,
  UnreachableError,
} from '../../src/errors.js';
import { jobPosts } from '../../src/resources/job-posts.js';
import { jobs } from '../../src/resources/jobs.js';
import { listUrl } from '../../src/resources/read-plan.js';
import {
  type ApiHarness,
  closeHarnessesAfterEach,
  SIM_API_KEY,
  SIM_SECRET,
} from '../support/api-harness.js';

const { start } = closeHarnessesAfterEach();

function ids(pages: { records: unknown[] }[]): unknown[] {
  return pages.flatMap((p) => p.records.map((r) => (r as { id: unknown }).id));
}

describe('API client against the simulator', () => {
  it('walks every page of a list, id descending, ending on a page without a Link header', async () => {
    const h = await start({
      simulator: { dataset: { counts: { tracking_links: 1234 } } },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    const pages = await h.walk('tracking_links');
    expect(pages).toHaveLength(13);
    expect(pages.at(-1)?.nextUrl).toBeUndefined();
    const seen = ids(pages) as number[];
    expect(seen).toHaveLength(1234);
    expect(new Set(seen).size).toBe(1234);
    expect([...seen].sort((a, b) => b - a)).toEqual(seen);
    expect(h.sim.stats.tokensIssued).toBe(1);
  });

  it('sends per_page and filters on the first request only, then each next URL exactly as received', async () => {
    const h = await start({ env: { HIRESYNC_PER_PAGE: '40', HIRESYNC_JOBS_STATUS: 'closed' } });
    const pages = await h.walk('jobs');
    expect(pages.length).toBeGreaterThan(1);
    expect(h.sim.stats.receivedTargets[0]).toBe('/v3/jobs?status=closed&per_page=40');
    pages.slice(0, -1).forEach((page, i) => {
      const next = new URL(page.nextUrl as string);
      expect(h.sim.stats.receivedTargets[i + 1]).toBe(`${next.pathname}${next.search}`);
    });
    for (const page of pages)
      for (const r of page.records) expect((r as { status: string }).status).toBe('closed');
  });

  it('with prefetch, hands out the same pages in order and requests one page ahead at most', async () => {
    const h = await start({
      simulator: { dataset: { counts: { jobs: 450 } } },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    const client = h.client();
    const seen: number[] = [];
    for await (const page of fetchPages({
      client,
      startUrl: listUrl(h.config.api, jobs),
      prefetch: true,
    })) {
      // While page N is handled, page N+1 has been asked for, never N+2.
      expect(h.sim.stats.listRequests).toBeLessThanOrEqual(page.number + 1);
      seen.push(page.number);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(ids(await h.walk('jobs'))).toHaveLength(450);
  });

  it('renews an expired token mid-walk with one refresh and one retry', async () => {
    const h = await start({ env: { HIRESYNC_PER_PAGE: '50' } });
    const client = h.client();
    const seen: number[] = [];
    for await (const page of fetchPages({
      client,
      startUrl: listUrl(h.config.api, jobPosts),
    })) {
      if (page.number === 2) h.sim.expireTokens();
      seen.push(...(page.records as { id: number }[]).map((r) => r.id));
    }
    expect(seen).toHaveLength(250);
    expect(h.sim.stats.tokensIssued).toBe(2);
    expect(h.sim.stats.byStatus['401']).toBe(1);
  });

  it('uses a token response with expires_at instead of expires_in', async () => {
    const h = await start({ simulator: { expiresField: 'expires_at' } });
    expect(ids(await h.walk('jobs'))).toHaveLength(250);
    expect(h.sim.stats.tokensIssued).toBe(1);
  });

  it('authenticates in transition mode by exchanging a version 1/2 API key', async () => {
    const h = await start({ mode: 'api_key' });
    expect(ids(await h.walk('job_posts'))).toHaveLength(250);
    expect(h.sim.stats.tokensIssued).toBe(1);
  });

  it('waits Retry-After on 429 (seconds or HTTP-date, no rate headers) and retries the same request', async () => {
    const h = await start({ env: { HIRESYNC_PER_PAGE: '100' } });
    h.sim.inject({ kind: 'delay', ms: 0 });
    h.sim.inject({ kind: 'rate-limit', retryAfterS: 1 });
    h.sim.inject({ kind: 'rate-limit', retryAfterS: 1, format: 'http-date' });
    const started = Date.now();
    const pages = await h.walk('tracking_links');
    expect(ids(pages)).toHaveLength(250);
    expect(h.sim.stats.rateLimited).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    // The retried requests are the same target as the refused ones.
    const t = h.sim.stats.receivedTargets;
    expect(t[1]).toBe(t[2]);
  });

  it('recovers from 5xx answers and dropped connections with backoff', async () => {
    const h = await start();
    h.sim.inject({ kind: 'status', status: 503 });
    h.sim.inject({ kind: 'status', status: 500 });
    h.sim.inject({ kind: 'drop-connection' });
    expect(ids(await h.walk('jobs'))).toHaveLength(250);
    expect(h.sim.stats.byStatus['503']).toBe(1);
    expect(h.sim.stats.byStatus['500']).toBe(1);
  });

  it('keeps a request counted as in flight by the pacer while it may have reached the API (a dropped connection), never one answered (a 5xx too)', async () => {
    const h = await start({ simulator: { rateLimit: { limit: 100, windowMs: 60_000 } } });
    h.sim.inject({ kind: 'drop-connection' });
    h.sim.inject({ kind: 'status', status: 502 });
    h.sim.inject({ kind: 'drop-connection' });
    expect(ids(await h.walk('jobs'))).toHaveLength(250);
    const stateKey = await pacingStateOf(h);
    // Every request was tracked (each let go was numbered); the two dropped
    // stay counted until their HTTP timeout, the answered ones are gone.
    expect(Number(await h.redis.hget(stateKey, 'seq'))).toBe(h.sim.stats.receivedTargets.length);
    expect(await h.redis.zcard(`${stateKey}:sent`)).toBe(2);
  });

  it('no longer counts a request as in flight once its connection was refused: it never left', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    // The token comes from the simulator; the list requests go to the closed port.
    const h = await start({
      env: { HIRESYNC_BASE_URL: `http://127.0.0.1:${port}`, HIRESYNC_MAX_RETRIES: '0' },
    });
    await expect(h.walk('jobs')).rejects.toThrow(UnreachableError);
    const stateKey = await pacingStateOf(h);
    expect(await h.redis.hget(stateKey, 'seq')).toBe('1');
    expect(await h.redis.zcard(`${stateKey}:sent`)).toBe(0);
  });

  it('gives up after the retry budget on persistent 5xx', async () => {
    const h = await start({ env: { HIRESYNC_MAX_RETRIES: '2' } });
    h.sim.inject({ kind: 'status', status: 502 }, 3);
    await expect(h.walk('jobs')).rejects.toThrow(TransientApiError);
    expect(h.sim.stats.byStatus['502']).toBe(3);
  });

  it('fails at once on 403 with the API message and the fix', async () => {
    const h = await start({ simulator: { nonAdminSubs: ['77'] }, env: { HIRESYNC_SUB: '77' } });
    const error = await h.walk('jobs').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as Error).message).toMatch(
      /403 from \/v3\/jobs: .*site administrator.*HIRESYNC_SUB/,
    );
    expect(h.sim.stats.listRequests).toBe(1);
  });

  it('reports a refused client secret clearly, without the secret', async () => {
    const h = await start({ env: { HIRESYNC_CLIENT_SECRET: 'wrong-secret-xyz' } });
    const error = await h.walk('jobs').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect((error as Error).message).toMatch(
      /token request to \/oauth\/token was refused \(401\).*HIRESYNC_CLIENT_SECRET/,
    );
    expect((error as Error).message).not.toContain('wrong-secret-xyz');
  });

  it('fails with CursorRejectedError when the API rejects a stale cursor', async () => {
    const h = await start({ env: { HIRESYNC_PER_PAGE: '100' } });
    const client = h.client();
    const walk = fetchPages({ client, startUrl: listUrl(h.config.api, jobs) });
    const first = await walk.next();
    expect(first.done).toBe(false);
    h.sim.rotateCursorKey();
    const error = await walk.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CursorRejectedError);
    expect((error as Error).message).toContain('The cursor is malformed or invalid');
  });

  it('renders the 422 errors of the cursor rules and per_page bounds', async () => {
    const h = await start();
    const client = h.client();
    const withExtra = `${h.sim.url}/v3/jobs?cursor=abc&per_page=5`;
    await expect(client.get(withExtra)).rejects.toThrow(
      /No other query parameters may be provided with a cursor/,
    );
    await expect(
      client.get(`${h.sim.url}/v3/jobs?cursor=%%%`, undefined, { cursor: true }),
    ).rejects.toThrow(CursorRejectedError);
    await expect(client.get(`${h.sim.url}/v3/jobs?per_page=501`)).rejects.toThrow(
      /422 from \/v3\/jobs: Unprocessable Content: per_page: must be less than or equal to 500/,
    );
  });

  it('refuses a next link to another origin without sending it a single request', async () => {
    let foreignRequests = 0;
    const foreign = createServer((_req, res) => {
      foreignRequests += 1;
      res.end('[]');
    });
    await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', r));
    const foreignOrigin = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
    try {
      const h = await start({ env: { HIRESYNC_PER_PAGE: '100' } });
      h.sim.inject({ kind: 'next-origin', origin: foreignOrigin });
      const error = await h.walk('jobs').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CrossOriginLinkError);
      expect((error as Error).message).toContain(foreignOrigin);
      expect((error as Error).message).toContain(h.sim.url);
      expect(foreignRequests).toBe(0);
    } finally {
      foreign.close();
    }
  });

  it('reports a next link equal to the page just read as a loop', async () => {
    const h = await start({ env: { HIRESYNC_PER_PAGE: '100' } });
    h.sim.inject({ kind: 'delay', ms: 0 });
    h.sim.inject({ kind: 'self-next' });
    await expect(h.walk('jobs')).rejects.toThrow(PaginationLoopError);
  });

  it('fails the page clearly when the body is not a JSON array', async () => {
    const h = await start();
    h.sim.inject({ kind: 'malformed-body' });
    await expect(h.walk('jobs')).rejects.toThrow(UnexpectedBodyError);
    await expect(h.walk('jobs')).resolves.toHaveLength(1);
  });

  it('paces by X-RateLimit-Remaining alone: past the one 429 that teaches the window, a walk draws none', async () => {
    const h = await start({
      simulator: { rateLimit: { limit: 10, windowMs: 1000 }, dataset: { counts: { jobs: 25 } } },
      env: { HIRESYNC_PER_PAGE: '1', HIRESYNC_RATE_LIMIT_WINDOW: '1s' },
    });
    const started = Date.now();
    expect(ids(await h.walk('jobs'))).toHaveLength(25);
    // The configured window is only a first guess: the first spent window is probed.
    expect(h.sim.stats.rateLimited).toBeLessThanOrEqual(1);
    // 25 requests at 10 per window need two full windows of waiting.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
  });

  it('shares pacing across concurrent clients of the same credentials, drawing no 429 past the one that teaches the window', async () => {
    const h = await start({
      simulator: {
        rateLimit: { limit: 8, windowMs: 1000 },
        dataset: { counts: { jobs: 10, job_posts: 10, tracking_links: 10 } },
      },
      env: { HIRESYNC_PER_PAGE: '1', HIRESYNC_RATE_LIMIT_WINDOW: '1s' },
    });
    const resources = ['jobs', 'job_posts', 'tracking_links', 'jobs'] as const;
    const walks = await Promise.all(resources.map((r) => h.walk(r, h.client())));
    for (const pages of walks) expect(ids(pages)).toHaveLength(10);
    expect(h.sim.stats.rateLimited).toBeLessThanOrEqual(1);
  });

  it('mints one token for many clients when the API revokes the previous token on each mint', async () => {
    const h = await start({
      simulator: { revokePreviousToken: true },
      env: { HIRESYNC_PER_PAGE: '25' },
    });
    const clients = Array.from({ length: 5 }, () => h.client());
    const resources = ['jobs', 'job_posts', 'tracking_links'] as const;
    const walks = await Promise.all(clients.map((c, i) => h.walk(resources[i % 3] ?? 'jobs', c)));
    for (const pages of walks) expect(ids(pages)).toHaveLength(250);
    expect(h.sim.stats.tokensIssued).toBe(1);
    expect(h.sim.stats.byStatus['401'] ?? 0).toBe(0);
  });

  it('renews a revoked token once for all clients, without a 401 cascade', async () => {
    const h = await start({
      simulator: { revokePreviousToken: true },
      env: { HIRESYNC_PER_PAGE: '10' },
    });
    const clients = Array.from({ length: 4 }, () => h.client());
    await Promise.all(clients.map((c) => c.get(listUrl(h.config.api, jobs))));
    h.sim.expireTokens();
    const walks = await Promise.all(clients.map((c) => h.walk('job_posts', c)));
    for (const pages of walks) expect(ids(pages)).toHaveLength(250);
    expect(h.sim.stats.tokensIssued).toBe(2);
    expect(h.sim.stats.byStatus['401']).toBeLessThanOrEqual(clients.length);
  });

  it('never writes a secret or a token to the log or to Redis in clear', async () => {
    const h = await start({
      simulator: { revokePreviousToken: true },
      env: { LOG_LEVEL: 'trace' },
    });
    h.sim.inject({ kind: 'status', status: 503 });
    await h.walk('jobs');
    h.sim.expireTokens();
    await h.walk('jobs');
    const text = h.log.text();
    expect(text).toContain('access token obtained');
    expect(text).not.toContain(SIM_SECRET);
    expect(text).not.toContain(SIM_API_KEY);
    expect(text).not.toMatch(/Bearer \S/);
    const keys = await h.redis.keys(`${h.prefix}:*`);
    for (const key of keys) {
      const type = await h.redis.type(key);
      const value =
        type === 'string' ? await h.redis.get(key) : JSON.stringify(await h.redis.hgetall(key));
      expect(value).not.toContain(SIM_SECRET);
    }
    const stored = await h.redis.get(keys.find((k) => k.includes(':token:')) as string);
    expect(stored).toMatch(/^[A-Za-z0-9+/=]+$/);
  });
});

/** The pacing state hash of the harness's credentials (its only one). */
async function pacingStateOf(h: ApiHarness): Promise<string> {
  const keys = await h.redis.keys(`${h.prefix}:rate:*`);
  const states = keys.filter((key) => !key.endsWith(':sent') && !key.endsWith(':probe'));
  expect(states).toHaveLength(1);
  return states[0] as string;
}
