import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { RateLimitPacer } from '../../src/api/rate-limit-pacer.js';
import { TokenCipher } from '../../src/api/token-cipher.js';
import { type ApiHarness, closeHarnessesAfterEach } from '../support/api-harness.js';
import { captureLogger } from '../support/capture-logger.js';

const { start, startHostile } = closeHarnessesAfterEach();

/** The shared pacing state of the harness's credentials (fields: src/redis/scripts/pace-observe-3.lua). */
async function pacingState(h: ApiHarness): Promise<Record<string, string>> {
  const namespace = new TokenCipher(h.config.api.auth).namespace;
  return h.redis.hgetall(`${h.prefix}:rate:${namespace}`);
}

/** A fixed window: the first `limit` requests go at once, each further `limit` waits one window. */
function minimumMs(requests: number, limit: number, windowMs: number): number {
  return (Math.ceil(requests / limit) - 1) * windowMs;
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

/**
 * The waits the pacer chose before requests (its 'paced by rate limit' lines),
 * in ms: what it computed from the rate-limit state, not how long the machine
 * took, so a slow machine cannot lengthen them.
 */
function pacingWaits(log: ReturnType<typeof captureLogger>): number[] {
  return log
    .lines()
    .map((line) => JSON.parse(line) as { msg: string; waitedMs?: number })
    .filter((line) => line.msg === 'paced by rate limit')
    .map((line) => Number(line.waitedMs));
}

describe('rate-limit pacing', () => {
  it('with X-RateLimit-Limit and -Reset, walks across several windows without a 429, each wait ending at the end the API stated', async () => {
    const h = await start({
      simulator: {
        rateLimit: { limit: 10, windowMs: 1000 },
        rateLimitHeaders: true,
        dataset: { counts: { jobs: 60 } },
      },
      env: { HIRESYNC_PER_PAGE: '1' },
    });
    const { value: pages, ms } = await timed(h.walk('jobs'));
    expect(pages).toHaveLength(60);
    expect(h.sim.stats.rateLimited).toBe(0);
    expect(h.sim.stats.listRequests).toBe(60);
    // It did wait: 60 requests at 10 a window span at least five window ends.
    expect(ms).toBeGreaterThanOrEqual(minimumMs(60, 10, 1000));
    // Every wait ran to the end X-RateLimit-Reset stated (at most the 1 s
    // window), never the configured 10 s first guess. How close the walk
    // comes to the minimum is a figure of `npm run bench` (rate-limited walk).
    const waits = pacingWaits(h.log);
    expect(waits.length).toBeGreaterThan(0);
    for (const wait of waits) expect(wait).toBeLessThanOrEqual(1000);
  });

  it('without Limit and Reset and with the window not configured, learns the window from at most one 429 and keeps it in Redis', async () => {
    const h = await start({
      simulator: { rateLimit: { limit: 20, windowMs: 2000 }, dataset: { counts: { jobs: 100 } } },
      env: { HIRESYNC_PER_PAGE: '1', HIRESYNC_RATE_LIMIT_WINDOW: undefined },
    });
    expect(h.config.api.rateLimitWindowMs).toBe(10_000);
    const { value: pages, ms } = await timed(h.walk('jobs'));
    expect(pages).toHaveLength(100);
    // At most one 429, as the test says: a second means the first taught nothing.
    expect(h.sim.stats.rateLimited).toBeLessThanOrEqual(1);
    // Learned (from the 429's Retry-After, or the allowance coming back) and kept
    // for every worker. The value learned (2 s within a few ms) and the walk's
    // time against the minimum are figures of `npm run bench` (rate-limited walk).
    const state = await pacingState(h);
    expect(state.windowBy).toMatch(/^(429|rise)$/);
    expect(Number(state.windowMs)).toBeGreaterThan(0);
    expect(ms).toBeGreaterThanOrEqual(minimumMs(100, 20, 2000));
  });

  it('two clients sharing one Redis learn the window once: the second walks on the stored window without a 429', async () => {
    const h = await start({
      simulator: {
        rateLimit: { limit: 20, windowMs: 2000 },
        dataset: { counts: { jobs: 50, job_posts: 50 } },
      },
      env: { HIRESYNC_PER_PAGE: '1', HIRESYNC_RATE_LIMIT_WINDOW: undefined },
    });
    expect(await h.walk('jobs', h.client())).toHaveLength(50);
    const learnedBy = h.sim.stats.rateLimited;
    expect(learnedBy).toBeGreaterThanOrEqual(1);
    expect(learnedBy).toBeLessThanOrEqual(2);
    const learned = (await pacingState(h)).windowMs;
    expect(learned).toBeDefined();

    const second = captureLogger();
    const pages = await h.walk('job_posts', h.client({ logger: second.logger }));
    expect(pages).toHaveLength(50);
    expect(h.sim.stats.rateLimited).toBe(learnedBy);
    expect(second.text()).not.toContain('rate-limit window learned');
    // It waited on the stored window, never the 10 s first guess.
    const waits = pacingWaits(second);
    expect(waits.length).toBeGreaterThan(0);
    for (const wait of waits) expect(wait).toBeLessThan(h.config.api.rateLimitWindowMs);
  });

  it('waits out a 429 with Retry-After 1 from the token endpoint and the walk succeeds, without pausing the list pacing', async () => {
    const h = await start({ env: { HIRESYNC_PER_PAGE: '100' } });
    h.sim.rateLimitTokenRequests(1);
    const { value: pages, ms } = await timed(
      Promise.all([h.walk('jobs', h.client()), h.walk('job_posts', h.client())]),
    );
    expect(pages.map((p) => p.length)).toEqual([3, 3]);
    expect(ms).toBeGreaterThanOrEqual(1000);
    expect(h.sim.stats.tokenRequestsRateLimited).toBe(1);
    expect(h.sim.stats.tokensIssued).toBe(1);
    expect(h.sim.stats.rateLimited).toBe(0);
    expect((await pacingState(h)).pausedUntil).toBeUndefined();
  });

  it('does not take an older answer arriving after a newer one for the allowance coming back', async () => {
    const h = await start();
    const pacer = new RateLimitPacer({
      redis: h.redis,
      namespace: 'out-of-order',
      windowMs: 10_000,
      reserve: 0,
      prefix: h.prefix,
    });
    const state = () => h.redis.hgetall(pacer.key);
    const t0 = Date.now();
    await pacer.observe({ remaining: 9 }, t0);
    const windowBegan = (await state()).riseAt;
    // Two requests in flight: the later one is answered first.
    await pacer.observe({ remaining: 5 }, t0 + 1);
    await pacer.observe({ remaining: 7 }, t0 - 1);
    expect(await state()).toMatchObject({ remaining: '5', last: '5', riseAt: windowBegan });
    // A request sent after the 5 was recorded that finds more: the allowance came back.
    await sleep(5);
    await pacer.observe({ remaining: 9 }, Date.now());
    expect(await state()).toMatchObject({ remaining: '9', last: '9', riseSure: '1' });
    expect(Number((await state()).riseAt)).toBeGreaterThan(Number(windowBegan));
  });

  it('takes absurd Limit and Reset values (negative, huge, fractional) without failing or stalling', async () => {
    let served = 0;
    const hostile = await startHostile((req, res, { token }) => {
      if (req.method === 'POST') return token();
      served += 1;
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-ratelimit-remaining': ['2.5', '-4', '1e30'][served % 3] as string,
        'x-ratelimit-limit': ['-5', '0.5', '1e300'][served % 3] as string,
        'x-ratelimit-reset': ['-1', '1e300', '0.0001'][served % 3] as string,
      };
      if (served < 6) headers.link = `<${hostile.url}/v3/jobs?cursor=c${served}>; rel="next"`;
      res.writeHead(200, headers);
      res.end(JSON.stringify([{ id: 1000 - served }]));
    });
    const pages = await hostile.walk('jobs');
    expect(pages).toHaveLength(6);
    // Stalling would be waiting out the absurd Reset, or the 10 s first guess:
    // every wait the pacer chose is shorter than that guess.
    for (const wait of pacingWaits(hostile.log)) {
      expect(wait).toBeLessThan(hostile.config.api.rateLimitWindowMs);
    }
    const namespace = new TokenCipher(hostile.config.api.auth).namespace;
    const state = await hostile.redis.hgetall(`${hostile.prefix}:rate:${namespace}`);
    expect(state.pausedUntil).toBeUndefined();
  });
});
