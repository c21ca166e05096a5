import { connectRedis, type RedisConnection } from '../../redis/connect.js';
import type { RedisTarget } from '../../redis/redis-target.js';
import { redisConnectionError } from '../../redis/tls-failure.js';
import { checkRedisDatabase } from '../../status/preflight.js';

const CONNECT_TIMEOUT_MS = 5000;

/**
 * A Redis connection to REDIS_URL that fails fast rather than waiting for
 * Redis to come back (a command, not a worker), checked with a PING and a
 * SELECT of REDIS_URL's database index. The caller disconnects it.
 */
export async function openRedis(target: RedisTarget): Promise<RedisConnection> {
  const redis = connectRedis(target, { maxRetriesPerRequest: 1, failFastMs: CONNECT_TIMEOUT_MS });
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    // ioredis reports a refused connection as "Connection is closed"; name the real cause.
    throw redisConnectionError(lastError ?? error, target);
  }
  try {
    // Refused database index: ioredis would go on in database 0.
    await checkRedisDatabase(redis, CONNECT_TIMEOUT_MS);
    return redis;
  } catch (error) {
    redis.disconnect();
    throw error;
  }
}
