import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { PrivateSentinel } from '../../bench/private-sentinel.js';
import { presentUnlessCi, REDIS_SERVER } from '../../bench/required-binaries.js';
import { connectRedis } from '../../src/redis/connect.js';
import { parseRedisUrl } from '../../src/redis/redis-target.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import type { CliProcess } from '../support/run-cli.js';

const { defer, harness, cli } = cleanupAfterEach();
// The failover needs servers of the test's own: skipped without them, failed under CI.
const privateRedis = presentUnlessCi(PrivateSentinel.available(), REDIS_SERVER);

const RECORDS = 1000;
const PER_PAGE = 50;
const PAGES = RECORDS / PER_PAGE;

describe('Redis Sentinel', () => {
  it.runIf(privateRedis)(
    'two syncs of one resource through the Sentinels survive a master kill mid-run: both finish, every record once, at most one page read again, never overlapping',
    async () => {
      const sentinel = await PrivateSentinel.start();
      defer(() => sentinel.close());
      const h = await harness({
        // Pages slow enough that the second `sync` is waiting for the first
        // (past its own start and preflight) before the master is killed.
        simulator: { dataset: { counts: { jobs: RECORDS } }, latencyMs: 400 },
        env: {
          REDIS_URL: sentinel.url,
          HIRESYNC_PER_PAGE: String(PER_PAGE),
          HIRESYNC_RUN_ATTEMPTS: '20',
          HIRESYNC_RUN_BACKOFF: '300ms',
          HIRESYNC_RUN_LOCK_TTL: '1s',
        },
      });
      const oldMaster = sentinel.masterPort();
      // Connection errors during the failover are the log's to tell, never raw stacks on stderr.
      const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
      defer(() => printed.mockRestore());
      let contender: CliProcess | undefined;
      let failover: Promise<number> | undefined;
      let killedAt = 0;
      let firstPageAfterKill = 0;
      // The in-process sync runs first; at its first page a second `sync` of
      // the same resource starts (it must wait: one run per resource), and at
      // its fourth page or later, once that one is waiting (a command starting
      // during a failover fails its preflight, exit 1: docs/operating.md), the
      // master is SIGKILLed.
      const [outcome] = await h.sync(['jobs'], 'full', {
        onProgress: (p) => {
          if (p.pages === 1 && !contender) {
            contender = cli(['sync', '--resource', 'jobs', '--full'], h.env);
          }
          const waiting = contender?.stderr().includes('resource already running elsewhere');
          if (p.pages >= 4 && waiting && !failover) {
            killedAt = Date.now();
            failover = sentinel.failover({ keepDown: true });
          } else if (failover && firstPageAfterKill === 0) {
            firstPageAfterKill = Date.now();
          }
        },
      });
      const newMaster = await failover;
      expect(newMaster).toBeDefined();
      expect(newMaster).not.toBe(oldMaster);
      expect(outcome, JSON.stringify(outcome)).toMatchObject({
        ok: true,
        summary: { records: RECORDS, pages: PAGES },
      });
      expect(await contender?.exit).toBe(0);
      expect(printed).not.toHaveBeenCalled();

      // Every record stored once: the ids are the simulator's, one row each.
      const ids = await h.liveIds('jobs');
      expect(ids).toEqual(h.expectedIds('jobs'));
      expect(new Set(ids).size).toBe(RECORDS);

      // No two runs of the resource overlapped: their [started, finished] spans are disjoint.
      const runs = await sql<{ outcome: string; overlapping: string }>`
        select a.outcome, (select count(*) from public.sync_runs b
          where b.resource = a.resource and b.id <> a.id
            and tstzrange(a.started_at, a.finished_at) && tstzrange(b.started_at, b.finished_at)
        )::text as overlapping
        from public.sync_runs a where a.resource = 'jobs' order by a.started_at`.execute(
        h.database.db,
      );
      expect(runs.rows).toEqual([
        { outcome: 'succeeded', overlapping: '0' },
        { outcome: 'succeeded', overlapping: '0' },
      ]);

      // Two full runs of PAGES pages: anything more was read again after the failover.
      const reread = h.sim.stats.listRequests - 2 * PAGES;
      expect(reread).toBeGreaterThanOrEqual(0);
      expect(reread).toBeLessThanOrEqual(1);

      // The pacing state is on the promoted master: the scripts ran through the Sentinels' choice.
      const pacing = sentinel.command(
        newMaster as number,
        '--scan',
        '--pattern',
        `${h.config.redisPrefix}:rate:*`,
      );
      expect(pacing).toMatch(/:rate:/);
      process.stdout.write(
        `sentinel failover: syncing paused ${firstPageAfterKill - killedAt} ms (kill to next page stored), ${reread} pages read again, ${RECORDS - ids.length} rows lost\n`,
      );
    },
    180_000,
  );

  it.runIf(privateRedis)(
    'syncs through Sentinels that ask REDIS_SENTINEL_PASSWORD, which refuse a connection without it',
    async () => {
      const sentinel = await PrivateSentinel.start({ sentinelPassword: 'sentinel-secret' });
      defer(() => sentinel.close());
      const h = await harness({
        simulator: { dataset: { counts: { jobs: 120 } } },
        env: {
          REDIS_URL: sentinel.url,
          REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
          HIRESYNC_PER_PAGE: '50',
        },
      });
      const [outcome] = await h.sync(['jobs'], 'full');
      expect(outcome).toMatchObject({ ok: true, summary: { records: 120, pages: 3 } });
      expect(await h.liveIds('jobs')).toEqual(h.expectedIds('jobs'));
      const without = connectRedis(parseRedisUrl(sentinel.url), {
        maxRetriesPerRequest: 0,
        failFastMs: 2000,
      });
      without.on('error', () => {});
      await expect(without.ping()).rejects.toThrow();
      without.disconnect();
    },
    120_000,
  );
});
