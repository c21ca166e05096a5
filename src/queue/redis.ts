import type { Logger } from '../logger.js';
import { connectRedis, deleteMatching, type RedisConnection } from '../redis/connect.js';
import type { RedisTarget } from '../redis/redis-target.js';
import { clearConnectionError, noteConnectionError } from '../redis/tls-failure.js';

/**
 * How many reconnection attempts a command of the application's connection
 * waits through before it fails (ioredis's MaxRetriesPerRequestError): a few
 * seconds at most, so checkpoints, tokens, pacing and locks fail during a Redis
 * outage and the run's own retries take over, instead of hanging.
 */
export const APP_MAX_RETRIES_PER_REQUEST = 3;

function connect(
  target: RedisTarget,
  logger: Logger,
  name: string,
  maxRetriesPerRequest: number | null,
): RedisConnection {
  const redis = connectRedis(target, { maxRetriesPerRequest, name });
  let warned = false;
  // The TLS failure logged in this outage: a certificate that stopped
  // verifying is said as the setting to fix, once, even when the outage began
  // otherwise (the server restarting with its new certificate refuses first).
  let tlsLogged: string | undefined;
  redis.on('error', (error: Error) => {
    const tls = noteConnectionError(redis, error, target);
    if (tls !== undefined && tls !== tlsLogged) {
      logger.error({ connection: name }, `redis connection error, reconnecting: ${tls}`);
      tlsLogged = tls;
    } else if (!warned && tls === undefined) {
      logger.warn({ err: error, connection: name }, 'redis connection error, reconnecting');
    }
    warned = true;
  });
  redis.on('ready', () => {
    clearConnectionError(redis);
    if (warned) logger.info({ connection: name }, 'redis connection restored');
    warned = false;
    tlsLogged = undefined;
  });
  return redis;
}

/**
 * The application's own ioredis connection (checkpoints, tokens, pacing,
 * locks): a command fails after {@link APP_MAX_RETRIES_PER_REQUEST}
 * reconnection attempts. Connection trouble is logged once per outage instead
 * of crashing the process on an 'error' event.
 */
export function createRedis(target: RedisTarget, logger: Logger, name: string): RedisConnection {
  return connect(target, logger, name, APP_MAX_RETRIES_PER_REQUEST);
}

/**
 * An ioredis connection as BullMQ wants it: no per-command retry limit (a
 * command waits for the reconnection instead of failing, BullMQ's own loops
 * resume), logging as {@link createRedis} does.
 */
export function createQueueRedis(
  target: RedisTarget,
  logger: Logger,
  name: string,
): RedisConnection {
  return connect(target, logger, name, null);
}

/**
 * Closes a connection and waits until its socket is closed: ioredis's
 * `disconnect` ends the socket and leaves a timer (up to its
 * disconnectTimeout, 2 s) that would otherwise outlive the caller's work.
 */
export async function closeRedis(redis: RedisConnection): Promise<void> {
  // Only a live socket ends with 'end' (within disconnectTimeout at worst);
  // one never connected, reconnecting or closed has nothing to wait for.
  if (!['connecting', 'connect', 'ready'].includes(redis.status)) {
    redis.disconnect();
    return;
  }
  const ended = new Promise<void>((resolve) => redis.once('end', () => resolve()));
  redis.disconnect();
  await ended;
}

/** Deletes every key under `prefix:` with SCAN (never KEYS, which blocks Redis). */
export async function deletePrefix(redis: RedisConnection, prefix: string): Promise<void> {
  await deleteMatching(redis, `${prefix}:*`);
}
