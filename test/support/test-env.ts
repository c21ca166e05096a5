import { randomBytes, randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { readRedis } from '../../src/config/redis-settings.js';
import { closeRedis, deletePrefix } from '../../src/queue/redis.js';
import { connectRedis } from '../../src/redis/connect.js';

/** A Redis key prefix of the test's own (HIRESYNC_REDIS_PREFIX): no other test sees its keys. */
export function newRedisPrefix(): string {
  return `test-${randomUUID()}`;
}

/** A fresh HIRESYNC_SECRET_KEY: 32 random bytes, base64. */
export function newSecretKey(): string {
  return randomBytes(32).toString('base64');
}

/** The services a test's hiresync processes reach, as their environment. */
export interface ServicesEnv {
  DATABASE_URL: string;
  REDIS_URL: string;
  HIRESYNC_REDIS_PREFIX: string;
  HIRESYNC_SECRET_KEY: string;
}

/**
 * The database at `databaseUrl`, the shared Redis under a key prefix of the
 * test's own, and a fresh secret key. Clear the prefix with
 * {@link clearRedisPrefix} after the test.
 */
export function servicesEnv(databaseUrl: string): ServicesEnv {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: inject('redisUrl'),
    HIRESYNC_REDIS_PREFIX: newRedisPrefix(),
    HIRESYNC_SECRET_KEY: newSecretKey(),
  };
}

/** Deletes every Redis key under `env`'s HIRESYNC_REDIS_PREFIX (REDIS_URL default the shared Redis). */
export async function clearRedisPrefix(env: {
  REDIS_URL?: string | undefined;
  REDIS_SENTINEL_PASSWORD?: string | undefined;
  HIRESYNC_REDIS_PREFIX?: string | undefined;
}): Promise<void> {
  if (!env.HIRESYNC_REDIS_PREFIX) throw new Error('no HIRESYNC_REDIS_PREFIX to clear');
  // Any form of REDIS_URL (one server, Sentinels, a Cluster), as hiresync connects to it.
  const { settings, problems } = readRedis({
    REDIS_URL: env.REDIS_URL ?? inject('redisUrl'),
    REDIS_SENTINEL_PASSWORD: env.REDIS_SENTINEL_PASSWORD,
  });
  if (!settings) throw new Error(problems.map((p) => `${p.variable} ${p.message}`).join('; '));
  const redis = connectRedis(settings.redis, { maxRetriesPerRequest: 3 });
  try {
    await deletePrefix(redis, env.HIRESYNC_REDIS_PREFIX);
  } finally {
    await closeRedis(redis);
  }
}

/** The secret of the environment's own client (`default`) at a simulator started with it in `clientSecrets`. */
export const DEFAULT_CLIENT_SECRET = 'sync-secret';

/** The simulator's URLs, and the environment's own client (`default`), as a hiresync process reads them. */
export function simulatorEnv(sim: { url: string; authUrl: string }): Record<string, string> {
  return {
    HIRESYNC_BASE_URL: sim.url,
    HIRESYNC_AUTH_URL: sim.authUrl,
    HIRESYNC_CLIENT_ID: 'demo-client',
    HIRESYNC_CLIENT_SECRET: DEFAULT_CLIENT_SECRET,
  };
}

/** The simulator's partner app (the credentials it accepts for refresh and code grants). */
export const PARTNER_APP_ENV = {
  HIRESYNC_PARTNER_CLIENT_ID: 'partner-client',
  HIRESYNC_PARTNER_CLIENT_SECRET: 'partner-secret',
} as const;
