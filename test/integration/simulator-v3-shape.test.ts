import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/commands/command.js';
import { simulate } from '../../src/commands/simulate.js';
import { UsageError } from '../../src/errors.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { shapeDefaults, V3_RATE_LIMIT } from '../../src/simulator/shape.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import { runSimulate } from '../support/run-simulate.js';

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

/** The token response of the client credentials grant at `authUrl`. */
async function tokenResponse(
  authUrl: string,
  clientId = 'demo-client',
): Promise<Record<string, unknown>> {
  const res = await fetch(`${authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: basic(clientId, `${clientId.replace(/-client$/, '')}-secret`),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function token(sim: ApiSimulator): Promise<string> {
  return (await tokenResponse(sim.authUrl)).access_token as string;
}

type Row = Record<string, unknown>;

/** One list request (a path, or a next link's full URL). */
async function get(sim: ApiSimulator, bearer: string, target: string) {
  const url = target.startsWith('http') ? target : `${sim.url}${target}`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${bearer}` } });
  const body = (await res.json()) as unknown;
  const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  return { status: res.status, headers: res.headers, body, next };
}

/** Every record of a walk from `first`, following next links; also each page's response. */
async function walk(sim: ApiSimulator, bearer: string, first: string) {
  const records: Row[] = [];
  const pages: Array<Awaited<ReturnType<typeof get>>> = [];
  let target: string | undefined = first;
  while (target) {
    const page = await get(sim, bearer, target);
    expect(page.status).toBe(200);
    pages.push(page);
    records.push(...(page.body as Row[]));
    target = page.next;
  }
  return { records, pages };
}

describe('the simulator with shape v3', () => {
  it('serves tracking links flat: job_board_id, source_id and referrer_id, no nested objects', async () => {
    const sim = await startSim({ shape: 'v3', dataset: { counts: { tracking_links: 5 } } });
    const { body } = await get(sim, await token(sim), '/v3/tracking_links');
    const links = body as Row[];
    expect(links).toHaveLength(5);
    for (const link of links) {
      expect(link).toHaveProperty('job_board_id');
      expect(link).toHaveProperty('source_id');
      expect(link).toHaveProperty('referrer_id');
      expect(link).not.toHaveProperty('job_board');
      expect(link).not.toHaveProperty('source');
      expect(link).not.toHaveProperty('credited_to');
    }
  });

  it("also serves every other account's tracking links flat", async () => {
    const sim = await startSim({
      shape: 'v3',
      accounts: [
        {
          name: 'acme',
          clientId: 'acme-client',
          clientSecrets: ['acme-secret'],
          dataset: { idOffset: 1000, counts: { tracking_links: 2 } },
        },
      ],
    });
    const bearer = (await tokenResponse(sim.authUrl, 'acme-client')).access_token as string;
    const { body } = await get(sim, bearer, '/v3/tracking_links');
    expect(body as Row[]).toHaveLength(2);
    for (const link of body as Row[]) {
      expect(link).toHaveProperty('source_id');
      expect(link).not.toHaveProperty('source');
    }
  });

  it('answers tokens with expires_at as an ISO 8601 timestamp an hour ahead, and no expires_in', async () => {
    const sim = await startSim({ shape: 'v3' });
    const before = Date.now();
    const answer = await tokenResponse(sim.authUrl);
    expect(answer).not.toHaveProperty('expires_in');
    expect(answer.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const expiresAt = Date.parse(answer.expires_at as string);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
  });

  it('sends X-RateLimit-Limit, -Remaining and -Reset (Unix epoch seconds) on every list response, a 422 and a 401 included', async () => {
    const sim = await startSim({ shape: 'v3', dataset: { counts: { jobs: 7 } } });
    const bearer = await token(sim);
    const responses = [
      ...(await walk(sim, bearer, '/v3/jobs?per_page=2')).pages,
      await get(sim, bearer, '/v3/jobs?per_page=0'),
      await get(sim, 'not-a-token', '/v3/jobs'),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 422, 401]);
    responses.forEach((r, i) => {
      expect(r.headers.get('x-ratelimit-limit')).toBe('75');
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(75 - (i + 1)));
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      // A whole epoch second, at most one window (30 s) ahead.
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset * 1000).toBeGreaterThan(Date.now());
      expect(reset * 1000).toBeLessThanOrEqual(Date.now() + 30_000 + 1000);
    });
  });

  it('counts a window of 75 requests per 30 s by default: the 76th is a 429 with Retry-After and no X-RateLimit headers', async () => {
    const sim = await startSim({ shape: 'v3', dataset: { counts: { jobs: 1 } } });
    const bearer = await token(sim);
    // The v3 shape's windows are aligned on the epoch: in a window's last 10 s,
    // wait for the next, so that the 76 requests fall in one window on a slow
    // machine too.
    const into = Date.now() % V3_RATE_LIMIT.windowMs;
    if (into > V3_RATE_LIMIT.windowMs - 10_000) await sleep(V3_RATE_LIMIT.windowMs - into + 50);
    const statuses: number[] = [];
    for (let i = 0; i < 75; i += 1) statuses.push((await get(sim, bearer, '/v3/jobs')).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const refused = await get(sim, bearer, '/v3/jobs');
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(refused.headers.get('x-ratelimit-limit')).toBeNull();
    expect(refused.headers.get('x-ratelimit-remaining')).toBeNull();
    expect(refused.headers.get('x-ratelimit-reset')).toBeNull();
    expect(shapeDefaults('v3').simulator.rateLimit).toEqual(V3_RATE_LIMIT);
  });

  it('keeps a rate limit given explicitly over the shape’s, and none when given null', async () => {
    const sim = await startSim({
      shape: 'v3',
      rateLimit: { limit: 2, windowMs: 60_000 },
      dataset: { counts: { jobs: 1 } },
    });
    const bearer = await token(sim);
    const first = await get(sim, bearer, '/v3/jobs');
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    await get(sim, bearer, '/v3/jobs');
    expect((await get(sim, bearer, '/v3/jobs')).status).toBe(429);

    const free = await startSim({ shape: 'v3', rateLimit: null, dataset: { counts: { jobs: 1 } } });
    const freeBearer = await token(free);
    for (let i = 0; i < 80; i += 1)
      expect((await get(free, freeBearer, '/v3/jobs')).status).toBe(200);
    expect((await get(free, freeBearer, '/v3/jobs')).headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('keeps options given explicitly over the shape’s: nested tracking links and expires_in', async () => {
    const sim = await startSim({
      shape: 'v3',
      expiresField: 'expires_in',
      dataset: { flatTrackingLinks: false, counts: { tracking_links: 1 } },
    });
    expect(await tokenResponse(sim.authUrl)).toHaveProperty('expires_in', 3600);
    const { body } = await get(sim, await token(sim), '/v3/tracking_links');
    expect((body as Row[])[0]).toHaveProperty('source');
  });
});

describe('pipe-delimited date filters', () => {
  /** Ids of the records of `resource` whose `field` is within [from, to] (ISO), id-descending. */
  function idsWithin(
    records: Row[],
    field: 'updated_at' | 'created_at',
    test: (t: number) => boolean,
  ) {
    return records
      .filter((r) => test(Date.parse(r[field] as string)))
      .map((r) => r.id)
      .sort((a, b) => Number(b) - Number(a));
  }

  it('a walk with updated_at=gte|X|lte|Y returns exactly the records in range, across pages: the next cursor carries the filter', async () => {
    const sim = await startSim({
      shape: 'v3',
      rateLimit: null,
      dataset: { counts: { jobs: 120 } },
    });
    const bearer = await token(sim);
    const all = (await walk(sim, bearer, '/v3/jobs?per_page=500')).records;
    expect(all).toHaveLength(120);
    // A range holding some records, on whole seconds away from any record's time.
    const times = all.map((r) => Date.parse(r.updated_at as string)).sort((a, b) => a - b);
    const from = new Date(Math.floor((times[30] as number) / 1000) * 1000 - 1).toISOString();
    const to = new Date(Math.floor((times[80] as number) / 1000) * 1000 + 1000).toISOString();
    const expected = idsWithin(
      all,
      'updated_at',
      (t) => t >= Date.parse(from) && t <= Date.parse(to),
    );
    expect(expected.length).toBeGreaterThan(40);
    expect(expected.length).toBeLessThan(120);

    const { records, pages } = await walk(
      sim,
      bearer,
      `/v3/jobs?per_page=7&updated_at=gte|${from}|lte|${to}`,
    );
    expect(pages.length).toBeGreaterThan(2);
    expect(records.map((r) => r.id)).toEqual(expected);
    // Every next link is a cursor alone.
    for (const page of pages.slice(0, -1)) expect(page.next).toMatch(/\?cursor=[\w-]+$/);
  });

  it('honours gt, lt and created_at, combined with updated_at', async () => {
    const sim = await startSim({ dataset: { counts: { jobs: 60 } } });
    const bearer = await token(sim);
    const all = (await walk(sim, bearer, '/v3/jobs?per_page=500')).records;
    // Records are created a minute apart from 2024-01-01T00:00:00.
    const created = all.map((r) => r.created_at as string).sort();
    const after = created[10] as string;
    const before = created[40] as string;
    const updatedBefore = new Date(Date.parse(all[0]?.updated_at as string)).toISOString();
    const expected = idsWithin(
      all.filter((r) => (r.created_at as string) > after && (r.created_at as string) < before),
      'updated_at',
      (t) => t < Date.parse(updatedBefore),
    );
    const { records } = await walk(
      sim,
      bearer,
      `/v3/jobs?per_page=4&created_at=gt|${after}|lt|${before}&updated_at=lt|${updatedBefore}`,
    );
    expect(records.map((r) => r.id)).toEqual(expected);
    expect(records.length).toBeGreaterThan(0);
    expect(records.length).toBeLessThan(29);
  });

  it('refuses a malformed date filter and a cursor with any other parameter (422)', async () => {
    const sim = await startSim({ dataset: { counts: { jobs: 10 } } });
    const bearer = await token(sim);
    for (const query of [
      'updated_at=2024-01-01T00:00:00Z',
      'updated_at=gte|2024-01-01T00:00:00Z|lte',
      'updated_at=after|2024-01-01T00:00:00Z',
      'created_at=gte|yesterday',
    ])
      expect((await get(sim, bearer, `/v3/jobs?${query}`)).status, query).toBe(422);
    const first = await get(sim, bearer, '/v3/jobs?per_page=2&updated_at=gte|2024-01-01T00:00:00Z');
    expect(first.next).toBeDefined();
    const withFilter = await get(sim, bearer, `${first.next}&updated_at=gte|2024-01-01T00:00:00Z`);
    expect(withFilter.status).toBe(422);
  });
});

describe('the simulator with shape seed (the default)', () => {
  it('serves nested tracking links, expires_in tokens, only X-RateLimit-Remaining and no window unless asked', async () => {
    const sim = await startSim({ dataset: { counts: { tracking_links: 3 } } });
    expect(shapeDefaults('seed')).toEqual({ simulator: {}, dataset: {} });
    const answer = await tokenResponse(sim.authUrl);
    expect(answer).toHaveProperty('expires_in', 3600);
    expect(answer).not.toHaveProperty('expires_at');
    const bearer = answer.access_token as string;
    const page = await get(sim, bearer, '/v3/tracking_links');
    expect((page.body as Row[])[0]).toHaveProperty('source');
    expect((page.body as Row[])[0]).not.toHaveProperty('source_id');
    expect(page.headers.get('x-ratelimit-remaining')).toBeNull();
    for (let i = 0; i < 80; i += 1)
      expect((await get(sim, bearer, '/v3/tracking_links')).status).toBe(200);

    const limited = await startSim({ rateLimit: { limit: 5, windowMs: 10_000 } });
    const limitedBearer = await token(limited);
    const limitedPage = await get(limited, limitedBearer, '/v3/jobs');
    expect(limitedPage.headers.get('x-ratelimit-remaining')).toBe('4');
    expect(limitedPage.headers.get('x-ratelimit-limit')).toBeNull();
    expect(limitedPage.headers.get('x-ratelimit-reset')).toBeNull();
    // A 422 carries no rate limit headers in seed, as before.
    expect(
      (await get(limited, limitedBearer, '/v3/jobs?per_page=0')).headers.get(
        'x-ratelimit-remaining',
      ),
    ).toBeNull();
  });

  it('states X-RateLimit-Reset as seconds until the window resets when asked for the full headers', async () => {
    const sim = await startSim({
      rateLimit: { limit: 5, windowMs: 10_000 },
      rateLimitHeaders: true,
    });
    const page = await get(sim, await token(sim), '/v3/jobs');
    const reset = Number(page.headers.get('x-ratelimit-reset'));
    expect(page.headers.get('x-ratelimit-reset')).toMatch(/^\d+\.\d{3}$/);
    expect(reset).toBeGreaterThan(0);
    expect(reset).toBeLessThanOrEqual(10);
  });
});

describe('hiresync simulate --shape', () => {
  it('--shape v3 serves flat links, expires_at tokens and the 75/30s window with epoch resets; --rate-limit overrides the window', async () => {
    const v3 = await runSimulate(['--shape', 'v3']);
    try {
      expect(v3.out).toContain(
        "  shape v3: the live service's shapes (flat tracking links, expires_at tokens, 75 requests / 30s with X-RateLimit-Reset in epoch seconds)\n",
      );
      // The setting that gives a deployment on it the live service's recommended defaults.
      expect(v3.out).toContain('  HIRESYNC_API=v3 ');
      const url = /listening on (\S+)/.exec(v3.out)?.[1] as string;
      const answer = await tokenResponse(`${url}/oauth`);
      expect(answer).toHaveProperty('expires_at');
      expect(answer).not.toHaveProperty('expires_in');
      const res = await fetch(`${url}/v3/tracking_links`, {
        headers: { authorization: `Bearer ${answer.access_token as string}` },
      });
      expect(res.headers.get('x-ratelimit-limit')).toBe('75');
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(1e9);
      const links = (await res.json()) as Row[];
      expect(links[0]).toHaveProperty('source_id');
    } finally {
      await v3.stop();
    }
    const limited = await runSimulate(['--shape', 'v3', '--rate-limit', '20/2s']);
    try {
      expect(limited.out).toContain('20 requests / 2s');
    } finally {
      await limited.stop();
    }
  });

  it('--shape seed (the default) prints no shape line and serves nested links', async () => {
    const seed = await runSimulate([]);
    try {
      expect(seed.out).not.toContain('shape');
      const url = /listening on (\S+)/.exec(seed.out)?.[1] as string;
      const answer = await tokenResponse(`${url}/oauth`);
      expect(answer).toHaveProperty('expires_in');
      const res = await fetch(`${url}/v3/tracking_links`, {
        headers: { authorization: `Bearer ${answer.access_token as string}` },
      });
      expect(((await res.json()) as Row[])[0]).toHaveProperty('source');
    } finally {
      await seed.stop();
    }
  });

  it('refuses a shape other than seed or v3, and documents --shape in its help', async () => {
    const context: CommandContext = {
      env: {},
      stdout: { write: () => undefined },
      stderr: { write: () => undefined },
      signals: new EventEmitter(),
    };
    await expect(simulate.run(['--shape', 'v4', '--port', '0'], context)).rejects.toThrow(
      UsageError,
    );
    const written: string[] = [];
    await simulate.run(['--help'], {
      ...context,
      stdout: {
        write: (text: string) => {
          written.push(text);
        },
      },
    });
    expect(written.join('').replace(/\s+/g, ' ')).toContain(
      "--shape SHAPE seed: the shapes api-spec.md shows; v3: the live service's (flat tracking links,",
    );
  });
});
