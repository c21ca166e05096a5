import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import type { RateLimitHeaders } from '../../src/api/rate-limit-headers.js';
import { type PacerTicket, RateLimitPacer } from '../../src/api/rate-limit-pacer.js';
import { TokenCipher } from '../../src/api/token-cipher.js';
import { RetryAfterTooLongError, SlotYieldError } from '../../src/errors.js';
import { SlotYield } from '../../src/queue/slot-yield.js';
import { FixedWindow } from '../../src/simulator/rate-limiter.js';
import { type ApiHarness, closeHarnessesAfterEach } from '../support/api-harness.js';

const { start, startHostile } = closeHarnessesAfterEach();

const IDLE_MS = 15 * 60_000; // one HIRESYNC_INCREMENTAL_EVERY between two runs

function pacerOf(h: ApiHarness, namespace: string, inFlightMs?: number): RateLimitPacer {
  return new RateLimitPacer({
    redis: h.redis,
    namespace,
    windowMs: 10_000,
    reserve: 0,
    maxWaitMs: 3_600_000, // HIRESYNC_MAX_RETRY_AFTER default
    prefix: h.prefix,
    ...(inFlightMs === undefined ? {} : { inFlightMs }),
  });
}

/** Moves the state's timestamps `ms` into the past: what `ms` of idleness leaves behind. */
async function age(h: ApiHarness, key: string, ms: number): Promise<void> {
  const state = await h.redis.hgetall(key);
  for (const field of ['riseAt', 'lastAt', 'resetAt', 'probeAt', 'pausedAt', 'pausedUntil']) {
    if (state[field] !== undefined && Number(state[field]) > 0) {
      await h.redis.hset(key, field, String(Number(state[field]) - ms));
    }
  }
}

describe('a learned window after an idle spell', () => {
  it('is not taken from a rise seen by the first request after 15 minutes idle', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'idle-rise');
    // Run 1 (no X-RateLimit-Reset): the allowance ran low, came back once, ran low again; run ends.
    await pacer.observe({ remaining: 99 }, Date.now());
    await pacer.observe({ remaining: 10 }, Date.now());
    await sleep(5);
    await pacer.observe({ remaining: 100 }, Date.now()); // rise #1 (riseSure), nothing learned yet
    await pacer.observe({ remaining: 20 }, Date.now());
    expect((await h.redis.hgetall(pacer.key)).windowMs).toBeUndefined();
    // 15 minutes later the next incremental run starts: its first answer has the full allowance.
    await age(h, pacer.key, IDLE_MS);
    await pacer.observe({ remaining: 100 }, Date.now());
    const state = await h.redis.hgetall(pacer.key);
    expect(state.windowMs).toBeUndefined();
  });

  it('is not taught by a 429 answering the first request after 15 minutes idle', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'idle-429');
    await pacer.observe({ remaining: 50 }, Date.now());
    await pacer.observe({ remaining: 40 }, Date.now());
    // Idle; meanwhile another client of the same credentials (what HIRESYNC_RATE_LIMIT_RESERVE
    // is for) spends the window, so the first request of the next run draws a 429 (Retry-After 5).
    await age(h, pacer.key, IDLE_MS);
    const learned = await pacer.pause(1, 5_000);
    expect(learned).toBeUndefined();
    expect((await h.redis.hgetall(pacer.key)).windowMs).toBeUndefined();
  });

  it('never makes a spent allowance wait out the idle spell', async () => {
    const h = await start();
    const pacer = new RateLimitPacer({
      redis: h.redis,
      namespace: 'idle-429-consequence',
      windowMs: 10_000,
      reserve: 0,
      maxWaitMs: 600_000, // HIRESYNC_MAX_RETRY_AFTER=10m
      prefix: h.prefix,
    });
    await pacer.observe({ remaining: 50 }, Date.now());
    await pacer.observe({ remaining: 10 }, Date.now());
    await age(h, pacer.key, IDLE_MS);
    await pacer.pause(1, 5_000);
    await sleep(5);
    // The allowance comes back (the API's real window is 10 s) and is spent.
    await pacer.observe({ remaining: 50 }, Date.now());
    await pacer.observe({ remaining: 0 }, Date.now());
    // Waiting out the idle spell (15 minutes, more than HIRESYNC_MAX_RETRY_AFTER)
    // would throw RetryAfterTooLongError at once.
    const outcome = await pacer.acquire().then(
      (ticket) => ticket,
      (e: unknown) => (e instanceof RetryAfterTooLongError ? 'too long' : String(e)),
    );
    expect(outcome).toMatchObject({ sentAt: expect.any(Number) });
    // It waited for a probe (a second at most), not even the 10 s first guess.
    expect((outcome as { waitedMs: number }).waitedMs).toBeLessThan(10_000);
  });
});

describe('a gateway answer without rate headers', () => {
  it('after a 429 releases one probe at a time, not every waiting worker', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'gateway-5xx');
    await pacer.observe({ remaining: 3 }, Date.now());
    await pacer.pause(1, 1_000);
    await sleep(10);
    // The retry of some request is answered 502 by a load balancer: no rate headers.
    await pacer.observe({}, Date.now(), 502);
    // The allowance is unknown after the 429: one probe at a time should go.
    // Giving the slot up at any wait (a slot wait of 0) makes every request the
    // pacer holds back say so at once (SlotYieldError) instead of waiting.
    const results = await Promise.all(
      Array.from({ length: 8 }, () => {
        const slot = new SlotYield(0);
        return pacer
          .acquire(slot.signal, (ms) => slot.onWait({ ms, cause: 'rate-limit pacing' }))
          .then(
            () => 'went',
            (e: unknown) => (e instanceof SlotYieldError ? 'held' : String(e)),
          );
      }),
    );
    expect(results.filter((r) => r === 'went')).toHaveLength(1);
    expect(results.filter((r) => r === 'held')).toHaveLength(7);
  });
});

describe('rate-limit header forms', () => {
  it.each([
    ['once (control: passes)', 1],
    ['twice (Node joins it to "n, n")', 2],
  ])(
    'X-RateLimit-Remaining sent %s still paces instead of switching pacing off',
    async (_, copies) => {
      let served = 0;
      let windowStart = 0;
      let used = 0;
      let tooMany = 0;
      const hostile = await startHostile((req, res, { token }) => {
        if (req.method === 'POST') return token();
        const now = Date.now();
        if (now - windowStart >= 1000) {
          windowStart = now;
          used = 0;
        }
        if (used >= 3) {
          tooMany += 1;
          res.writeHead(429, { 'retry-after': '1' });
          res.end('{}');
          return;
        }
        used += 1;
        served += 1;
        const left = String(3 - used);
        // A proxy in front of the API repeats the header (two header lines).
        res.setHeader('x-ratelimit-remaining', Array(copies).fill(left));
        res.setHeader('content-type', 'application/json');
        if (served < 12)
          res.setHeader('link', `<${hostile.url}/v3/jobs?cursor=c${served}>; rel="next"`);
        res.writeHead(200);
        res.end(JSON.stringify([{ id: 1000 - served }]));
      });
      const pages = await hostile.walk('jobs');
      expect(pages).toHaveLength(12);
      const namespace = new TokenCipher(hostile.config.api.auth).namespace;
      const state = await hostile.redis.hgetall(`${hostile.prefix}:rate:${namespace}`);
      expect({ headerless: state.headerless, tooMany: tooMany <= 1 }).toEqual({
        headerless: undefined,
        tooMany: true,
      });
    },
    60_000,
  );

  it('record the allowance of an answer whose epoch X-RateLimit-Reset comes from a clock a little behind', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'skewed-reset');
    // The API's clock is 30 s behind: its window end (still 20 s ahead in its own time)
    // reads as 10 s in the past here.
    await pacer.observe({ remaining: 0, resetAtMs: Date.now() - 10_000 }, Date.now());
    const state = await h.redis.hgetall(pacer.key);
    expect(state.remaining).toBe('0');
  });
});

/**
 * Answers `count` requests `everyMs` apart from an API whose clock runs
 * `offset` ms ahead of ours (Redis's: the same machine clock), each with the
 * `Date` of the API's whole second, and observes them through the pacer.
 */
async function answerWithDates(
  pacer: RateLimitPacer,
  offset: number,
  count: number,
  everyMs = 137,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    const sentAt = Date.now();
    const apiNow = Date.now() + offset;
    await pacer.observe({ remaining: 1_000 - i, dateMs: apiNow - (apiNow % 1000) }, sentAt);
    await sleep(everyMs);
  }
}

/** The API's whole second about `inMs` from now on its clock (ahead of ours by `offset`). */
function apiSecondIn(offset: number, inMs: number): number {
  const at = Date.now() + offset + inMs;
  return at - (at % 1000);
}

describe('an epoch Reset read through the clock offset learned from Date headers', () => {
  it('is never waited for early after the API clock steps back 800 ms (less than a second)', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'clock-step-back');
    // A second and more of answers at every moment of the API's second: the offset is known to be near 0.
    await answerWithDates(pacer, 0, 10);
    const before = await h.redis.hgetall(pacer.key);
    expect(Number(before.offsetLo)).toBeLessThanOrEqual(0);
    // Above the step to come, so that the step contradicts what was learned.
    expect(Number(before.offsetLo)).toBeGreaterThan(-600);
    // The API's clock steps back 800 ms (an NTP step); answers go on.
    const stepped = -800;
    await answerWithDates(pacer, stepped, 10);
    const after = await h.redis.hgetall(pacer.key);
    expect(Number(after.offsetLo)).toBeLessThanOrEqual(stepped);
    expect(Number(after.offsetHi)).toBeGreaterThanOrEqual(stepped);
    // The API states its window's end (epoch) on its own clock: on ours that is 800 ms later.
    const resetApi = apiSecondIn(stepped, 5_000);
    const sentAt = Date.now();
    const apiNow = Date.now() + stepped;
    await pacer.observe(
      { remaining: 0, resetAtMs: resetApi, dateMs: apiNow - (apiNow % 1000) },
      sentAt,
    );
    const state = await h.redis.hgetall(pacer.key);
    expect(Number(state.resetAt)).toBeGreaterThanOrEqual(resetApi - stepped);
  });

  it('is read through the offset already learned when the answer carries no Date', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'clock-no-date');
    // The API's clock is 2 s behind ours, learned from earlier answers' Date.
    const offset = -2_000;
    await answerWithDates(pacer, offset, 3);
    expect(Number((await h.redis.hgetall(pacer.key)).offsetLo)).toBeLessThanOrEqual(offset);
    // An answer (a proxy's, say) states the window's end but sends no Date.
    const resetApi = apiSecondIn(offset, 5_000);
    await pacer.observe({ remaining: 0, resetAtMs: resetApi }, Date.now());
    const state = await h.redis.hgetall(pacer.key);
    expect(Number(state.resetAt)).toBeGreaterThanOrEqual(resetApi - offset);
  });
});

describe("the API's second edge learned from the Date ticks of one resource's walk", () => {
  it("spreads the first window's requests so that its Date headers tick between two close answers, with each page requested once and no 429", async () => {
    const h = await start({
      simulator: {
        rateLimit: { limit: 20, windowMs: 2000 },
        rateLimitHeaders: true,
        rateLimitResetFormat: 'epoch',
        dataset: { counts: { jobs: 50 } },
      },
      env: { HIRESYNC_PER_PAGE: '1', HIRESYNC_RATE_LIMIT_WINDOW: '2s' },
    });
    // Start just after an even second: early in an epoch-aligned window, nearly a second
    // before the API's next second edge, which 20 requests back to back would not reach.
    const phase = Date.now() % 2000;
    await sleep((2000 - phase + 30) % 2000);
    // What each request's turn told its caller: the holds for the second edge are never
    // told as waits (a run would give its worker slot up for one past HIRESYNC_MAX_SLOT_WAIT).
    const turns: { told: number; waitedMs: number; heldMs: number }[] = [];
    const acquire = RateLimitPacer.prototype.acquire;
    const spy = vi.spyOn(RateLimitPacer.prototype, 'acquire').mockImplementation(async function (
      this: RateLimitPacer,
      signal,
      onWait,
    ) {
      let told = 0;
      const ticket = await acquire.call(this, signal, (ms) => {
        told += ms;
        onWait?.(ms);
      });
      turns.push({ told, waitedMs: ticket.waitedMs, heldMs: ticket.heldMs });
      return ticket;
    });
    const pages = await h.walk('jobs').finally(() => spy.mockRestore());
    expect(turns.some((t) => t.heldMs > 0)).toBe(true);
    expect(turns.every((t) => t.told === t.waitedMs)).toBe(true);
    expect(pages).toHaveLength(50);
    expect(h.sim.stats.listRequests).toBe(50);
    expect(h.sim.stats.rateLimited).toBe(0);
    const namespace = new TokenCipher(h.config.api.auth).namespace;
    const state = await h.redis.hgetall(`${h.prefix}:rate:${namespace}`);
    // The offset's bounds (API clock − Redis's) close in on where the API's second begins.
    const gap = Number(state.offsetHi) - Number(state.offsetLo);
    expect(gap).toBeLessThanOrEqual(300);
    expect(Number(state.offsetLo)).toBeLessThanOrEqual(0);
  });
});

/**
 * The simulator's fixed window of 3 requests per 10 s aligned on the epoch,
 * on a clock the test sets (API time, in ms): each request counts when it
 * reaches the API, whatever the order it was let go in.
 */
class WindowedApi {
  readonly #window = new FixedWindow({ limit: 3, windowMs: 10_000 }, true);
  refused = 0;

  /** `reset: false`: the answers carry no X-RateLimit-Reset (the spec's shape). */
  constructor(readonly options: { reset: boolean } = { reset: true }) {}

  /** A request reaching the API at its instant `at`: its answer's headers, or undefined for a 429. */
  arrive(at: number): RateLimitHeaders | undefined {
    const decision = this.#window.take(at);
    if (!decision.allowed) {
      this.refused += 1;
      return undefined;
    }
    const headers = { remaining: decision.remaining, limit: 3 };
    return this.options.reset ? { ...headers, resetInMs: decision.resetMs } : headers;
  }
}

/** A request let go at once, or undefined when the pacer asks it to wait. */
async function goNow(pacer: RateLimitPacer): Promise<PacerTicket | undefined> {
  const asked = new AbortController();
  try {
    return await pacer.acquire(asked.signal, () => asked.abort());
  } catch {
    return undefined;
  }
}

/** Every request the pacer lets go at once (a worker's requests ready together). */
async function drain(pacer: RateLimitPacer): Promise<PacerTicket[]> {
  const tickets: PacerTicket[] = [];
  for (let t = await goNow(pacer); t; t = await goNow(pacer)) tickets.push(t);
  return tickets;
}

/** Ends the window as the pacer holds it (its end reached). */
async function endPacersWindow(h: ApiHarness, pacer: RateLimitPacer): Promise<void> {
  await h.redis.hset(pacer.key, 'resetAt', '1');
}

describe("a request let go before a window's end and counted in the next one", () => {
  it('is taken off the allowance an answer of the next window reports while it is on its way, so that no 429 follows', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'late-later-window');
    const api = new WindowedApi();
    // The API's window [0, 10 s) has 5 s left: the first answer leaves 2.
    const first = await drain(pacer);
    expect(first).toHaveLength(1);
    await pacer.observe(api.arrive(5_000) ?? {}, first[0] as PacerTicket);
    // Two requests go from the 2 left; the API's window ends before either reaches it.
    const [a, b] = await drain(pacer);
    expect(b).toBeDefined();
    // a reaches the API first and its answer, of the next window, comes back while b is still
    // on its way (a loaded worker: b written to its socket late).
    await pacer.observe(api.arrive(10_001) ?? {}, a as PacerTicket);
    const next = await drain(pacer);
    const bAnswer = api.arrive(10_002);
    const answers = next.map((_, i) => api.arrive(10_003 + i));
    expect({ letGo: next.length, refused: api.refused }).toEqual({ letGo: 1, refused: 0 });
    await pacer.observe(bAnswer ?? {}, b as PacerTicket);
    for (const [i, t] of next.entries()) await pacer.observe(answers[i] ?? {}, t);
    expect((await h.redis.hgetall(pacer.key)).remaining).toBe('0');
    expect(await drain(pacer)).toHaveLength(0);
  });

  it("is taken off the allowance the probe after the window's end reports when the probe's answer comes first", async () => {
    const h = await start();
    const pacer = pacerOf(h, 'late-probe');
    const api = new WindowedApi();
    const first = await drain(pacer);
    await pacer.observe(api.arrive(5_000) ?? {}, first[0] as PacerTicket);
    const [c, a] = await drain(pacer);
    // c is counted and answered in the window; a, let go with it, is still on its way at the end.
    await pacer.observe(api.arrive(5_001) ?? {}, c as PacerTicket);
    await endPacersWindow(h, pacer);
    // The probe of the next window reaches the API before a, and its answer comes back first.
    const probe = await drain(pacer);
    expect(probe).toHaveLength(1);
    await pacer.observe(api.arrive(10_001) ?? {}, probe[0] as PacerTicket);
    const next = await drain(pacer);
    const aAnswer = api.arrive(10_002);
    const answers = next.map((_, i) => api.arrive(10_003 + i));
    expect({ letGo: next.length, refused: api.refused }).toEqual({ letGo: 1, refused: 0 });
    await pacer.observe(aAnswer ?? {}, a as PacerTicket);
    for (const [i, t] of next.entries()) await pacer.observe(answers[i] ?? {}, t);
    expect((await h.redis.hgetall(pacer.key)).remaining).toBe('0');
  });

  it('is given back to the allowance when its answer shows the earlier window counted it', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'late-answer-earlier-window');
    const api = new WindowedApi();
    const first = await drain(pacer);
    await pacer.observe(api.arrive(5_000) ?? {}, first[0] as PacerTicket);
    const [c, a] = await drain(pacer);
    await pacer.observe(api.arrive(5_001) ?? {}, c as PacerTicket);
    // a is counted in the window (the last of it), but its answer is slow to come back.
    const aAnswer = api.arrive(9_990);
    await endPacersWindow(h, pacer);
    const probe = await drain(pacer);
    await pacer.observe(api.arrive(10_001) ?? {}, probe[0] as PacerTicket);
    // a's answer states the earlier window's end: the next window keeps its 2 left.
    await pacer.observe(aAnswer ?? {}, a as PacerTicket);
    const next = await drain(pacer);
    for (const [i, t] of next.entries()) await pacer.observe(api.arrive(10_002 + i) ?? {}, t);
    expect({ letGo: next.length, refused: api.refused }).toEqual({ letGo: 2, refused: 0 });
  });

  it('is given back to the allowance when its answer shows it was counted before the answer the allowance came from', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'late-answer-counted-first');
    const api = new WindowedApi();
    const first = await drain(pacer);
    await pacer.observe(api.arrive(5_000) ?? {}, first[0] as PacerTicket);
    const [a, b] = await drain(pacer);
    // Both reach the API in its next window, a first; b's answer comes back first.
    const aAnswer = api.arrive(10_001);
    await pacer.observe(api.arrive(10_002) ?? {}, b as PacerTicket);
    await pacer.observe(aAnswer ?? {}, a as PacerTicket);
    const next = await drain(pacer);
    for (const [i, t] of next.entries()) await pacer.observe(api.arrive(10_003 + i) ?? {}, t);
    expect({ letGo: next.length, refused: api.refused }).toEqual({ letGo: 1, refused: 0 });
  });

  it('no longer counts against the next allowance once its connection was refused: it never left', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'failed-no-answer');
    const api = new WindowedApi();
    const first = await drain(pacer);
    await pacer.observe(api.arrive(5_000) ?? {}, first[0] as PacerTicket);
    const [a, b] = await drain(pacer);
    // a never reaches the API (its connection refused); b reaches it in its next window.
    await pacer.release((a as PacerTicket).id);
    await pacer.observe(api.arrive(10_001) ?? {}, b as PacerTicket);
    const next = await drain(pacer);
    for (const [i, t] of next.entries()) await pacer.observe(api.arrive(10_002 + i) ?? {}, t);
    expect({ letGo: next.length, refused: api.refused }).toEqual({ letGo: 2, refused: 0 });
  });

  it('no longer counts against the next allowance once the HTTP timeout of a process that vanished has passed', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'vanished-process');
    // A worker sharing the credentials whose requests time out at once (inFlightMs 1).
    const vanishing = pacerOf(h, 'vanished-process', 1);
    const api = new WindowedApi();
    const first = await drain(pacer);
    await pacer.observe(api.arrive(5_000) ?? {}, first[0] as PacerTicket);
    // It lets a request go, then vanishes: no answer, no failure is ever told.
    expect(await goNow(vanishing)).toBeDefined();
    const [b] = await drain(pacer);
    await sleep(20);
    // b reaches the API in its next window; the vanished request is past its timeout by then.
    await pacer.observe(api.arrive(10_001) ?? {}, b as PacerTicket);
    const next = await drain(pacer);
    for (const [i, t] of next.entries()) await pacer.observe(api.arrive(10_002 + i) ?? {}, t);
    expect({ letGo: next.length, refused: api.refused }).toEqual({ letGo: 2, refused: 0 });
  });
});

describe('a request let go before the low was recorded, counted in the next window and answered before its rise', () => {
  it('stays taken off the allowance the rise reports, so that no 429 follows', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'late-answered-before-rise');
    const api = new WindowedApi();
    // The API's window [0, 10 s) has 5 s left: the first answer leaves 2.
    const first = await drain(pacer);
    await pacer.observe(api.arrive(5_000) ?? {}, first[0] as PacerTicket);
    // y and c go from the 2 left; c's answer records the low (1) while y is still on its way.
    const [y, c] = await drain(pacer);
    expect(c).toBeDefined();
    await pacer.observe(api.arrive(5_001) ?? {}, c as PacerTicket);
    // The pacer's window ends; its probe x is let go after the low was recorded.
    await endPacersWindow(h, pacer);
    const probe = await drain(pacer);
    expect(probe).toHaveLength(1);
    // x reaches the API first in its next window, y right after it (behind it, though let go
    // before it); y's answer comes back first, then x's, the rise.
    const xAnswer = api.arrive(10_001);
    await pacer.observe(api.arrive(10_002) ?? {}, y as PacerTicket);
    await pacer.observe(xAnswer ?? {}, probe[0] as PacerTicket);
    // The window has 1 left (x and y counted): one more request, no 429.
    const next = await drain(pacer);
    const answers = next.map((_, i) => api.arrive(10_003 + i));
    for (const [i, t] of next.entries()) await pacer.observe(answers[i] ?? {}, t);
    expect({ letGo: next.length, refused: api.refused }).toEqual({ letGo: 1, refused: 0 });
  });
});

describe("a late answer of the window before, read after the next window's rise (no Reset)", () => {
  it('does not cut the new allowance to what the window before had left, so the walk does not sit out the window', async () => {
    const h = await start();
    const pacer = pacerOf(h, 'late-answer-no-reset');
    const api = new WindowedApi({ reset: false });
    // The window's length is known (learned earlier); the API's window [0, 10 s) has 5 s left.
    await h.redis.hset(pacer.key, 'windowMs', '10000', 'windowBy', '429');
    const first = await drain(pacer);
    await pacer.observe(api.arrive(5_000) ?? {}, first[0] as PacerTicket);
    const [a, b] = await drain(pacer);
    await pacer.observe(api.arrive(5_001) ?? {}, a as PacerTicket);
    // b is counted in the window (its last), but its answer is slow to come back.
    const bAnswer = api.arrive(9_990);
    await endPacersWindow(h, pacer);
    const probe = await drain(pacer);
    expect(probe).toHaveLength(1);
    await pacer.observe(api.arrive(10_001) ?? {}, probe[0] as PacerTicket);
    // b's answer (0 left, of the window before) is read after the rise.
    await pacer.observe(bAnswer ?? {}, b as PacerTicket);
    const next = await drain(pacer);
    for (const [i, t] of next.entries()) await pacer.observe(api.arrive(10_002 + i) ?? {}, t);
    // 2 left after the probe; b was taken off while on its way (no Reset tells where it was counted).
    expect({ letGo: next.length, refused: api.refused }).toEqual({ letGo: 1, refused: 0 });
  });
});
