import type { RedisConnection } from '../redis/connect.js';
import { RedisLock } from '../redis/redis-lock.js';
import type { CachedToken, TokenCipher } from './token-cipher.js';

/** Where the token in force is shared, and the lock that makes refreshes single-flight. */
export interface TokenStore {
  read(): Promise<CachedToken | undefined>;
  write(token: CachedToken): Promise<void>;
  /**
   * Takes the refresh lock if it is free, kept alive until released; undefined
   * if another holder has it. `lost` aborts should the lock be lost meanwhile.
   */
  tryLock(): Promise<{ release: () => Promise<void>; lost: AbortSignal } | undefined>;
}

/** Longest a token is kept in Redis, whatever lifetime it states (Redis wants an integer TTL in range). */
export const MAX_TOKEN_TTL_MS = 7 * 86_400_000;

/**
 * The Redis TTL of a token: whole milliseconds from 1 to {@link MAX_TOKEN_TTL_MS};
 * undefined when it has already expired (it is not stored).
 */
export function tokenTtlMs(token: CachedToken, now: number): number | undefined {
  if (token.expiresAt === undefined) return MAX_TOKEN_TTL_MS;
  const ms = Math.ceil(token.expiresAt - now);
  if (!Number.isFinite(ms)) return ms > 0 ? MAX_TOKEN_TTL_MS : undefined;
  if (ms <= 0) return undefined;
  return Math.min(ms, MAX_TOKEN_TTL_MS);
}

/** Options of {@link RedisTokenStore}. */
export interface RedisTokenStoreOptions {
  redis: RedisConnection;
  cipher: TokenCipher;
  /** Key prefix; default `hiresync`. */
  prefix?: string;
  /** How long a lock outlives a crashed holder. Default 30 s. */
  lockTtlMs?: number;
}

/** Shares the token through Redis, encrypted, across every process using the same credentials. */
export class RedisTokenStore implements TokenStore {
  readonly #redis: RedisConnection;
  readonly #cipher: TokenCipher;
  readonly #tokenKey: string;
  readonly #lockKey: string;
  readonly #lockTtlMs: number;

  constructor(options: RedisTokenStoreOptions) {
    const prefix = options.prefix ?? 'hiresync';
    this.#redis = options.redis;
    this.#cipher = options.cipher;
    this.#tokenKey = `${prefix}:token:${options.cipher.namespace}`;
    this.#lockKey = `${prefix}:token-lock:${options.cipher.namespace}`;
    this.#lockTtlMs = options.lockTtlMs ?? 30_000;
  }

  async read(): Promise<CachedToken | undefined> {
    const sealed = await this.#redis.get(this.#tokenKey);
    return sealed === null ? undefined : this.#cipher.decrypt(sealed);
  }

  async write(token: CachedToken): Promise<void> {
    const sealed = this.#cipher.encrypt(token);
    const ttlMs = tokenTtlMs(token, Date.now());
    if (ttlMs !== undefined) await this.#redis.set(this.#tokenKey, sealed, 'PX', ttlMs);
  }

  async tryLock(): Promise<{ release: () => Promise<void>; lost: AbortSignal } | undefined> {
    // The same owner-checked lock as the run lock, renewed while the refresh
    // runs: a token request waiting out a 429 keeps it, and a holder that
    // lost it cannot delete its successor's.
    const lock = new RedisLock(this.#redis, this.#lockKey, this.#lockTtlMs);
    if (!(await lock.acquire())) return undefined;
    const lost = lock.keepAlive();
    return {
      release: async () => {
        await lock.release();
      },
      lost,
    };
  }
}
