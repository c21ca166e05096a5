import got, { type Got } from 'got';

/** A response as the client uses it: status, headers and the body as text. */
export interface HttpResponse {
  status: number;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: string;
}

/** Options of {@link createHttp}. */
export interface HttpOptions {
  /** Timeout of one request, connect to last byte. */
  timeoutMs: number;
}

/**
 * The one got instance every request goes through. Policy is set on purpose:
 * got's own retries are off (the client's loop retries 429, 5xx and network
 * errors with the rules of the API spec), redirects are not followed (an
 * Authorization header must never follow one to another origin), and HTTP
 * error statuses are returned, not thrown, so the client decides each one.
 */
export function createHttp(options: HttpOptions): Got {
  return got.extend({
    timeout: { request: options.timeoutMs },
    retry: { limit: 0 },
    followRedirect: false,
    throwHttpErrors: false,
    responseType: 'text',
    headers: {
      'user-agent': 'hiresync/0.1 (+https://github.com/hiresync)',
      accept: 'application/json',
    },
  });
}

/** Full-jitter exponential backoff: a random delay in [0, min(cap, base * 2^attempt)]. */
export function backoffDelay(
  attempt: number,
  baseMs = 500,
  capMs = 30_000,
  random = Math.random,
): number {
  return Math.round(random() * Math.min(capMs, baseMs * 2 ** attempt));
}
