import { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import { HiresyncError } from '../../errors.js';
import { checkRedisDatabase } from '../../preflight.js';
import { createDatabase } from '../../warehouse/database.js';
import type { Database } from '../../warehouse/schema.js';
import { describeConnectionError } from '../connection-error.js';

const CONNECT_TIMEOUT_MS = 5000;

function reason(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return e.code ? `${e.code}: ${e.message ?? ''}` : (e.message ?? String(error));
}

/**
 * A pool of two connections to DATABASE_URL, checked: a failure to connect
 * throws at once, naming the cause and the variable to fix. The caller
 * destroys it.
 */
export async function openDatabase(url: string, subcommand: string): Promise<Kysely<Database>> {
  const db = createDatabase(url, { max: 2, applicationName: `hiresync accounts ${subcommand}` });
  try {
    await sql`select 1`.execute(db);
    return db;
  } catch (error) {
    await db.destroy();
    throw new HiresyncError(
      describeConnectionError(error, 'DATABASE_URL') ??
        `cannot reach Postgres (${reason(error)}): check DATABASE_URL`,
      { cause: error },
    );
  }
}

/**
 * A Redis connection to REDIS_URL that fails fast rather than waiting for
 * Redis to come back (a command, not a worker), checked with a PING and a
 * SELECT of REDIS_URL's database index. The caller disconnects it.
 */
export async function openRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: () => null,
  });
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    // ioredis reports a refused connection as "Connection is closed"; name the real cause.
    throw new HiresyncError(`cannot reach Redis (${reason(lastError ?? error)}): check REDIS_URL`, {
      cause: error,
    });
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
