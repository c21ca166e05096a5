import { setTimeout as sleep } from 'node:timers/promises';
import type { Got } from 'got';
import { TransientApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import { backoffDelay, type HttpResponse } from './http.js';
import { parseRetryAfter } from './retry-after.js';

/** Hooks the caller gives to {@link sendWithRetries}: pacing and counting. */
export interface SendHooks {
  /** Called before each attempt; may wait (rate-limit pacing). */
  beforeAttempt?: () => Promise<void>;
  /** Called with each response (any status). */
  onResponse?: (response: HttpResponse) => Promise<void> | void;
  /** Called on a 429 with the wait it asked for; should pause every peer. */
  onRateLimited?: (waitMs: number) => Promise<void>;
  /** Called before each retry of a 5xx or network failure. */
  onRetry?: (reason: string, delayMs: number) => void;
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
  /** Wait after a 429 without a readable Retry-After. */
  defaultRetryAfterMs: number;
  logger: Logger;
  signal?: AbortSignal | undefined;
  hooks?: SendHooks;
}

/** Path of a URL for messages and logs: never the query (a cursor is noise, a token could be worse). */
export function pathOf(url: string): string {
  return new URL(url).pathname;
}

/**
 * Sends one request, repeating it through the faults the API spec allows:
 * a 429 waits its Retry-After however long (no cap: giving up or retrying
 * early only prolongs a 429 storm) and retries the same request; 5xx and
 * network errors retry with jittered exponential backoff up to `maxRetries`.
 * Any other response is returned for the caller to judge.
 */
export async function sendWithRetries(options: SendOptions): Promise<HttpResponse> {
  const { http, logger, hooks = {} } = options;
  const path = pathOf(options.url);
  let failures = 0;
  let rateLimited = 0;
  for (;;) {
    await hooks.beforeAttempt?.();
    let response: HttpResponse;
    try {
      const r = await http(options.url, {
        method: options.method,
        headers: options.headers,
        body: options.body,
        signal: options.signal,
      });
      response = { status: r.statusCode, headers: r.headers, body: r.body as string };
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      const code = (error as { code?: string }).code ?? 'ERROR';
      failures += 1;
      if (failures > options.maxRetries) {
        throw new TransientApiError(
          `${options.method} ${path} failed ${failures} times (${code}); the API is unreachable: check HIRESYNC_BASE_URL and the network`,
          undefined,
          { cause: new TransientApiError(`${code}: ${(error as Error).message}`, undefined) },
        );
      }
      const delay = backoffDelay(failures - 1);
      hooks.onRetry?.(code, delay);
      logger.warn({ path, code, attempt: failures, delayMs: delay }, 'network error, retrying');
      await sleep(delay, undefined, { signal: options.signal });
      continue;
    }
    await hooks.onResponse?.(response);

    if (response.status === 429) {
      rateLimited += 1;
      const waitMs =
        parseRetryAfter(response.headers['retry-after'], Date.now()) ?? options.defaultRetryAfterMs;
      logger.warn({ path, waitMs, times: rateLimited }, '429 rate limited, waiting Retry-After');
      await hooks.onRateLimited?.(waitMs);
      await sleep(waitMs, undefined, { signal: options.signal });
      continue;
    }
    if (response.status >= 500) {
      failures += 1;
      if (failures > options.maxRetries) {
        throw new TransientApiError(
          `${options.method} ${path} answered ${response.status} ${failures} times; the API is failing, the run will be retried later`,
          response.status,
        );
      }
      const delay = backoffDelay(failures - 1);
      hooks.onRetry?.(String(response.status), delay);
      logger.warn(
        { path, status: response.status, attempt: failures, delayMs: delay },
        'server error, retrying',
      );
      await sleep(delay, undefined, { signal: options.signal });
      continue;
    }
    return response;
  }
}
