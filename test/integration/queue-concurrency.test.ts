import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { PrivateRedis } from '../../bench/private-servers.js';
import { RunLock } from '../../src/queue/run-lock.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function privateRedis(): Promise<PrivateRedis> {
  const server = await PrivateRedis.start();
  cleanups.push(() => server.close());
  return server;
}

function connect(url: string, options: { maxRetriesPerRequest?: number | null } = {}): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, ...options });
  redis.on('error', () => {});
  cleanups.push(() => redis.disconnect());
  return redis;
}

/** Calls per command since the server started, from INFO commandstats. */
async function commandCalls(redis: Redis): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  for (const match of (await redis.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
    calls[match[1] as string] = Number(match[2]);
  }
  return calls;
}

describe('run lock scripts', () => {
  it.runIf(PrivateRedis.available())(
    'are sent once per connection, then run by their SHA',
    async () => {
      const server = await privateRedis();
      const redis = connect(server.url);
      const lock = new RunLock(redis, 'test', 1000);
      const release = await lock.acquire('jobs');
      expect(release).toBeDefined();
      // About six renewals at a third of the TTL.
      await sleep(2200);
      await release?.();
      const calls = await commandCalls(connect(server.url));
      // One EVAL per script (renew, release) on this socket; every other call by SHA.
      expect(calls.eval ?? 0).toBeLessThanOrEqual(2);
      expect(calls.evalsha ?? 0).toBeGreaterThanOrEqual(5);
      expect(await redis.exists('test:run-lock:jobs')).toBe(0);
    },
  );
});
