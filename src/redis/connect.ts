import type { ConnectionOptions } from 'node:tls';
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from './redis-target.js';

/** A connection to what REDIS_URL names: one server or a Sentinel master (Redis), or a Cluster. */
export type RedisConnection = Redis | Cluster;

/** How a connection of {@link connectRedis} behaves. */
export interface ConnectOptions {
  /** CLIENT SETNAME, seen in CLIENT LIST. */
  name?: string;
  /**
   * Reconnection attempts a command waits through before it fails; null: it
   * waits for the reconnection (what BullMQ wants of its connections).
   */
  maxRetriesPerRequest: number | null;
  /** A command's connection (not the worker's): one try, failing after this many ms. */
  failFastMs?: number;
  /** Connect on the first command rather than at once. */
  lazyConnect?: boolean;
}

/** The TLS options of a `rediss…` target: verified against REDIS_CA_FILE when set, else the system's CAs. */
function tlsOptions(target: RedisTarget): ConnectionOptions | undefined {
  if (!target.tls) return undefined;
  return target.ca === undefined ? {} : { ca: target.ca };
}

/**
 * Opens a connection to `target` (REDIS_URL, src/redis/redis-target.ts): the
 * one place ioredis is given hiresync's Redis, so TLS, the CA, Sentinel and
 * Cluster hold for the queue, the checkpoints, tokens, locks and pacing alike.
 */
export function connectRedis(target: RedisTarget, options: ConnectOptions): RedisConnection {
  const tls = tlsOptions(target);
  const failFast = options.failFastMs !== undefined;
  const common: RedisOptions = {
    maxRetriesPerRequest: options.maxRetriesPerRequest,
    ...(options.name === undefined ? {} : { connectionName: options.name }),
    ...(options.lazyConnect ? { lazyConnect: true } : {}),
    ...(failFast ? { connectTimeout: options.failFastMs, retryStrategy: () => null } : {}),
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
  };
  switch (target.kind) {
    case 'server':
      // Options only, never the URL: ioredis lets a URL's parts override
      // options, and REDIS_URL was read once, in redis-target.ts.
      return new Redis({
        ...common,
        host: target.host,
        port: target.port,
        db: target.db,
        ...(target.family === undefined ? {} : { family: target.family }),
        ...(tls ? { tls } : {}),
      });
    case 'sentinel':
      return new Redis({
        ...common,
        sentinels: target.sentinels,
        name: target.master,
        db: target.db,
        ...(target.sentinelPassword === undefined
          ? {}
          : { sentinelPassword: target.sentinelPassword }),
        ...(tls ? { tls, enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
        ...(failFast ? { sentinelRetryStrategy: () => null } : {}),
      });
    case 'cluster': {
      const clusterOptions: ClusterOptions = {
        redisOptions: { ...common, ...(tls ? { tls } : {}) },
        ...(options.lazyConnect ? { lazyConnect: true } : {}),
        ...(failFast ? { clusterRetryStrategy: () => null } : {}),
        // With TLS, keep the names the nodes are given by, so a certificate
        // for a host name (as managed services issue) verifies.
        ...(tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
      };
      return new Cluster(target.nodes, clusterOptions);
    }
  }
}

/**
 * The masters of a Cluster, once it is connected: a connection still
 * connecting (a command's first) knows none yet, and a SCAN of none would
 * find nothing and say so without error.
 */
async function mastersOf(cluster: Cluster): Promise<Redis[]> {
  if (cluster.status !== 'ready') await cluster.ping();
  const masters = cluster.nodes('master');
  if (masters.length === 0) throw new Error('the Redis Cluster names no master to scan');
  return masters;
}

/**
 * The keys matching `pattern` (a SCAN glob), with SCAN, never KEYS (which
 * blocks Redis): on a Cluster, on every master.
 */
export async function* scanKeys(redis: RedisConnection, pattern: string): AsyncGenerator<string[]> {
  const servers = redis instanceof Cluster ? await mastersOf(redis) : [redis];
  for (const server of servers) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) yield keys;
      cursor = next;
    } while (cursor !== '0');
  }
}

/** The database index a connection selects: a Cluster's is 0. */
export function databaseIndex(redis: RedisConnection): unknown {
  return redis instanceof Cluster ? 0 : (redis.options.db ?? 0);
}

/**
 * Deletes the keys matching `pattern` (a SCAN glob) and returns how many
 * went. On a Cluster each key is deleted by itself: one DEL of keys in
 * several slots is refused (CROSSSLOT).
 */
export async function deleteMatching(redis: RedisConnection, pattern: string): Promise<number> {
  let deleted = 0;
  for await (const keys of scanKeys(redis, pattern)) {
    if (redis instanceof Cluster) {
      const counts = await Promise.all(keys.map((key) => redis.del(key)));
      deleted += counts.reduce((sum, n) => sum + n, 0);
    } else {
      deleted += await redis.del(...keys);
    }
  }
  return deleted;
}

/** Another connection with `redis`'s settings (BullMQ's QueueEvents wants one of its own). */
export function duplicateConnection(redis: RedisConnection): RedisConnection {
  return redis instanceof Cluster ? redis.duplicate() : redis.duplicate();
}
