import { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import { HiresyncError } from './errors.js';
import type { Database } from './warehouse/schema.js';

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} did not answer within ${ms / 1000} s`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function reason(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return e.code ? `${e.code}: ${e.message ?? ''}` : (e.message ?? String(error));
}

/**
 * Checks that Postgres (with hiresync's tables) and Redis answer, so a command
 * fails at once with the cause and the variable to fix instead of waiting on
 * reconnects.
 */
export async function checkConnections(
  db: Kysely<Database>,
  redis: Redis,
  timeoutMs = 5000,
): Promise<void> {
  try {
    await within(sql`select 1 from sync_runs limit 1`.execute(db), timeoutMs, 'Postgres');
  } catch (error) {
    const missing = (error as { code?: string }).code === '42P01';
    throw new HiresyncError(
      missing
        ? "the database has no hiresync tables: run 'hiresync migrate' first"
        : `cannot reach Postgres (${reason(error)}): check DATABASE_URL`,
      { cause: error },
    );
  }
  try {
    await within(redis.ping(), timeoutMs, 'Redis');
  } catch (error) {
    throw new HiresyncError(`cannot reach Redis (${reason(error)}): check REDIS_URL`, {
      cause: error,
    });
  }
  await checkRedisDatabase(redis, timeoutMs);
}

/**
 * Checks, on a connection of its own that is closed before this returns, that
 * Redis answers and accepts REDIS_URL's database index. Call it before any
 * other connection to `url` is made: ioredis goes on in database 0 when the
 * server refuses the index, and a connection made earlier would write there
 * (BullMQ's queue writes its meta key as soon as it connects).
 */
export async function confirmRedisDatabase(url: string, timeoutMs = 5000): Promise<void> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
  });
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    try {
      await within(redis.ping(), timeoutMs, 'Redis');
    } catch (error) {
      // ioredis reports a refused connection as "Connection is closed"; name the real cause.
      throw new HiresyncError(
        `cannot reach Redis (${reason(lastError ?? error)}): check REDIS_URL`,
        { cause: error },
      );
    }
    await checkRedisDatabase(redis, timeoutMs);
  } finally {
    redis.disconnect();
  }
}

/**
 * Selects REDIS_URL's database index again and fails when the server refuses
 * it: ioredis only logs a refused SELECT at connection time and goes on with
 * database 0, where hiresync would share keys with whatever else lives there.
 */
export async function checkRedisDatabase(redis: Redis, timeoutMs = 5000): Promise<void> {
  const db: unknown = redis.options.db ?? 0;
  if (typeof db !== 'number' || !Number.isInteger(db) || db < 0) {
    throw new HiresyncError(
      `REDIS_URL names database ${JSON.stringify(db)}, which is not a database index (a whole number >= 0): check REDIS_URL`,
    );
  }
  try {
    await within(redis.select(db), timeoutMs, 'Redis');
  } catch (error) {
    throw new HiresyncError(
      `REDIS_URL selects database ${db}, which this Redis server refused (${reason(error)}); ` +
        "use an index below the server's 'databases' setting (16 by default): check REDIS_URL",
      { cause: error },
    );
  }
}
