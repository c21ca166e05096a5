import { randomUUID } from 'node:crypto';
import { HiresyncError } from '../errors.js';
import type { RedisConnection } from './connect.js';
import { withScripts } from './scripts.js';

/** A held lock can no longer be counted on: its key is gone or another owner's, or it could not be renewed in time. */
export class LockLostError extends HiresyncError {}

/** The lock scripts as ioredis commands (see scripts/*.lua for their contracts). */
interface LockCommands {
  hiresyncRenewLock(key: string, owner: string, ttlMs: number): Promise<number>;
  hiresyncReleaseLock(key: string, owner: string): Promise<number>;
}

const LOCK_SCRIPTS = [
  { command: 'hiresyncRenewLock', file: 'renew-lock-1.lua' },
  { command: 'hiresyncReleaseLock', file: 'release-lock-1.lua' },
] as const;

/** The lock scripts defined on `redis` (once per connection). */
function lockCommands(redis: RedisConnection): LockCommands {
  return withScripts<LockCommands>(redis, LOCK_SCRIPTS);
}

/**
 * A Redis lock with an owner: taken with SET NX PX, renewed and released only
 * by the owner that took it (a Lua script compares the owner token first), so
 * a holder whose lock expired can never extend or delete its successor's.
 *
 * One instance is one attempt to hold the lock (one owner token). A holder
 * that works longer than the TTL calls {@link keepAlive}: the lock is renewed
 * every third of its TTL, and the returned signal aborts (with a
 * {@link LockLostError}) when the lock is lost, which the holder must react to.
 */
export class RedisLock {
  readonly key: string;
  readonly ttlMs: number;
  readonly #redis: RedisConnection;
  readonly #owner = randomUUID();
  readonly #lost = new AbortController();
  #renewTimer: NodeJS.Timeout | undefined;
  #expiryTimer: NodeJS.Timeout | undefined;
  #renewing = false;
  #released = false;
  /** When the last confirmed write of the TTL was sent: the key expires TTL after it at the latest. */
  #confirmedAt = 0;

  constructor(redis: RedisConnection, key: string, ttlMs: number) {
    this.#redis = redis;
    this.key = key;
    this.ttlMs = ttlMs;
  }

  /** Aborted, with a {@link LockLostError} as reason, once the lock is lost (only while {@link keepAlive} runs). */
  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  /** Takes the lock if it is free; false when another owner holds it. */
  async acquire(): Promise<boolean> {
    const sentAt = Date.now();
    const ok = (await this.#redis.set(this.key, this.#owner, 'PX', this.ttlMs, 'NX')) === 'OK';
    if (ok) this.#confirmedAt = sentAt;
    return ok;
  }

  /** Extends the lock by its TTL; false when it is no longer this owner's (expired, or taken by another). */
  async renew(): Promise<boolean> {
    const sentAt = Date.now();
    const renewed =
      (await lockCommands(this.#redis).hiresyncRenewLock(this.key, this.#owner, this.ttlMs)) === 1;
    if (renewed) this.#confirmedAt = sentAt;
    return renewed;
  }

  /**
   * Renews the lock every third of its TTL until {@link release}. The lock is
   * lost when a renewal finds it gone or another owner's, or when no renewal
   * succeeded within the TTL (Redis unreachable): by then the key may have
   * expired and another process may hold it.
   */
  keepAlive(): AbortSignal {
    if (this.#renewTimer || this.#released) return this.lost;
    this.#armExpiry();
    this.#renewTimer = setInterval(
      () => void this.#tick(),
      Math.max(1, Math.floor(this.ttlMs / 3)),
    );
    this.#renewTimer.unref();
    return this.lost;
  }

  /** Stops renewing and deletes the lock if it is still this owner's; true when it was. */
  async release(): Promise<boolean> {
    this.#released = true;
    this.#stop();
    return (await lockCommands(this.#redis).hiresyncReleaseLock(this.key, this.#owner)) === 1;
  }

  async #tick(): Promise<void> {
    // A renewal that hangs (Redis unreachable) is not stacked on; the expiry timer decides.
    if (this.#renewing || this.#released || this.#lost.signal.aborted) return;
    this.#renewing = true;
    try {
      if (await this.renew()) {
        this.#armExpiry();
      } else {
        this.#lose(
          new LockLostError(`lock ${this.key} was lost: it expired or another owner holds it`),
        );
      }
    } catch {
      // Redis did not answer; the next tick tries again until the TTL has passed.
    } finally {
      this.#renewing = false;
    }
  }

  #armExpiry(): void {
    clearTimeout(this.#expiryTimer);
    this.#expiryTimer = setTimeout(
      () =>
        this.#lose(
          new LockLostError(
            `lock ${this.key} could not be renewed within its ${this.ttlMs} ms time to live (Redis unreachable?)`,
          ),
        ),
      Math.max(0, this.#confirmedAt + this.ttlMs - Date.now()),
    );
    this.#expiryTimer.unref();
  }

  #lose(error: LockLostError): void {
    if (this.#released || this.#lost.signal.aborted) return;
    this.#stop();
    this.#lost.abort(error);
  }

  #stop(): void {
    clearInterval(this.#renewTimer);
    clearTimeout(this.#expiryTimer);
  }
}
