import { describe, expect, it } from 'vitest';
import { fetchPages } from '../../src/api/fetch-pages.js';
import { TokenCipher } from '../../src/api/token-cipher.js';
import {
  ApiError,
  AuthError,
  CursorRejectedError,
  PaginationLoopError,
  RedirectedError,
  ResponseTooLargeError,
  RetryAfterTooLongError,
  TransientApiError,
  UnexpectedBodyError,
} from '../../src/errors.js';
import { jobs } from '../../src/resources/jobs.js';
import { listUrl } from '../../src/resources/read-plan.js';
import { closeHarnessesAfterEach } from '../support/api-harness.js';
import { captureLogger } from '../support/capture-logger.js';
import { waitFor } from '../support/lifecycle.js';

const { start, startHostile } = closeHarnessesAfterEach();

/**
 * Settles with what `promise` resolves to, or the error it rejects with. No
 * deadline of its own: a call that hangs fails the test by its timeout.
 */
function settled<T>(promise: Promise<T>): Promise<T | Error> {
  return promise.catch((e: unknown) => e as Error);
}

/** The '429 rate limited, waiting' lines of a captured log, in order. */
function rateLimitedWaits(
  log: ReturnType<typeof captureLogger>,
): { time: number; waitMs: number; times: number }[] {
  return log
    .lines()
    .map((line) => JSON.parse(line) as { msg: string; time: string; waitMs: number; times: number })
    .filter((line) => line.msg === '429 rate limited, waiting')
    .map((line) => ({ time: Date.parse(line.time), waitMs: line.waitMs, times: line.times }));
}

const MIB = 1024 ** 2;
const YEARS_57_S = 57 * 365 * 86_400;

describe('response size limit (HIRESYNC_MAX_PAGE_BYTES)', () => {
  it('stops reading a body that grows past the limit as it streams, naming the limit and the path', async () => {
    const h = await start({ env: { HIRESYNC_MAX_PAGE_BYTES: String(MIB) } });
    h.sim.inject({ kind: 'oversized-body', bytes: 8 * MIB, declareLength: false });
    const error = await settled(h.walk('jobs'));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message).toMatch(
      /\/v3\/jobs .*HIRESYNC_MAX_PAGE_BYTES \(1048576 bytes/,
    );
  });

  it('refuses a page whose content-length is above the limit before reading its body', async () => {
    const h = await start({ env: { HIRESYNC_MAX_PAGE_BYTES: String(MIB) } });
    h.sim.inject({ kind: 'oversized-body', bytes: 100 * MIB });
    const error = await settled(h.walk('jobs'));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message).toMatch(/declares 100000000|declares 104857/);
  });

  it('counts a gzip body after decompression, stopping a 600 MB bomb early', async () => {
    const h = await start({ env: { HIRESYNC_MAX_PAGE_BYTES: String(MIB) } });
    h.sim.inject({ kind: 'oversized-body', bytes: 600 * MIB, gzip: true });
    const before = process.memoryUsage().heapUsed;
    const error = await settled(h.walk('jobs'));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message).toContain('after decompression');
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(100 * MIB);
  });

  it('reads a page just under the limit', async () => {
    const h = await start({
      simulator: { dataset: { counts: { jobs: 100 } } },
      env: { HIRESYNC_MAX_PAGE_BYTES: String(64 * 1024), HIRESYNC_PER_PAGE: '100' },
    });
    expect((await h.walk('jobs')).flatMap((p) => p.records)).toHaveLength(100);
  });
});

describe('token lifetimes the token endpoint states badly', () => {
  const lifetimes: [string, () => Record<string, unknown>][] = [
    ['a fractional expires_at', () => ({ expires_at: Date.now() / 1000 + 3600.1234 })],
    ['expires_in 0.0001', () => ({ expires_in: 0.0001 })],
    ['expires_in 1e300', () => ({ expires_in: 1e300 })],
    ['an expires_at in the past', () => ({ expires_at: Date.now() / 1000 - 60 })],
  ];
  for (const [name, lifetime] of lifetimes) {
    it(`walks every page with one token when the token response states ${name}`, async () => {
      const h = await start({
        simulator: { statedTokenLifetime: lifetime() },
        env: { HIRESYNC_PER_PAGE: '50' },
      });
      const pages = await h.walk('jobs');
      expect(pages.flatMap((p) => p.records)).toHaveLength(250);
      expect(h.sim.stats.tokensIssued).toBe(1);
    });
  }

  it('renews a short but usable token (expires_at 3 s ahead) before it expires: no request carries an expired token', async () => {
    const h = await start({
      simulator: {
        tokenTtlSeconds: 3,
        expiresField: 'expires_at',
        latencyMs: 40,
        dataset: { counts: { jobs: 150 } },
      },
      env: { HIRESYNC_PER_PAGE: '1' },
    });
    const pages = await h.walk('jobs');
    expect(pages.flatMap((p) => p.records)).toHaveLength(150);
    // 150 pages of at least 40 ms each outlive two 3 s tokens.
    expect(h.sim.stats.tokensIssued).toBeGreaterThanOrEqual(3);
    expect(h.sim.stats.byStatus[401] ?? 0).toBe(0);
    expect(h.log.text()).not.toMatch(/token lifetime stated by the token endpoint is unusable/);
  });

  it('warns once when the stated lifetime is already over, and re-mints only after a 401', async () => {
    const h = await start({
      simulator: { statedTokenLifetime: { expires_at: Date.now() / 1000 - 60 } },
      env: { HIRESYNC_PER_PAGE: '50' },
    });
    const client = h.client();
    for await (const page of fetchPages({
      client,
      startUrl: listUrl(h.config.api, jobs),
    })) {
      if (page.number === 2) h.sim.expireTokens();
    }
    expect(h.sim.stats.tokensIssued).toBe(2);
    expect(
      h.log.text().match(/token lifetime stated by the token endpoint is unusable/g),
    ).toHaveLength(1);
  });
});

describe('Retry-After ceiling and epoch times', () => {
  it('reads a Retry-After above 10^9 as epoch seconds and waits it out', async () => {
    const h = await start({ env: { HIRESYNC_PER_PAGE: '100' } });
    h.sim.inject({ kind: 'rate-limit', retryAfterS: 2, format: 'epoch' });
    const started = Date.now();
    const pages = await settled(h.walk('jobs'));
    expect(Array.isArray(pages)).toBe(true);
    // A lower bound: the wait really happened (a slow machine only adds to it).
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(h.sim.stats.rateLimited).toBe(1);
  });

  it('ends the attempt at once on an epoch Retry-After 57 years ahead, without pausing other workers', async () => {
    const h = await start();
    h.sim.inject({ kind: 'rate-limit', retryAfterS: YEARS_57_S, format: 'epoch' });
    const error = await settled(h.walk('jobs'));
    expect(error).toBeInstanceOf(RetryAfterTooLongError);
    expect((error as Error).message).toMatch(
      /57\.\d years.*HIRESYNC_MAX_RETRY_AFTER \(60\.0 min\)/,
    );
    // Thrown before any wait: one request, and no shared pause for the other workers.
    expect(h.sim.stats.listRequests).toBe(1);
    expect(h.log.text()).not.toContain('429 rate limited, waiting');
    const namespace = new TokenCipher(h.config.api.auth).namespace;
    expect(await h.redis.hget(`${h.prefix}:rate:${namespace}`, 'pausedUntil')).toBeNull();
  });

  it('ends the attempt when a shared pause longer than HIRESYNC_MAX_RETRY_AFTER is already in Redis', async () => {
    const h = await start({ env: { HIRESYNC_MAX_RETRY_AFTER: '10m' } });
    const namespace = new TokenCipher(h.config.api.auth).namespace;
    await h.redis.hset(
      `${h.prefix}:rate:${namespace}`,
      'pausedUntil',
      String(Date.now() + YEARS_57_S * 1000),
    );
    const error = await settled(h.client().get(listUrl(h.config.api, jobs)));
    expect(error).toBeInstanceOf(RetryAfterTooLongError);
    expect((error as Error).message).toContain('HIRESYNC_MAX_RETRY_AFTER (10.0 min)');
  });

  it('backs off on 429s with Retry-After: 0 that never end, and stops when aborted in the middle of a wait', async () => {
    const h = await start({ env: { HIRESYNC_RATE_LIMIT_WINDOW: '1s' } });
    h.sim.inject({ kind: 'rate-limit', retryAfterS: 0 }, 10_000);
    const controller = new AbortController();
    const log = captureLogger();
    const get = settled(
      h.client({ logger: log.logger }).get(listUrl(h.config.api, jobs), controller.signal),
    );
    // Abort once the get is in its third wait.
    const waitInHand = await waitFor(async () => rateLimitedWaits(log)[2]);
    controller.abort(new Error('stop'));
    const error = await get;
    const rejectedAt = Date.now();
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('stop');
    // Retry-After 0 once, then the window (1 s), doubling: not a request after each 0.
    expect(rateLimitedWaits(log).map((l) => [l.times, l.waitMs])).toEqual([
      [1, 0],
      [2, 1000],
      [3, 2000],
    ]);
    // The abort ended the wait in hand: the get settled before that wait would have run out.
    expect(rejectedAt).toBeLessThan(waitInHand.time + waitInHand.waitMs);
  });
});

describe('pagination loops', () => {
  it('reports a next link back to an earlier page (B → C → B) as a loop', async () => {
    const h = await start({ env: { HIRESYNC_PER_PAGE: '50' } });
    h.sim.inject({ kind: 'delay', ms: 0 });
    h.sim.inject({ kind: 'delay', ms: 0 });
    h.sim.inject({ kind: 'previous-next' });
    const error = await settled(h.walk('jobs'));
    expect(error).toBeInstanceOf(PaginationLoopError);
    expect((error as Error).message).toContain('page 3 leads back to page 2');
    expect(h.sim.stats.listRequests).toBe(3);
  });
});

describe('aborting while the token endpoint stalls', () => {
  it('rejects a get at once when the token request never answers and the run is aborted', async () => {
    // A timeout longer than the test's: only the abort can end the token request.
    const h = await startHostile(
      () => {
        // Never answers.
      },
      { env: { HIRESYNC_HTTP_TIMEOUT: '10m' } },
    );
    const controller = new AbortController();
    const get = settled(h.client().get(`${h.url}/v3/jobs`, controller.signal));
    await waitFor(async () => h.requests.includes('POST /oauth/token'));
    controller.abort(new Error('shutdown'));
    const error = await get;
    expect((error as Error).message).toBe('shutdown');
    expect(h.requests).toEqual(['POST /oauth/token']);
  });

  it('rejects a get promptly while a token-endpoint 429 asks for an hour', async () => {
    const h = await startHostile((_req, res) => {
      res.writeHead(429, { 'retry-after': '3600' });
      res.end();
    });
    const controller = new AbortController();
    const get = settled(h.client().get(`${h.url}/v3/jobs`, controller.signal));
    // Abort in the middle of the hour's wait: a test that passes proves the wait ended early.
    await waitFor(async () => rateLimitedWaits(h.log).some((line) => line.waitMs === 3_600_000));
    controller.abort(new Error('shutdown'));
    const error = await get;
    expect((error as Error).message).toBe('shutdown');
    expect(h.requests).toEqual(['POST /oauth/token']);
  });
});

describe('clear messages for hostile answers', () => {
  it('blames HIRESYNC_AUTH_URL, not the credentials, when the token endpoint redirects', async () => {
    const h = await startHostile((_req, res) => {
      res.writeHead(307, { location: 'https://elsewhere.example/token' });
      res.end();
    });
    const error = await settled(h.client().get(`${h.url}/v3/jobs`));
    expect(error).toBeInstanceOf(RedirectedError);
    expect((error as Error).message).toMatch(/307 redirect.*HIRESYNC_AUTH_URL/);
    expect((error as Error).message).not.toMatch(/HIRESYNC_CLIENT_SECRET/);
  });

  it('blames HIRESYNC_BASE_URL when the transition token endpoint redirects', async () => {
    const h = await startHostile(
      (_req, res) => {
        res.writeHead(302, { location: '/login' });
        res.end();
      },
      { mode: 'api_key' },
    );
    const error = await settled(h.client().get(`${h.url}/v3/jobs`));
    expect(error).toBeInstanceOf(RedirectedError);
    expect((error as Error).message).toMatch(/302 redirect.*HIRESYNC_BASE_URL/);
    expect((error as Error).message).not.toMatch(/HIRESYNC_API_KEY/);
  });

  it('takes an absurd X-RateLimit-Remaining as plenty instead of failing in Redis', async () => {
    const h = await start({
      simulator: { rateLimit: { limit: 1e20, windowMs: 10_000 } },
      env: { HIRESYNC_PER_PAGE: '50' },
    });
    const pages = await h.walk('jobs');
    expect(pages.flatMap((p) => p.records)).toHaveLength(250);
  });

  it('reports an access token holding CR LF as unsendable, once, without printing it', async () => {
    const h = await startHostile((req, res) => {
      if (req.method === 'POST') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'tok-secret-9\r\nX-Evil: 1', expires_in: 3600 }));
      } else res.end('[]');
    });
    const error = await settled(h.client().get(`${h.url}/v3/jobs`));
    expect(error).toBeInstanceOf(AuthError);
    const message = (error as Error).message;
    expect(message).toContain(
      'the token endpoint returned an access token that cannot be sent in a header',
    );
    expect(message).not.toContain('tok-secret-9');
    expect(message).not.toMatch(/unreachable/);
    expect(h.requests).toEqual(['POST /oauth/token']);
    expect(h.log.text()).not.toContain('tok-secret-9');
  });

  it('fails at once on a 200 with an HTML body, naming its type', async () => {
    const h = await start();
    h.sim.inject({ kind: 'malformed-body' });
    const error = await settled(h.walk('jobs'));
    expect(error).toBeInstanceOf(UnexpectedBodyError);
    expect((error as Error).message).toMatch(/\/v3\/jobs is not JSON but a text\/html body/);
    // At once: one request, nothing retried or waited for.
    expect(h.sim.stats.listRequests).toBe(1);
    expect(h.log.text()).not.toMatch(/retrying|waiting/);
  });

  it('reports requests that time out as timeouts naming HIRESYNC_HTTP_TIMEOUT', async () => {
    const h = await startHostile(
      (req, _res, { token }) => {
        if (req.method === 'POST') token();
        // List requests never answer.
      },
      { env: { HIRESYNC_HTTP_TIMEOUT: '200ms', HIRESYNC_MAX_RETRIES: '1' } },
    );
    const error = await settled(h.client().get(`${h.url}/v3/jobs`));
    expect(error).toBeInstanceOf(TransientApiError);
    const message = (error as Error).message;
    expect(message).toMatch(/GET \/v3\/jobs timed out 2 times.*HIRESYNC_HTTP_TIMEOUT \(1 s\)/);
    expect(message).not.toMatch(/unreachable/);
  });

  it('names HIRESYNC_AUTH_URL when the token service is unreachable, without promising a retry', async () => {
    const h = await startHostile(() => {}, {
      env: { HIRESYNC_AUTH_URL: 'http://127.0.0.1:9/oauth', HIRESYNC_MAX_RETRIES: '1' },
    });
    const error = await settled(h.client().get(`${h.url}/v3/jobs`));
    expect(error).toBeInstanceOf(TransientApiError);
    const message = (error as Error).message;
    expect(message).toMatch(
      /POST \/oauth\/token failed 2 times \(ECONNREFUSED\).*HIRESYNC_AUTH_URL/,
    );
    expect(message).not.toMatch(/retried/);
  });

  it('says a persistent 5xx is failing without promising a retry the queue may not make', async () => {
    const h = await start({ env: { HIRESYNC_MAX_RETRIES: '1' } });
    h.sim.inject({ kind: 'status', status: 502 }, 2);
    const error = await settled(h.walk('jobs'));
    expect(error).toBeInstanceOf(TransientApiError);
    expect((error as Error).message).toMatch(/answered 502 2 times/);
    expect((error as Error).message).not.toMatch(/retried/);
  });
});

describe('stale cursors', () => {
  // The cursor's parameter name is the API's business: here it is `page_token`.
  const answer422 = (res: import('node:http').ServerResponse) => {
    res.writeHead(422, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'Unprocessable Content', errors: ['invalid page_token'] }));
  };

  it('calls a 422 for a next URL a rejected cursor, whatever its parameter is called', async () => {
    const h = await startHostile((req, res, { token }) => {
      if (req.method === 'POST') return token();
      answer422(res);
    });
    const error = await h
      .client()
      .get(`${h.url}/v3/jobs?page_token=abc`, undefined, { cursor: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CursorRejectedError);
  });

  it('does not call a 422 for a URL that is no next link a rejected cursor, even with a cursor parameter', async () => {
    const h = await startHostile((req, res, { token }) => {
      if (req.method === 'POST') return token();
      answer422(res);
    });
    const error = await h
      .client()
      .get(`${h.url}/v3/jobs?cursor=abc`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(CursorRejectedError);
  });
});
