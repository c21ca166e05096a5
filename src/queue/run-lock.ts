import type { Kysely } from 'kysely';
import type { RedisConnection } from '../redis/connect.js';
import { RedisLock } from '../redis/redis-lock.js';
import type { HeldResourceLock, ResourceLock } from '../warehouse/runs/resource-lock.js';
import type { Database } from '../warehouse/tables.js';

/** A run lock this process holds. */
export interface HeldRunLock {
  /**
   * Aborted when either lock is lost: the Redis lock's renewal found it gone
   * or another owner's, or failed for longer than its TTL (a LockLostError);
   * or the Postgres lock's connection failed (a ResourceLockLostError). The
   * run must stop after the page in hand.
   */
  lost: AbortSignal;
  /** Releases both locks; never throws (a Redis lock that cannot be deleted expires on its own). */
  release: () => Promise<void>;
  /** The Postgres lock's connection (see HeldResourceLock.session); undefined without one. */
  session?: Kysely<Database>;
}

/**
 * One run per resource at a time, across every process: a Redis lock renewed
 * while the run lives, which expires on its own if the holder dies (kill -9),
 * so the next worker can resume the run; and, when given, the resource's
 * Postgres advisory lock, so that processes on different Redis instances (or a
 * Redis that lost its keys) still never overlap on the same tables. The
 * resource is busy when either lock is held elsewhere.
 */
export class RunLock {
  readonly #redis: RedisConnection;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #postgres: ResourceLock | undefined;

  constructor(redis: RedisConnection, prefix: string, ttlMs = 15_000, postgres?: ResourceLock) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#ttlMs = ttlMs;
    this.#postgres = postgres;
  }

  /**
   * Whether a live process holds the Redis lock of `name` now: a holder that
   * died stops renewing it, and it expires within its TTL.
   */
  async isHeld(name: string): Promise<boolean> {
    return (await this.#redis.exists(this.#key(name))) === 1;
  }

  /**
   * Which of `names` a live process holds now (as {@link isHeld}), in one
   * round trip: an MGET of their keys, a thousand per command, pipelined.
   */
  async heldAmong(names: readonly string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const pipeline = this.#redis.pipeline();
    for (let at = 0; at < names.length; at += 1000) {
      pipeline.mget(names.slice(at, at + 1000).map((name) => this.#key(name)));
    }
    const replies = (await pipeline.exec()) ?? [];
    const values = replies.flatMap(([error, found]) => {
      if (error) throw error;
      return found as Array<string | null>;
    });
    return new Set(names.filter((_, i) => values[i] != null));
  }

  #key(name: string): string {
    return `${this.#prefix}:run-lock:${name}`;
  }

  /** Takes the lock of `name`; undefined when another holder has it. */
  async acquire(name: string): Promise<HeldRunLock | undefined> {
    const lock = new RedisLock(this.#redis, this.#key(name), this.#ttlMs);
    if (!(await lock.acquire())) return undefined;
    const lost = lock.keepAlive();
    const releaseRedis = async () => {
      await lock.release().catch(() => {
        // Redis is away: the key expires on its own within its TTL.
      });
    };
    let postgres: HeldResourceLock | undefined;
    try {
      postgres = await this.#postgres?.tryAcquire(name);
    } catch (error) {
      await releaseRedis();
      throw error;
    }
    if (this.#postgres && !postgres) {
      await releaseRedis();
      return undefined;
    }
    return {
      ...(postgres ? { session: postgres.session } : {}),
      lost: postgres ? AbortSignal.any([lost, postgres.lost]) : lost,
      // Both at once: neither release may hold the other's resource up.
      release: async () => {
        await Promise.all([postgres?.release(), releaseRedis()]);
      },
    };
  }
}
