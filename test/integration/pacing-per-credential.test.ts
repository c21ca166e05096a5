import { afterEach, describe, expect, it } from 'vitest';
import { TokenCipher } from '../../src/api/token-cipher.js';
import { createApp } from '../../src/app.js';
import { withEnvironmentCredentials } from '../../src/config/load-config.js';
import { runOnce } from '../../src/queue/run-once.js';
import { connectRedis } from '../../src/redis/connect.js';
import type { RateLimitResetFormat } from '../../src/simulator/rate-limiter.js';
import { captureLogger } from '../support/capture-logger.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

const harnesses: SyncHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

/** Every resource of the account: the built-in ones and three extra lists (55 pages of 10). */
const COUNTS = {
  jobs: 100,
  job_posts: 100,
  tracking_links: 150,
  applications: 100,
  candidates: 60,
  departments: 40,
};
const RESOURCES = Object.keys(COUNTS);
const WINDOW_MS = 2_000;

describe('pacing per credential across all its resources', () => {
  it.each<RateLimitResetFormat>(['epoch', 'epoch-ms'])(
    'a full sync of every resource of one account at 20 requests / 2 s with an epoch Reset (%s) makes no 429, one request per page, and reads the Reset on a clock offset bounded from Date headers',
    async (resetFormat) => {
      const { jobs, job_posts, tracking_links, ...extras } = COUNTS;
      const h = await startSyncHarness({
        simulator: {
          rateLimit: { limit: 20, windowMs: WINDOW_MS },
          rateLimitHeaders: true,
          rateLimitHeadersOn429: true,
          rateLimitResetFormat: resetFormat,
          expiresField: 'expires_at',
          extraResources: Object.keys(extras),
          dataset: { flatTrackingLinks: true, counts: COUNTS },
        },
        env: {
          HIRESYNC_PER_PAGE: '10',
          HIRESYNC_RESOURCES: RESOURCES.join(','),
          HIRESYNC_RATE_LIMIT_WINDOW: '2s',
          HIRESYNC_CONCURRENCY: String(RESOURCES.length),
        },
      });
      harnesses.push(h);
      const log = captureLogger('debug');
      const app = createApp(h.config, log.logger, { defaultMetrics: false });
      const outcomes = await (async () => {
        try {
          return await runOnce(app, RESOURCES, 'full');
        } finally {
          await app.close();
        }
      })();
      expect(outcomes.map((o) => o.ok)).toEqual(RESOURCES.map(() => true));
      const pages = outcomes.reduce((n, o) => n + (o.ok ? o.summary.pages : 0), 0);
      expect(pages).toBe(55);
      expect(h.sim.stats.rateLimited).toBe(0);
      expect(h.sim.stats.listRequests).toBe(pages);

      // The offset between the API's clock and Redis time, as all processes share it:
      // the simulator and Redis read one clock, so the true offset is 0, and the lower
      // bound the waits use is never above it (a wait never ends before the API's end).
      const namespace = new TokenCipher(withEnvironmentCredentials(h.config).api.auth).namespace;
      const redis = connectRedis(h.config.redis, { maxRetriesPerRequest: 3 });
      const state = await redis.hgetall(`${h.config.redisPrefix}:rate:${namespace}`);
      redis.disconnect();
      expect(Number(state.offsetLo)).toBeLessThanOrEqual(0);
      expect(Number(state.offsetHi)).toBeGreaterThanOrEqual(0);
      expect(Number(state.offsetHi) - Number(state.offsetLo)).toBeLessThan(1_000);

      // Each wait the pacer chose ran to the stated end read on that offset: at most
      // the window plus the one second a single Date leaves open (and a little
      // for the time between the answer and the wait).
      const waits = log
        .lines()
        .map((line) => JSON.parse(line) as { msg: string; waitedMs?: number })
        .filter((line) => line.msg === 'paced by rate limit')
        .map((line) => Number(line.waitedMs));
      expect(waits.length).toBeGreaterThan(0);
      for (const wait of waits) expect(wait).toBeLessThanOrEqual(WINDOW_MS + 1_000 + 50);
    },
  );
});
