import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockLostError, RedisLock } from '../../../src/redis/redis-lock.js';

afterEach(() => {
  vi.useRealTimers();
});

/**
 * Just enough of ioredis for a RedisLock: SET NX PX and the lock scripts,
 * answered at once while `reachable`, never while not (a Redis that went away).
 */
class StubRedis {
  reachable = true;
  /** Fake-clock times at which renewals were sent. */
  readonly renewalsSent: number[] = [];

  defineCommand(name: string): void {
    const answer = (result: number) =>
      this.reachable ? Promise.resolve(result) : new Promise<number>(() => {});
    Object.assign(this, {
      [name]: () => {
        if (name === 'hiresyncRenewLock') this.renewalsSent.push(Date.now());
        return answer(1);
      },
    });
  }

  async set(): Promise<'OK'> {
    return 'OK';
  }
}

describe('a Redis lock whose renewals go unanswered', () => {
  it('is given up exactly when its key expires: a TTL after the last renewal Redis confirmed', async () => {
    vi.useFakeTimers();
    const redis = new StubRedis();
    const ttlMs = 3000;
    const lock = new RedisLock(redis as unknown as Redis, 'test:run-lock:jobs', ttlMs);
    expect(await lock.acquire()).toBe(true);
    const lost = lock.keepAlive();

    // Two renewals (a third of the TTL apart) are confirmed, then Redis goes away.
    await vi.advanceTimersByTimeAsync(2 * (ttlMs / 3));
    expect(redis.renewalsSent).toHaveLength(2);
    const lastConfirmed = redis.renewalsSent.at(-1) as number;
    redis.reachable = false;

    // The key lives until lastConfirmed + TTL at the earliest: the lock is held until then ...
    await vi.advanceTimersByTimeAsync(lastConfirmed + ttlMs - 1 - Date.now());
    expect(lost.aborted).toBe(false);
    // ... and given up at that moment, not a renewal interval later.
    await vi.advanceTimersByTimeAsync(1);
    expect(lost.aborted).toBe(true);
    expect(lost.reason).toBeInstanceOf(LockLostError);
    expect(String(lost.reason)).toContain(`could not be renewed within its ${ttlMs} ms`);
    // One renewal went out unanswered, and none was stacked on it.
    expect(redis.renewalsSent).toHaveLength(3);
  });
});
