import { Cluster } from 'ioredis';
import type { Kysely } from 'kysely';
import { configErrorIn, HiresyncError } from '../errors.js';
import { connectRedis, databaseIndex, type RedisConnection } from '../redis/connect.js';
import { redisFailureReason } from '../redis/redis-error.js';
import type { RedisTarget } from '../redis/redis-target.js';
import { redisConnectionError } from '../redis/tls-failure.js';
import {
  type DatabaseIdentity,
  databaseIdentity,
  probeSyncRuns,
} from '../warehouse/reports/status-reads.js';
import type { Database } from '../warehouse/tables.js';

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              Object.assign(new Error(`${what} did not answer within ${ms / 1000} s`), {
                code: 'ETIMEDOUT',
              }),
            ),
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

/** Options of {@link checkConnections}. */
export interface CheckConnectionsOptions {
  /**
   * HIRESYNC_REDIS_PREFIX: checked to belong to this database (see
   * {@link checkPrefixOwner}). Unset: not checked.
   */
  prefix?: string;
  /** Claim the prefix for this database when no database has it yet. Default false (only compare). */
  claimPrefix?: boolean;
  /** How long each check waits for an answer. Default 5 s. */
  timeoutMs?: number;
}

/**
 * Checks that Postgres (with hiresync's tables) and Redis answer, so a command
 * fails at once with the cause and the variable to fix instead of waiting on
 * reconnects; with `prefix`, that the Redis prefix is this database's.
 */
export async function checkConnections(
  db: Kysely<Database>,
  redis: RedisConnection,
  options: CheckConnectionsOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 5000;
  let identity: DatabaseIdentity;
  try {
    identity = await within(probeSyncRuns(db), timeoutMs, 'Postgres');
  } catch (error) {
    // TLS refused (src/warehouse/database.ts): exit 2, naming DATABASE_URL's parameter.
    const misconfigured = configErrorIn(error);
    if (misconfigured) throw misconfigured;
    const missing = (error as { code?: string }).code === '42P01';
    throw new HiresyncError(
      missing
        ? "the database has no hiresync tables: run 'hiresync migrate' first"
        : `cannot reach Postgres (${reason(error)}): check DATABASE_URL`,
      { cause: error },
    );
  }
  // The connection's own error says why (a refused connection, a wrong
  // password), where the ping's says only that the connection is closed.
  let lastError: Error | undefined;
  const onError = (error: Error) => {
    lastError = error;
  };
  redis.on('error', onError);
  try {
    await within(redis.ping(), timeoutMs, 'Redis');
  } catch (error) {
    throw new HiresyncError(
      `cannot reach Redis (${redisFailureReason(lastError ?? error)}): check REDIS_URL`,
      { cause: error },
    );
  } finally {
    redis.off('error', onError);
  }
  await checkRedisDatabase(redis, timeoutMs);
  if (options.prefix !== undefined) {
    await within(
      checkPrefixOwner(db, redis, options.prefix, options.claimPrefix === true, identity),
      timeoutMs,
      'Redis',
    );
  }
}

function describeIdentity(identity: DatabaseIdentity): string {
  return identity.system === null
    ? `database "${identity.database}"`
    : `database "${identity.database}" of Postgres system ${identity.system}`;
}

/** The key holding the identity of the database a Redis prefix belongs to. */
export function prefixOwnerKey(prefix: string): string {
  return `${prefix}:owner`;
}

/**
 * A Redis prefix (its checkpoints, run locks, queue and schedules) belongs to
 * one database: two deployments with different databases on one prefix would
 * take each other's live runs for orphans and clear their checkpoints. The
 * first command that claims the prefix records its database's identity in
 * `<prefix>:owner` (SET NX); a command on another database is refused, naming
 * HIRESYNC_REDIS_PREFIX and both databases.
 */
export async function checkPrefixOwner(
  db: Kysely<Database>,
  redis: RedisConnection,
  prefix: string,
  claim: boolean,
  /** The database's identity when read already (see probeSyncRuns); else read now. */
  identity?: DatabaseIdentity,
): Promise<void> {
  const ours = identity ?? (await databaseIdentity(db));
  const key = prefixOwnerKey(prefix);
  const value = JSON.stringify(ours);
  if (claim && (await redis.set(key, value, 'NX')) === 'OK') return;
  const stored = await redis.get(key);
  if (stored === null) return; // unclaimed, and only compared: nothing of another database is there
  let theirs: DatabaseIdentity | undefined;
  try {
    const parsed = JSON.parse(stored) as Partial<DatabaseIdentity>;
    if (typeof parsed.database === 'string') {
      theirs = { database: parsed.database, system: parsed.system ?? null };
    }
  } catch {
    // Not hiresync's value: reported below as another owner.
  }
  const same =
    theirs !== undefined &&
    theirs.database === ours.database &&
    (theirs.system === null || ours.system === null || theirs.system === ours.system);
  if (same) return;
  const owner = theirs === undefined ? 'an unknown owner' : describeIdentity(theirs);
  throw new HiresyncError(
    `HIRESYNC_REDIS_PREFIX "${prefix}" belongs to ${owner}, and this deployment's DATABASE_URL names ${describeIdentity(ours)}: ` +
      "two databases on one prefix would clear each other's checkpoints. Give each deployment its own HIRESYNC_REDIS_PREFIX " +
      `(or its own Redis database); if ${theirs === undefined ? 'that owner' : `database "${theirs.database}"`} no longer uses this prefix, delete the Redis key ${key}`,
  );
}

/**
 * Checks, on a connection of its own that is closed before this returns, that
 * Redis answers and accepts REDIS_URL's database index. Call it before any
 * other connection to `url` is made: ioredis goes on in database 0 when the
 * server refuses the index, and a connection made earlier would write there
 * (BullMQ's queue writes its meta key as soon as it connects).
 */
export async function confirmRedisDatabase(target: RedisTarget, timeoutMs = 5000): Promise<void> {
  const redis = connectRedis(target, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    failFastMs: timeoutMs,
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
      throw redisConnectionError(lastError ?? error, target);
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
export async function checkRedisDatabase(redis: RedisConnection, timeoutMs = 5000): Promise<void> {
  // A Cluster has database 0 only (its URL cannot name another).
  if (redis instanceof Cluster) return;
  const db = databaseIndex(redis);
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
