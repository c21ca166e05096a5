import { Redis } from 'ioredis';
import type { Logger } from '../logger.js';

/**
 * An ioredis connection as BullMQ wants it (no per-command retry limit: a
 * command waits for the reconnection instead of failing), logging connection
 * trouble instead of crashing the process on an 'error' event.
 */
export function createRedis(url: string, logger: Logger, name: string): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    connectionName: name,
    lazyConnect: false,
  });
  let warned = false;
  redis.on('error', (error: Error) => {
    if (!warned)
      logger.warn({ err: error, connection: name }, 'redis connection error, reconnecting');
    warned = true;
  });
  redis.on('ready', () => {
    if (warned) logger.info({ connection: name }, 'redis connection restored');
    warned = false;
  });
  return redis;
}

/** Deletes every key under `prefix:` with SCAN (never KEYS, which blocks Redis). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
