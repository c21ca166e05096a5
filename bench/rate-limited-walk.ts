/**
 * Benchmark: a walk of N pages against the simulator's fixed-window rate limit.
 * Prints requests, 429s, wall time and the theoretical minimum.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 node dist/bench/rate-limited-walk.js [pages] [limit] [windowSeconds]
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { firstPageUrl } from '../src/api/api-page-source.js';
import { createApiClient } from '../src/api/create-api-client.js';
import { fetchPages } from '../src/api/fetch-pages.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { deletePrefix } from '../src/queue/redis.js';
import { trackingLinks } from '../src/resources/tracking-links.js';
import { ApiSimulator } from '../src/simulator/api-simulator.js';

export interface RateLimitedWalkResult {
  pages: number;
  limit: number;
  windowS: number;
  requests: number;
  rateLimited: number;
  wallS: number;
  /** Fixed window: the first `limit` pages go at once, each further `limit` waits one window. */
  minimumS: number;
  /** pages / (limit / window): the sustained-rate bound. */
  sustainedS: number;
}

export async function rateLimitedWalk(
  pages = 100,
  limit = 50,
  windowS = 10,
): Promise<RateLimitedWalkResult> {
  const perPage = 10;
  const sim = await ApiSimulator.start({
    rateLimit: { limit, windowMs: windowS * 1000 },
    dataset: { counts: { tracking_links: pages * perPage } },
  });
  const config = loadConfig({
    HIRESYNC_BASE_URL: sim.url,
    HIRESYNC_AUTH_URL: sim.authUrl,
    HIRESYNC_CLIENT_ID: 'demo-client',
    HIRESYNC_CLIENT_SECRET: 'demo-secret',
    DATABASE_URL: 'postgres://unused/unused',
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    HIRESYNC_PER_PAGE: String(perPage),
    HIRESYNC_RATE_LIMIT_WINDOW: `${windowS}s`,
  });
  const redis = new Redis(config.redisUrl);
  const prefix = `bench-${randomUUID()}`;
  try {
    const client = createApiClient({
      config: config.api,
      redis,
      logger: createLogger({ level: 'silent' }),
      prefix,
    });
    const started = performance.now();
    let walked = 0;
    for await (const _page of fetchPages({
      client,
      startUrl: firstPageUrl(config.api, trackingLinks),
    }))
      walked += 1;
    const wallS = (performance.now() - started) / 1000;
    return {
      pages: walked,
      limit,
      windowS,
      requests: sim.stats.listRequests,
      rateLimited: sim.stats.rateLimited,
      wallS,
      minimumS: (Math.ceil(walked / limit) - 1) * windowS,
      sustainedS: (walked / limit) * windowS,
    };
  } finally {
    await deletePrefix(redis, prefix);
    redis.disconnect();
    await sim.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [pages, limit, windowS] = process.argv.slice(2).map(Number);
  const r = await rateLimitedWalk(pages || 100, limit || 50, windowS || 10);
  process.stdout.write(
    `rate-limited walk: ${r.pages} pages at ${r.limit} req/${r.windowS}s: ${r.requests} requests, ${r.rateLimited} x 429, ` +
      `${r.wallS.toFixed(2)} s wall; minimum ${r.minimumS} s (fixed window), ${r.sustainedS} s at the sustained rate\n`,
  );
}
