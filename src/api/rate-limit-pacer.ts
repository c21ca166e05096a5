import type { Redis } from 'ioredis';
import { RetryAfterTooLongError } from '../errors.js';
import { sleep } from './sleep.js';

/**
 * The largest allowance recorded. Redis keeps it as a 64-bit integer (HINCRBY),
 * and Lua would turn a larger number into `1e+20`, which HINCRBY refuses; no
 * real window holds more requests than this.
 */
export const MAX_REMAINING = 1_000_000_000;

// Both scripts take the time from Redis, so processes on hosts with skewed
// clocks agree on when a pause ends.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * Reserves one request. Returns 0 when it may go now, else the milliseconds to
 * wait before asking again. A known allowance is decremented per reservation,
 * so concurrent workers cannot overdraw the window between two responses.
 * While the allowance is unknown (a new window, or after a 429) one request at
 * a time goes as a probe, since requests sent blind would not be counted;
 * an API that sends no X-RateLimit-Remaining at all is not probed.
 * KEYS: state hash, probe flag. ARGV: reserve.
 */
const ACQUIRE = `${NOW}
local reserve = tonumber(ARGV[1])
local paused = tonumber(redis.call('HGET', KEYS[1], 'pausedUntil') or '0')
if paused > now then return paused - now end
local rem = redis.call('HGET', KEYS[1], 'remaining')
if rem then
  local resetAt = tonumber(redis.call('HGET', KEYS[1], 'resetAt') or '0')
  if now < resetAt then
    if tonumber(rem) <= reserve then return resetAt - now end
    redis.call('HINCRBY', KEYS[1], 'remaining', -1)
    return 0
  end
  redis.call('HDEL', KEYS[1], 'remaining')
end
if redis.call('HGET', KEYS[1], 'headerless') then return 0 end
if redis.call('SET', KEYS[2], '1', 'PX', 2000, 'NX') then return 0 end
return 10`;

/**
 * Records what a response said. KEYS: state hash, probe flag. ARGV: remaining
 * (-1 when the header was absent), window length in ms, pause in ms (429's
 * Retry-After, else 0), 1 when the response was a 429.
 */
const OBSERVE = `${NOW}
local reported = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local pauseMs = tonumber(ARGV[3])
redis.call('DEL', KEYS[2])
if reported < 0 and pauseMs == 0 then
  redis.call('HSET', KEYS[1], 'headerless', '1')
elseif reported >= 0 then
  redis.call('HDEL', KEYS[1], 'headerless')
end
if pauseMs > 0 then
  local pauseEnd = now + pauseMs
  if pauseEnd > tonumber(redis.call('HGET', KEYS[1], 'pausedUntil') or '0') then
    redis.call('HSET', KEYS[1], 'pausedUntil', pauseEnd)
  end
  redis.call('HDEL', KEYS[1], 'remaining')
elseif reported >= 0 then
  local rem = redis.call('HGET', KEYS[1], 'remaining')
  local resetAt = tonumber(redis.call('HGET', KEYS[1], 'resetAt') or '0')
  if (not rem) or now >= resetAt then
    redis.call('HSET', KEYS[1], 'remaining', reported, 'resetAt', now + windowMs)
  elseif reported < tonumber(rem) then
    redis.call('HSET', KEYS[1], 'remaining', reported)
  end
end
redis.call('PEXPIRE', KEYS[1], math.max(windowMs, pauseMs) * 2 + 60000)
return 0`;

/** Options of {@link RateLimitPacer}. */
export interface RateLimitPacerOptions {
  redis: Redis;
  /** Credential namespace: every process with the same credentials shares one state. */
  namespace: string;
  /** Assumed length of the API's rate-limit window (the spec does not give it). */
  windowMs: number;
  /** Requests of each window to leave unused. */
  reserve: number;
  /**
   * Longest shared pause waited (HIRESYNC_MAX_RETRY_AFTER); a longer one,
   * however it got into Redis, throws {@link RetryAfterTooLongError}. Default: no limit.
   */
  maxWaitMs?: number;
  prefix?: string;
}

/**
 * Paces requests by `X-RateLimit-Remaining` and `Retry-After`, with the state
 * in Redis so that every worker sharing the credentials slows down together.
 * When the allowance of a window is spent, requests wait for the window to
 * pass instead of drawing a 429; after a 429 everyone waits its Retry-After.
 */
export class RateLimitPacer {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #windowMs: number;
  readonly #reserve: number;
  readonly #maxWaitMs: number;

  constructor(options: RateLimitPacerOptions) {
    this.#redis = options.redis;
    this.#key = `${options.prefix ?? 'hiresync'}:rate:${options.namespace}`;
    this.#windowMs = options.windowMs;
    this.#reserve = options.reserve;
    this.#maxWaitMs = options.maxWaitMs ?? Number.POSITIVE_INFINITY;
  }

  /** Waits until one more request may go. Returns the milliseconds waited. */
  async acquire(signal?: AbortSignal): Promise<number> {
    let waited = 0;
    for (;;) {
      const waitMs = Number(
        await this.#redis.eval(ACQUIRE, 2, this.#key, `${this.#key}:probe`, this.#reserve),
      );
      if (waitMs <= 0) return waited;
      if (waitMs > this.#maxWaitMs) {
        throw new RetryAfterTooLongError('the shared rate-limit pause', waitMs, this.#maxWaitMs);
      }
      await sleep(waitMs, signal);
      waited += waitMs;
    }
  }

  /** Records a response's remaining allowance (undefined when the header was absent). */
  async observe(remaining: number | undefined): Promise<void> {
    await this.#redis.eval(
      OBSERVE,
      2,
      this.#key,
      `${this.#key}:probe`,
      remaining === undefined ? -1 : Math.min(Math.max(0, Math.floor(remaining)), MAX_REMAINING),
      this.#windowMs,
      0,
    );
  }

  /** Pauses every worker sharing the credentials for `ms` (after a 429). */
  async pause(ms: number): Promise<void> {
    await this.#redis.eval(
      OBSERVE,
      2,
      this.#key,
      `${this.#key}:probe`,
      -1,
      this.#windowMs,
      Math.max(1, Math.ceil(ms)),
    );
  }
}
