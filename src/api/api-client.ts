import type { Got } from 'got';
import type { ApiConfig, AuthConfig } from '../config/types.js';
import {
  ApiError,
  AuthError,
  CrossOriginLinkError,
  CursorRejectedError,
  ForbiddenError,
  RedirectedError,
} from '../errors.js';
import type { Logger } from '../logger.js';
import { excerpt } from '../secret.js';
import { scopeOfPath } from '../sync/not-permitted.js';
import type { RateLimitWait } from '../sync/ports.js';
import type { HttpResponse } from './http.js';
import { notServedFix, notServedMessage, type ResourcesSource } from './not-served.js';
import { readRateLimitHeaders } from './rate-limit-headers.js';
import type { RateLimitPacer } from './rate-limit-pacer.js';
import { pathOf, sendWithRetries } from './send.js';
import type { TokenRequestOutcome } from './token-grants.js';
import type { TokenProvider } from './token-provider.js';
import { baseUrlSetting } from './url-setting.js';

/** Counters the client reports to; all optional. */
export interface ApiClientMetrics {
  onResponse?(status: number): void;
  onRateLimited?(): void;
  onRetry?(reason: string): void;
  onRemaining?(remaining: number): void;
  /** A wait for the rate-limit window before a request of `resource`'s run (undefined outside a run). */
  onPacingWait?(ms: number, resource?: string): void;
  /** Each token request that left (mint, refresh), by how it ended. */
  onTokenRequest?(outcome: TokenRequestOutcome): void;
}

/** Options of {@link ApiClient}. */
export interface ApiClientOptions {
  config: ApiConfig;
  http: Got;
  tokens: TokenProvider;
  pacer: RateLimitPacer;
  logger: Logger;
  metrics?: ApiClientMetrics;
  /**
   * Where the account's resources are set, read when a list answers 404 so
   * that its error names the fix: default the deployment's HIRESYNC_RESOURCES.
   */
  resourcesSource?: (() => Promise<ResourcesSource>) | undefined;
}

/** Renders a 422 body's `errors` (strings, or objects of parameter → message) as one line. */
export function describeApiErrors(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return excerpt(body.trim(), 300);
  }
  if (typeof parsed !== 'object' || parsed === null) return excerpt(String(parsed), 300);
  const { message, errors } = parsed as { message?: unknown; errors?: unknown };
  const parts: string[] = [];
  if (Array.isArray(errors)) {
    for (const entry of errors) {
      if (typeof entry === 'string') parts.push(entry);
      else if (typeof entry === 'object' && entry !== null) {
        for (const [name, text] of Object.entries(entry)) parts.push(`${name}: ${String(text)}`);
      }
    }
  }
  const head = typeof message === 'string' ? message : '';
  // Redacted before it is cut: a secret across the cut must not show half.
  return excerpt([head, parts.join('; ')].filter(Boolean).join(': '), 500);
}

/**
 * GETs /v3 URLs of one API origin with a Bearer token: paced by the shared
 * rate-limit state, 401 answered by one token renewal and one retry, 429, 5xx
 * and network errors retried by {@link sendWithRetries}, and every other
 * failure turned into an error naming the cause and the fix.
 */
export class ApiClient {
  readonly #options: ApiClientOptions;
  readonly origin: string;
  /** Where its base URL is set, as errors name it (HIRESYNC_BASE_URL, or the registered account's). */
  readonly baseUrlSetting: string;

  constructor(options: ApiClientOptions) {
    this.#options = options;
    this.origin = new URL(options.config.baseUrl).origin;
    this.baseUrlSetting = baseUrlSetting(options.config.auth.account);
  }

  /**
   * Obtains a new access token now (for a partner account, a refresh grant,
   * which keeps its refresh token from expiring unused), unless another
   * process has just done so.
   */
  async renewToken(signal?: AbortSignal): Promise<void> {
    await this.#options.tokens.refreshNow(signal);
  }

  /**
   * Makes sure an access token is at hand, never forcing a new one: the
   * token in force (this process's, or the one shared through the store)
   * needs no request; without one, one is obtained, which later requests use.
   * Throws as obtaining it does (e.g. an UnreachableError in its causes).
   */
  async ensureToken(signal?: AbortSignal): Promise<void> {
    await this.#options.tokens.getToken(signal);
  }

  /** Resolves once no token request is under way (see TokenProvider.settled). */
  settled(): Promise<void> {
    return this.#options.tokens.settled();
  }

  /** Refuses any URL outside the configured origin before a byte is sent there. */
  assertSameOrigin(url: string): void {
    const origin = new URL(url).origin;
    if (origin !== this.origin) {
      throw new CrossOriginLinkError(this.origin, origin, this.baseUrlSetting);
    }
  }

  /**
   * GETs `url` exactly as given and returns the successful response. With
   * `cursor` (the URL is a `next` link the API gave, fresh or checkpointed),
   * a 422 means the API no longer takes that cursor: CursorRejectedError. The
   * URL itself is never inspected for a cursor: its form is the API's business.
   */
  async get(
    url: string,
    signal?: AbortSignal,
    options: {
      cursor?: boolean;
      /**
       * Told of each rate-limit wait (pacing, a 429's Retry-After) before it
       * starts; aborting `signal` meanwhile ends the wait at once.
       */
      onRateLimitWait?: ((wait: RateLimitWait) => void) | undefined;
      /** Fields of each request's debug line besides method, path, status, ms and allowance (see SendOptions). */
      logFields?: Record<string, unknown>;
      /** The resource whose run sends the request, for the per-resource wait metric. */
      resource?: string | undefined;
    } = {},
  ): Promise<HttpResponse> {
    this.assertSameOrigin(url);
    const { config, tokens, pacer, logger, metrics } = this.#options;
    const path = pathOf(url);
    let token = await tokens.getToken(signal);
    // When the attempt in hand was let go by the pacer (Redis time) and its number there, for its answer.
    let sentAt = 0;
    let ticketId = 0;
    const response = await sendWithRetries({
      http: this.#options.http,
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${token}` },
      maxRetries: config.maxRetries,
      defaultRetryAfterMs: config.rateLimitWindowMs,
      maxRetryAfterMs: config.maxRetryAfterMs,
      maxResponseBytes: config.maxPageBytes,
      timeoutMs: config.httpTimeoutMs,
      endpointVariable: this.baseUrlSetting,
      logger,
      ...(options.logFields ? { logFields: options.logFields } : {}),
      signal,
      hooks: {
        beforeAttempt: async () => {
          const ticket = await pacer.acquire(signal, (ms) =>
            options.onRateLimitWait?.({ ms, cause: 'rate-limit pacing' }),
          );
          sentAt = ticket.sentAt;
          ticketId = ticket.id;
          const waited = ticket.waitedMs;
          if (waited > 0) {
            metrics?.onPacingWait?.(waited, options.resource);
            logger.debug({ path, waitedMs: waited }, 'paced by rate limit');
          }
          if (ticket.heldMs > 0) {
            logger.debug(
              { path, heldMs: ticket.heldMs },
              "held to learn where the API's second begins",
            );
          }
        },
        onResponse: async (r) => {
          metrics?.onResponse?.(r.status);
          // A 429 may lack the rate headers; its Retry-After is read by onRateLimited.
          if (r.status === 429) return;
          const headers = readRateLimitHeaders(r.headers);
          if (headers.remaining !== undefined) metrics?.onRemaining?.(headers.remaining);
          await pacer.observe(headers, { sentAt, id: ticketId }, r.status);
        },
        // Never on its way: not taken off the next allowance read from an answer
        // (one that may have reached the API stays counted until its timeout).
        // Should Redis refuse, the entry lapses at its timeout instead.
        onNeverSent: () => pacer.release(ticketId).catch(() => {}),
        onRateLimited: async (waitMs, retryAfterMs) => {
          metrics?.onRateLimited?.();
          const learned = await pacer.pause(waitMs, retryAfterMs, ticketId);
          if (learned !== undefined) {
            logger.info({ path, windowMs: learned }, 'rate-limit window learned from a 429');
          }
          options.onRateLimitWait?.({ ms: waitMs, cause: `429 from ${path}` });
        },
        onRetry: (reason) => metrics?.onRetry?.(reason),
        renewToken: async () => {
          logger.info({ path }, '401: renewing the access token');
          token = await tokens.renew(token, signal);
          return { authorization: `Bearer ${token}` };
        },
      },
    });
    const { status } = response;
    if (status >= 200 && status < 300) return response;
    if (status === 401) {
      // sendWithRetries renewed the token once already (renewToken).
      throw new AuthError(
        401,
        path,
        `401 from ${path} even with a freshly obtained token; check the credential's scopes and that it is not revoked${
          config.auth.account === undefined
            ? ''
            : ` (account ${config.auth.account}: 'hiresync accounts update ${config.auth.account}' stores another)`
        }`,
        response.body,
      );
    }
    const detail = describeApiErrors(response.body);
    if (status === 403) {
      throw new ForbiddenError(
        status,
        path,
        `403 from ${path}: ${detail || 'forbidden'}; not permitted: the credential lacks this list's scope ${scopeOfPath(path)} ` +
          `(a partner app's scopes are set by the API vendor's partner support; the customer then authorizes again), ` +
          `or the authorizing user must be a site administrator (then every list answers 403) ${forbiddenFix(config.auth)}`,
        response.body,
      );
    }
    if (status === 422 && options.cursor) {
      throw new CursorRejectedError(
        status,
        path,
        `422 from ${path}: the cursor was rejected: ${detail}`,
        response.body,
      );
    }
    if (status === 422) {
      throw new ApiError(
        status,
        path,
        `422 from ${path}: ${detail}; check HIRESYNC_PER_PAGE (1..500) and the list's filters (HIRESYNC_JOBS_STATUS for jobs, HIRESYNC_UPDATED_FILTER on incremental runs)`,
        response.body,
      );
    }
    if (status >= 300 && status < 400) {
      throw new RedirectedError(
        status,
        path,
        `${status} redirect from ${path} was not followed (the token must not follow redirects); check ${this.baseUrlSetting}`,
        undefined,
      );
    }
    if (status === 404) {
      // An API of the spec's shape serves no reference lists (job_boards,
      // sources, referrers), which the default HIRESYNC_RESOURCES names; an
      // account's own list is changed by accounts update, not that variable.
      const source = (await this.#options.resourcesSource?.()) ?? { kind: 'deployment' };
      throw new ApiError(
        status,
        path,
        notServedMessage(path, detail, notServedFix(source, options.resource)),
        response.body,
      );
    }
    throw new ApiError(
      status,
      path,
      `${status} from ${path}: ${detail || 'unexpected status'}`,
      response.body,
    );
  }
}

/**
 * What a 403 asks of these credentials' owner: for `default`, the environment's
 * variables; for a registered account, the command that changes what it stores.
 */
function forbiddenFix(auth: AuthConfig): string {
  const account = auth.account;
  if (auth.mode === 'partner') {
    return `(have an administrator of the customer authorize again: send them a connect link, hiresync accounts invite ${account}, or run hiresync accounts authorize ${account})`;
  }
  if (account === undefined) {
    return auth.mode === 'client_credentials'
      ? "(set HIRESYNC_SUB to an administrator's user id, or use another credential)"
      : '(use the key of an administrator, or client credentials with HIRESYNC_SUB)';
  }
  return auth.mode === 'client_credentials'
    ? `(account ${account}: set its sub to an administrator's user id with 'hiresync accounts update ${account} --sub N', or use another credential)`
    : `(account ${account}: store an administrator's key with 'hiresync accounts update ${account}' (key on standard input), or register client credentials with a sub)`;
}
