import type { Redis } from 'ioredis';
import { RetryAfterTooLongError } from '../errors.js';
import { withScripts } from '../redis/scripts.js';
import { sleep } from './sleep.js';

/**
 * The largest allowance recorded. Redis keeps it as a 64-bit integer (HINCRBY),
 * and Lua would turn a larger number into `1e+20`, which HINCRBY refuses; no
 * real window holds more requests than this.
 */
export const MAX_REMAINING = 1_000_000_000;

/** The pacing scripts (src/redis/scripts/pace-*.lua) as ioredis commands. */
interface PacerCommands {
  hiresyncPaceAcquire(state: string, probe: string, reserve: number): Promise<number>;
  hiresyncPaceObserve(
    state: string,
    probe: string,
    remaining: number,
    windowMs: number,
    pauseMs: number,
  ): Promise<number>;
}

const PACER_SCRIPTS = [
  { command: 'hiresyncPaceAcquire', file: 'pace-acquire-2.lua' },
  { command: 'hiresyncPaceObserve', file: 'pace-observe-2.lua' },
] as const;

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
  readonly #redis: Redis & PacerCommands;
  readonly #key: string;
  readonly #windowMs: number;
  readonly #reserve: number;
  readonly #maxWaitMs: number;

  constructor(options: RateLimitPacerOptions) {
    this.#redis = withScripts<PacerCommands>(options.redis, PACER_SCRIPTS);
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
        await this.#redis.hiresyncPaceAcquire(this.#key, `${this.#key}:probe`, this.#reserve),
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
    await this.#redis.hiresyncPaceObserve(
      this.#key,
      `${this.#key}:probe`,
      remaining === undefined ? -1 : Math.min(Math.max(0, Math.floor(remaining)), MAX_REMAINING),
      this.#windowMs,
      0,
    );
  }

  /** Pauses every worker sharing the credentials for `ms` (after a 429). */
  async pause(ms: number): Promise<void> {
    await this.#redis.hiresyncPaceObserve(
      this.#key,
      `${this.#key}:probe`,
      -1,
      this.#windowMs,
      Math.max(1, Math.ceil(ms)),
    );
  }
}
