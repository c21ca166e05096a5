/**
 * Benchmark: a walk of N pages against the simulator's fixed-window rate limit.
 * Prints requests, 429s, wall time and the theoretical minimum.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 node dist/bench/rate-limited-walk.js [pages] [limit] [windowSeconds] [--headers] [--configure-window]
 *
 * `--headers`: the simulator sends X-RateLimit-Limit and -Reset beside
 * -Remaining. `--configure-window`: HIRESYNC_RATE_LIMIT_WINDOW is set to the
 * true window (else the default first guess, 10 s, stands).
 */
import { randomUUID } from 'node:crypto';
import { createApiClient } from '../src/api/create-api-client.js';
import { fetchPages } from '../src/api/fetch-pages.js';
import { TokenCipher } from '../src/api/token-cipher.js';
import { loadConfig, withEnvironmentCredentials } from '../src/config/load-config.js';
import { createLogger } from '../src/logger.js';
import { deletePrefix } from '../src/queue/redis.js';
import { connectRedis } from '../src/redis/connect.js';
import { RESOURCE_NAMES } from '../src/resources/index.js';
import { listUrl } from '../src/resources/read-plan.js';
import { trackingLinks } from '../src/resources/tracking-links.js';
import { ApiSimulator } from '../src/simulator/api-simulator.js';

/** Options of {@link rateLimitedWalk}. */
export interface RateLimitedWalkOptions {
  /** The simulator sends X-RateLimit-Limit and -Reset too. Default false. */
  headers?: boolean;
  /** HIRESYNC_RATE_LIMIT_WINDOW is the true window. Default false (the 10 s default guess). */
  configureWindow?: boolean;
  /**
   * How X-RateLimit-Reset states the end (with `headers`). Default seconds
   * from now. With `epoch` the windows are aligned on the epoch: the walk then
   * starts at a random moment of its window's first half, and the minimum
   * counts from there.
   */
  resetFormat?: 'seconds' | 'epoch' | 'epoch-ms';
}

export interface RateLimitedWalkResult {
  pages: number;
  limit: number;
  windowS: number;
  requests: number;
  rateLimited: number;
  wallS: number;
  /**
   * Fixed window: the first `limit` pages go at once, each further `limit`
   * waits one window (epoch-aligned windows: less the part of the first
   * window already gone when the walk started).
   */
  minimumS: number;
  /** pages / (limit / window): the sustained-rate bound. */
  sustainedS: number;
  /** The window length the pacer learned (Redis), if it learned one. */
  learnedWindowMs: number | undefined;
}

export async function rateLimitedWalk(
  pages = 100,
  limit = 50,
  windowS = 10,
  options: RateLimitedWalkOptions = {},
): Promise<RateLimitedWalkResult> {
  const perPage = 10;
  const sim = await ApiSimulator.start({
    rateLimit: { limit, windowMs: windowS * 1000 },
    rateLimitHeaders: options.headers ?? false,
    rateLimitResetFormat: options.resetFormat ?? 'seconds',
    dataset: { counts: { tracking_links: pages * perPage } },
  });
  const config = withEnvironmentCredentials(
    loadConfig(
      {
        HIRESYNC_BASE_URL: sim.url,
        HIRESYNC_AUTH_URL: sim.authUrl,
        HIRESYNC_CLIENT_ID: 'demo-client',
        HIRESYNC_CLIENT_SECRET: 'demo-secret',
        DATABASE_URL: 'postgres://unused/unused',
        REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        HIRESYNC_PER_PAGE: String(perPage),
        HIRESYNC_RATE_LIMIT_WINDOW: options.configureWindow ? `${windowS}s` : undefined,
      },
      RESOURCE_NAMES,
    ),
  );
  const redis = connectRedis(config.redis, { maxRetriesPerRequest: 3 });
  const prefix = `bench-${randomUUID()}`;
  try {
    const client = createApiClient({
      config: config.api,
      redis,
      logger: createLogger({ level: 'silent' }),
      prefix,
    });
    const windowMs = windowS * 1000;
    const aligned = options.headers === true && options.resetFormat === 'epoch';
    // The simulator's clock is this process's: its windows begin at multiples of windowMs.
    let phaseMs = 0;
    if (aligned) {
      const wanted = Math.random() * (windowMs / 2);
      const wait = (windowMs - (Date.now() % windowMs) + wanted) % windowMs;
      await new Promise((resolve) => setTimeout(resolve, wait));
      phaseMs = Date.now() % windowMs;
    }
    const started = performance.now();
    let walked = 0;
    for await (const _page of fetchPages({
      client,
      startUrl: listUrl(config.api, trackingLinks),
    }))
      walked += 1;
    const wallS = (performance.now() - started) / 1000;
    const namespace = new TokenCipher(config.api.auth).namespace;
    const learned = await redis.hget(`${prefix}:rate:${namespace}`, 'windowMs');
    return {
      pages: walked,
      limit,
      windowS,
      requests: sim.stats.listRequests,
      rateLimited: sim.stats.rateLimited,
      wallS,
      minimumS: (Math.ceil(walked / limit) - 1) * windowS - phaseMs / 1000,
      sustainedS: (walked / limit) * windowS,
      learnedWindowMs: learned === null ? undefined : Number(learned),
    };
  } finally {
    await deletePrefix(redis, prefix);
    redis.disconnect();
    await sim.close();
  }
}

/** One line: wall time as a ratio to the minimum, requests, 429s and what was learned. */
export function describeWalk(r: RateLimitedWalkResult): string {
  const learned =
    r.learnedWindowMs === undefined
      ? 'no window learned'
      : `window learned ${r.learnedWindowMs} ms`;
  return (
    `${r.wallS.toFixed(2)} s = ${(r.wallS / r.minimumS).toFixed(3)} × the ${Number(r.minimumS.toFixed(3))} s minimum ` +
    `(fixed window; ${r.sustainedS} s at the sustained rate); ${r.requests} requests, ${r.rateLimited} × 429; ${learned}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const [pages, limit, windowS] = args.filter((a) => !a.startsWith('--')).map(Number);
  const options = {
    headers: args.includes('--headers'),
    configureWindow: args.includes('--configure-window'),
  };
  const r = await rateLimitedWalk(pages || 100, limit || 50, windowS || 10, options);
  process.stdout.write(
    `rate-limited walk: ${r.pages} pages at ${r.limit} req/${r.windowS}s` +
      `${options.headers ? ', with Limit and Reset' : ', Remaining only'}` +
      `${options.configureWindow ? ', window configured' : ', window not configured'}: ${describeWalk(r)}\n`,
  );
}
