import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ResourceLock } from '../warehouse/resource-lock.js';

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * One run per resource at a time, across every process: a Redis lock renewed
 * while the run lives, which expires on its own if the holder dies (kill -9),
 * so the next worker can resume the run; and, when given, the resource's
 * Postgres advisory lock, so that processes on different Redis instances (or a
 * Redis that lost its keys) still never overlap on the same tables.
 */
export class RunLock {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #postgres: ResourceLock | undefined;

  constructor(redis: Redis, prefix: string, ttlMs = 15_000, postgres?: ResourceLock) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#ttlMs = ttlMs;
    this.#postgres = postgres;
  }

  /** Takes the lock of `name`; returns its release, or undefined when another holder has it. */
  async acquire(name: string): Promise<(() => Promise<void>) | undefined> {
    const key = `${this.#prefix}:run-lock:${name}`;
    const owner = randomUUID();
    if ((await this.#redis.set(key, owner, 'PX', this.#ttlMs, 'NX')) !== 'OK') return undefined;
    const timer = setInterval(() => {
      this.#redis.eval(RENEW, 1, key, owner, this.#ttlMs).catch(() => {
        // Redis is away; ioredis reconnects and the next renewal tries again.
      });
    }, this.#ttlMs / 3);
    timer.unref();
    const releaseRedis = async () => {
      clearInterval(timer);
      await this.#redis.eval(RELEASE, 1, key, owner);
    };
    let releasePostgres: (() => Promise<void>) | undefined;
    try {
      releasePostgres = await this.#postgres?.tryAcquire(name);
    } catch (error) {
      await releaseRedis();
      throw error;
    }
    if (this.#postgres && !releasePostgres) {
      await releaseRedis();
      return undefined;
    }
    return async () => {
      try {
        await releasePostgres?.();
      } finally {
        await releaseRedis();
      }
    };
  }
}
