import type { Got } from 'got';
import {
  describeWait,
  ResponseTooLargeError,
  RetryAfterTooLongError,
  TransientApiError,
  UnreachableError,
} from '../errors.js';
import type { Logger } from '../logger.js';
import type { HttpResponse } from './http.js';
import { readRateLimitHeaders } from './rate-limit-headers.js';
import { decideRetry, FIRST_TRY } from './retry-decision.js';
import { sleep } from './sleep.js';

/** Hooks the caller gives to {@link sendWithRetries}: pacing and counting. */
export interface SendHooks {
  /** Called before each attempt; may wait (rate-limit pacing). */
  beforeAttempt?: () => Promise<void>;
  /** Called with each response (any status). */
  onResponse?: (response: HttpResponse) => Promise<void> | void;
  /**
   * Called when an attempt failed before its request left this host: the
   * connection refused, the name not resolved, the route missing, or a
   * timeout while connecting. Not when it may have reached the server (a
   * connection reset, a timeout while waiting for the answer, an abort).
   */
  onNeverSent?: () => Promise<void> | void;
  /**
   * Called on a 429 with the wait chosen and the Retry-After it stated
   * (undefined when absent or unreadable); should pause every peer. The wait
   * starts once it resolves, and ends at once if `signal` is aborted.
   */
  onRateLimited?: (waitMs: number, retryAfterMs: number | undefined) => Promise<void>;
  /** Called before each retry of a 5xx or network failure. */
  onRetry?: (reason: string, delayMs: number) => void;
  /**
   * Renews the access token after a 401 and returns the headers that carry
   * the new one; the request is then sent again, once. Without it, a 401 is
   * returned like any other answer.
   */
  renewToken?: () => Promise<Record<string, string>>;
}

/** Options of {@link sendWithRetries}. */
export interface SendOptions {
  http: Got;
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Retries after 5xx or network errors before giving up. */
  maxRetries: number;
  /**
   * Wait after a 429 without a readable Retry-After, and the least wait after
   * a second 429 in a row (doubling with each further one): the rate-limit window.
   */
  defaultRetryAfterMs: number;
  /** Longest wait a 429 may ask for; a longer one throws {@link RetryAfterTooLongError}. */
  maxRetryAfterMs: number;
  /** Largest body read, counted after decompression; a larger one throws {@link ResponseTooLargeError}. */
  maxResponseBytes: number;
  /** The request timeout in force, named in the error when a request times out. */
  timeoutMs?: number;
  /** The variable that configures this endpoint, named when it cannot be reached. Default `HIRESYNC_BASE_URL`. */
  endpointVariable?: string;
  logger: Logger;
  /**
   * Fields of the debug line every request sent gets (`api request`: method,
   * path, status or error code, ms and the X-RateLimit-Remaining it stated),
   * e.g. a list request's resource, run and page. The URL shows by its path
   * only: never its query (a cursor), nor any header.
   */
  logFields?: Record<string, unknown>;
  signal?: AbortSignal | undefined;
  hooks?: SendHooks;
}

/** Path of a URL for messages and logs: never the query (a cursor is noise, a token could be worse). */
export function pathOf(url: string): string {
  return new URL(url).pathname;
}

/**
 * Sends one request and reads its body as a stream, counting the bytes after
 * decompression: a declared `content-length` above `maxResponseBytes` stops it
 * before the body is read, and a body that grows past it is cut off at once,
 * so neither a huge page nor a gzip bomb is ever held in memory.
 */
export async function receive(
  http: Got,
  options: Pick<SendOptions, 'method' | 'url' | 'headers' | 'body' | 'signal' | 'maxResponseBytes'>,
): Promise<HttpResponse> {
  const path = pathOf(options.url);
  const limit = options.maxResponseBytes;
  const stream = http.stream(options.url, {
    method: options.method,
    headers: options.headers,
    body: options.body,
    signal: options.signal,
  });
  // A got stream sends a body-less POST only once its writable side ends.
  if (options.body === undefined && options.method !== 'GET') stream.end();
  let tooLarge: ResponseTooLargeError | undefined;
  stream.once(
    'response',
    (response: { headers: Record<string, string | string[] | undefined> }) => {
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > limit) {
        tooLarge = new ResponseTooLargeError(path, limit, `declares ${declared} bytes`);
        stream.destroy(tooLarge);
      }
    },
  );
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        tooLarge = new ResponseTooLargeError(path, limit, `grew past ${limit} bytes`);
        break;
      }
      chunks.push(chunk);
    }
  } catch (error) {
    throw tooLarge ?? error;
  } finally {
    stream.destroy();
  }
  if (tooLarge) throw tooLarge;
  const response = stream.response;
  if (!response) throw new TransientApiError(`${options.method} ${path}: no response`, undefined);
  const joined = Buffer.concat(chunks, size);
  chunks.length = 0;
  return {
    status: response.statusCode,
    headers: response.headers,
    // TextDecoder drops a byte-order mark, which JSON.parse would refuse.
    body: new TextDecoder().decode(joined),
  };
}

/**
 * The debug line of one request: what was sent (method and path, never the
 * query or a header), what came back (status, or the error's code), how long
 * it took and the allowance the API stated.
 */
function logRequest(
  options: SendOptions,
  path: string,
  sentAt: number,
  response: HttpResponse | undefined,
  error: unknown,
): void {
  const { logger } = options;
  if (!logger.isLevelEnabled('debug')) return;
  const ms = Math.round(performance.now() - sentAt);
  const remaining = response && readRateLimitHeaders(response.headers).remaining;
  logger.debug(
    {
      ...options.logFields,
      method: options.method,
      path,
      ...(response
        ? { status: response.status }
        : {
            code: isTimeout(error)
              ? 'timeout'
              : String((error as { code?: unknown } | undefined)?.code ?? 'ERROR'),
          }),
      ms,
      ...(remaining === undefined ? {} : { remaining }),
    },
    'api request',
  );
}

/** Errors of a connection that never opened: the request did not leave this host. */
const NEVER_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);
/** got's timeout phases before a request is written (lookup, connect, TLS). */
const NEVER_SENT_TIMEOUTS = new Set(['lookup', 'connect', 'secureConnect']);

function neverSent(error: unknown): boolean {
  const e = error as { name?: unknown; code?: unknown; event?: unknown };
  if (e.name === 'TimeoutError') return NEVER_SENT_TIMEOUTS.has(String(e.event));
  return NEVER_SENT_CODES.has(String(e.code));
}

function isTimeout(error: unknown): boolean {
  const e = error as { name?: unknown; code?: unknown };
  return e.name === 'TimeoutError' || e.code === 'ETIMEDOUT';
}

/**
 * Sends one request, repeating it through the faults the API spec allows:
 * - 429 waits its Retry-After (delta-seconds, HTTP-date, or epoch seconds
 *   above 10^9) and retries the same request; from the second 429 in a row it
 *   waits at least the rate-limit window, doubling each time, so an API that
 *   answers `Retry-After: 0` forever is not hammered. A wait longer than
 *   `maxRetryAfterMs` throws {@link RetryAfterTooLongError} at once, without
 *   pausing the peers.
 * - 5xx, network errors and timeouts retry with jittered exponential backoff
 *   up to `maxRetries`, then throw {@link TransientApiError} ({@link UnreachableError}
 *   when every try failed at the network level: no answer, no timeout).
 * - with the `renewToken` hook, a 401 renews the token and is sent again once.
 * The decisions are {@link decideRetry}'s; this loop carries them out.
 * Every wait ends as soon as `signal` is aborted. Any other response is
 * returned for the caller to judge.
 */
export async function sendWithRetries(options: SendOptions): Promise<HttpResponse> {
  const { http, logger, hooks = {} } = options;
  const path = pathOf(options.url);
  const variable = options.endpointVariable ?? 'HIRESYNC_BASE_URL';
  const rules = { ...options, renewTokenOn401: hooks.renewToken !== undefined };
  let headers = options.headers;
  let state = FIRST_TRY;
  // Did any try get an answer, or time out (perhaps connected)? Then the
  // server is not known to be unreachable.
  let reached = false;
  for (;;) {
    await hooks.beforeAttempt?.();
    let response: HttpResponse | undefined;
    let failure: unknown;
    const sentAt = performance.now();
    try {
      response = await receive(http, { ...options, headers });
    } catch (error) {
      logRequest(options, path, sentAt, undefined, error);
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      if (neverSent(error)) await hooks.onNeverSent?.();
      if (error instanceof ResponseTooLargeError) throw error;
      failure = error;
    }
    if (response) {
      logRequest(options, path, sentAt, response, undefined);
      await hooks.onResponse?.(response);
    }
    const timedOut = !response && isTimeout(failure);
    if (response || timedOut) reached = true;
    const code = timedOut
      ? 'timeout'
      : ((failure as { code?: string } | undefined)?.code ?? 'ERROR');
    const tried = decideRetry(response ?? { failed: code }, state, rules, { now: Date.now() });
    state = tried.state;
    const { decision } = tried;
    const { failures, rateLimited } = state;
    switch (decision.action) {
      case 'accept':
        return response as HttpResponse;
      case 'renew-token':
        headers = { ...headers, ...(await hooks.renewToken?.()) };
        continue;
      case 'wait-rate-limit': {
        const { waitMs, retryAfterMs: asked } = decision;
        logger.warn(
          { path, waitMs, retryAfterMs: asked, times: rateLimited },
          '429 rate limited, waiting',
        );
        await hooks.onRateLimited?.(waitMs, asked);
        await sleep(waitMs, options.signal);
        continue;
      }
      case 'retry': {
        const delay = decision.delayMs;
        hooks.onRetry?.(decision.reason, delay);
        if (response) {
          logger.warn(
            { path, status: response.status, attempt: failures, delayMs: delay },
            'server error, retrying',
          );
        } else {
          logger.warn(
            { path, code, attempt: failures, delayMs: delay },
            timedOut ? 'request timed out, retrying' : 'network error, retrying',
          );
        }
        await sleep(delay, options.signal);
        continue;
      }
    }
    if (decision.cause === 'retry-after-too-long') {
      throw decision.inARow === undefined
        ? new RetryAfterTooLongError(`429 from ${path}`, decision.waitMs, options.maxRetryAfterMs)
        : new RetryAfterTooLongError(
            `${decision.inARow} 429s in a row from ${path}`,
            decision.waitMs,
            options.maxRetryAfterMs,
          );
    }
    if (response) {
      throw new TransientApiError(
        `${options.method} ${path} answered ${response.status} ${failures} times in a row; the API is failing`,
        response.status,
      );
    }
    // got's own error is the cause (the logger serializes errors by an
    // allow-list, so its request options and headers never reach a log).
    if (timedOut) {
      throw new TransientApiError(
        `${options.method} ${path} timed out ${failures} times: no complete answer within HIRESYNC_HTTP_TIMEOUT` +
          `${options.timeoutMs === undefined ? '' : ` (${describeWait(options.timeoutMs)})`}; raise HIRESYNC_HTTP_TIMEOUT if the API is just slow`,
        undefined,
        { cause: failure },
      );
    }
    const message = `${options.method} ${path} failed ${failures} times (${code}); ${new URL(options.url).origin} is unreachable: check ${variable} and the network`;
    if (reached) throw new TransientApiError(message, undefined, { cause: failure });
    throw new UnreachableError(message, { cause: failure });
  }
}
