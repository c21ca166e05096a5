import { RetryAfterTooLongError } from '../errors.js';
import type { RedisConnection } from '../redis/connect.js';
import { withScripts } from '../redis/scripts.js';
import type { RateLimitHeaders } from './rate-limit-headers.js';
import { sleep } from './sleep.js';

/** The pacing scripts (src/redis/scripts/pace-*.lua) as ioredis commands. */
interface PacerCommands {
  hiresyncPaceAcquire(
    state: string,
    probe: string,
    inFlight: string,
    reserve: number,
    firstAsk: number,
    inFlightMs: number,
  ): Promise<[number, number, number, number]>;
  hiresyncPaceObserve(
    state: string,
    probe: string,
    inFlight: string,
    remaining: number,
    limit: number,
    resetInMs: number,
    resetAtMs: number,
    guessMs: number,
    sentAt: number,
    dateMs: number,
    id: number,
  ): Promise<number>;
  hiresyncPacePause(
    state: string,
    probe: string,
    inFlight: string,
    pauseMs: number,
    retryAfterMs: number,
    windowMs: number,
    longestMs: number,
    id: number,
  ): Promise<number>;
}

const PACER_SCRIPTS = [
  { command: 'hiresyncPaceAcquire', file: 'pace-acquire-3.lua' },
  { command: 'hiresyncPaceObserve', file: 'pace-observe-3.lua' },
  { command: 'hiresyncPacePause', file: 'pace-pause-3.lua' },
] as const;

/** Options of {@link RateLimitPacer}. */
export interface RateLimitPacerOptions {
  redis: RedisConnection;
  /** Credential namespace: every process with the same credentials shares one state. */
  namespace: string;
  /**
   * First guess of the API's rate-limit window (HIRESYNC_RATE_LIMIT_WINDOW), used
   * until a response states the window's end or the length is learned.
   */
  windowMs: number;
  /** Requests of each window to leave unused. */
  reserve: number;
  /**
   * Longest shared pause waited (HIRESYNC_MAX_RETRY_AFTER); a longer one,
   * however it got into Redis, throws {@link RetryAfterTooLongError}. Default: no limit.
   */
  maxWaitMs?: number;
  /**
   * The longest a request let go may wait for its answer (HIRESYNC_HTTP_TIMEOUT,
   * and a little): a request of a process that vanished stops counting as in
   * flight then. Default 60 s.
   */
  inFlightMs?: number;
  prefix?: string;
}

/** A reservation: how long it waited, and when (Redis time) the request goes. */
export interface PacerTicket {
  /** Time waited for the rate limit (pauses it asked for). */
  waitedMs: number;
  /**
   * Time the request was held to learn where the API's second begins
   * (second-edge.ts): under a second, never a pause of the limit's, so never
   * told to `onWait` (nor counted as a rate-limit wait).
   */
  heldMs: number;
  /** Given back to {@link RateLimitPacer.observe} with the answer. */
  sentAt: number;
  /**
   * The request's number among those in flight (0: not tracked), given back
   * with the ticket to {@link RateLimitPacer.observe} or {@link RateLimitPacer.pause}.
   */
  id: number;
}

/** What {@link RateLimitPacer.observe} takes of a ticket (a bare send time: a request not tracked). */
export type SentRequest = number | Pick<PacerTicket, 'sentAt' | 'id'>;

/**
 * Paces requests by the API's rate-limit headers and 429s, with the state in
 * Redis so that every worker sharing the credentials slows down together.
 * A window's end is taken from `X-RateLimit-Reset` when the API sends it
 * (an epoch Reset converted to Redis time with the offset between the API's
 * clock and Redis's, estimated over many responses' `Date`: clock-offset.ts);
 * otherwise the window's length is learned (from a 429's Retry-After, or
 * from the time between two moments the allowance came back) and kept in
 * Redis for every worker, the configured window being only the first guess.
 * When the allowance of a window is spent, requests wait for a known end, or
 * probe one at a time while the end is only guessed; after a 429 everyone
 * waits its Retry-After. While an epoch Reset is read through bounds of the
 * offset still far apart, a request of a window with time to spare may be
 * held (under a second) so that its answer shows where the API's second
 * begins (second-edge.ts). Requests let go and not answered yet are taken
 * off an allowance read from an answer, since they may reach the API after
 * that answer's request and be counted against it (a request let go just
 * before a window's end, arriving after the next one opened), until their
 * own answers show where they were counted. The rules are in
 * src/redis/scripts/pace-*.lua.
 */
export class RateLimitPacer {
  readonly #redis: RedisConnection & PacerCommands;
  readonly #key: string;
  readonly #inFlightKey: string;
  readonly #windowMs: number;
  readonly #reserve: number;
  readonly #maxWaitMs: number;
  readonly #inFlightMs: number;

  constructor(options: RateLimitPacerOptions) {
    this.#redis = withScripts<PacerCommands>(options.redis, PACER_SCRIPTS);
    this.#key = `${options.prefix ?? 'hiresync'}:rate:${options.namespace}`;
    this.#inFlightKey = `${this.#key}:sent`;
    this.#windowMs = options.windowMs;
    this.#reserve = options.reserve;
    this.#maxWaitMs = options.maxWaitMs ?? Number.POSITIVE_INFINITY;
    this.#inFlightMs = Math.max(1, Math.ceil(options.inFlightMs ?? 60_000));
  }

  /** The Redis hash holding the shared state (fields: see pace-observe-3.lua). */
  get key(): string {
    return this.#key;
  }

  /**
   * Waits for the request's turn. Each wait the shared state asks for is told
   * to `onWait` (its length in ms) before it starts, except a hold for the
   * second edge (no pause of the limit's: a run never gives its worker slot up
   * for one); aborting `signal` ends any at once, as the queue does to give a
   * run's worker slot up.
   */
  async acquire(signal?: AbortSignal, onWait?: (ms: number) => void): Promise<PacerTicket> {
    let waitedMs = 0;
    let heldMs = 0;
    for (let ask = 0; ; ask += 1) {
      const [wait, now, held, id] = await this.#redis.hiresyncPaceAcquire(
        this.#key,
        `${this.#key}:probe`,
        this.#inFlightKey,
        this.#reserve,
        ask === 0 ? 1 : 0,
        this.#inFlightMs,
      );
      const waitMs = Number(wait);
      if (waitMs <= 0) return { waitedMs, heldMs, sentAt: Number(now), id: Number(id) };
      if (Number(held) === 1) {
        // A hold for the second edge (under a second) is no pause the limit is about.
        await sleep(waitMs, signal);
        heldMs += waitMs;
        continue;
      }
      if (waitMs > this.#maxWaitMs) {
        throw new RetryAfterTooLongError('the shared rate-limit pause', waitMs, this.#maxWaitMs);
      }
      onWait?.(waitMs);
      await sleep(waitMs, signal);
      waitedMs += waitMs;
    }
  }

  /**
   * A request let go (its ticket's `id`) never left this host (its connection
   * refused, say), or was answered without rate headers: it is not on its way,
   * so no longer taken off the allowances read from answers.
   */
  async release(id: number): Promise<void> {
    if (id > 0) await this.#redis.zrem(this.#inFlightKey, String(id));
  }

  /**
   * Records what an answer (not a 429) said about the rate limit; `sent` is
   * its ticket (a bare send time: a request the pacer did not let go).
   */
  async observe(headers: RateLimitHeaders, sent: SentRequest, status = 200): Promise<void> {
    const { sentAt, id } = typeof sent === 'number' ? { sentAt: sent, id: 0 } : sent;
    // A gateway's 502 or a 401 without rate headers says nothing about the
    // allowance (and must not switch pacing off as "headerless"); the request
    // is answered, though, so no longer on its way.
    if (headers.remaining === undefined && (status < 200 || status >= 300)) {
      await this.release(id);
      return;
    }
    await this.#redis.hiresyncPaceObserve(
      this.#key,
      `${this.#key}:probe`,
      this.#inFlightKey,
      headers.remaining ?? -1,
      headers.limit ?? -1,
      headers.resetInMs ?? -1,
      headers.resetAtMs ?? -1,
      this.#windowMs,
      sentAt,
      headers.dateMs ?? -1,
      id,
    );
  }

  /**
   * Pauses every worker sharing the credentials for `ms` after a 429; its
   * stated Retry-After (undefined when unreadable) teaches the window's length;
   * `id` is the refused request's ticket's. Returns the length learned, or undefined.
   */
  async pause(ms: number, retryAfterMs: number | undefined, id = 0): Promise<number | undefined> {
    const learned = Number(
      await this.#redis.hiresyncPacePause(
        this.#key,
        `${this.#key}:probe`,
        this.#inFlightKey,
        Math.max(1, Math.ceil(ms)),
        retryAfterMs === undefined ? -1 : Math.max(0, Math.ceil(retryAfterMs)),
        this.#windowMs,
        Number.isFinite(this.#maxWaitMs) ? this.#maxWaitMs : 86_400_000,
        id,
      ),
    );
    return learned > 0 ? learned : undefined;
  }
}
