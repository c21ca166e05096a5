/**
 * The error tree of hiresync. Every error a user can meet says what happened
 * and what to do. Messages never contain secrets: they are built here from
 * status codes, paths and the API's own error text, never from request headers.
 */

export class HiresyncError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** One invalid environment variable or command-line argument. */
export interface ConfigProblem {
  variable: string;
  message: string;
}

/** Bad configuration: reported all at once, exit 2, before anything connects. */
export class ConfigError extends HiresyncError {
  readonly problems: readonly ConfigProblem[];
  constructor(problems: readonly ConfigProblem[]) {
    super(
      `invalid configuration: ${problems.map((p) => `${p.variable}: ${p.message}`).join('; ')}`,
    );
    this.problems = problems;
  }
}

/** A command-line usage error (unknown command or flag): exit 2. */
export class UsageError extends HiresyncError {}

/** A non-success HTTP answer from the API that is not retried. */
export class ApiError extends HiresyncError {
  readonly status: number;
  readonly path: string;
  readonly body: unknown;
  constructor(
    status: number,
    path: string,
    message: string,
    body: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.status = status;
    this.path = path;
    this.body = body;
  }
}

/** 401 that a fresh token did not cure, or a token endpoint that refused the credentials. */
export class AuthError extends ApiError {}

/** 403: the authorizing user lacks a permission. Never retried. */
export class ForbiddenError extends ApiError {}

/** 422 on a request that carried a cursor: the checkpointed cursor is stale or invalid. */
export class CursorRejectedError extends ApiError {}

/** 429 from the API, carrying how long it asked us to wait. */
export class RateLimitedError extends HiresyncError {
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number, path: string) {
    super(
      `429 from ${path}: rate limit reached, retrying after ${Math.ceil(retryAfterMs / 1000)} s`,
    );
    this.retryAfterMs = retryAfterMs;
  }
}

/** A `next` link (or any URL) whose origin differs from HIRESYNC_BASE_URL's. */
export class CrossOriginLinkError extends HiresyncError {
  readonly expectedOrigin: string;
  readonly actualOrigin: string;
  constructor(expectedOrigin: string, actualOrigin: string) {
    super(
      `refused a next link to ${actualOrigin}: it is not the configured API origin ${expectedOrigin}; ` +
        'no request was sent there (check HIRESYNC_BASE_URL, or report the API answer to the vendor)',
    );
    this.expectedOrigin = expectedOrigin;
    this.actualOrigin = actualOrigin;
  }
}

/** The API returned a `next` link equal to the URL just fetched. */
export class PaginationLoopError extends HiresyncError {}

/** A response body that is not what the list endpoint should return. */
export class UnexpectedBodyError extends HiresyncError {}

/** 5xx or network failures that outlasted the retry budget. */
export class TransientApiError extends HiresyncError {
  readonly status: number | undefined;
  constructor(message: string, status: number | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
  }
}

/** Turns anything thrown into an Error, so callers can rely on `.message`. */
export function coerceError(value: unknown): Error {
  if (value instanceof Error) return value;
  if (typeof value === 'string') return new HiresyncError(value);
  try {
    return new HiresyncError(`non-error thrown: ${JSON.stringify(value)}`);
  } catch {
    return new HiresyncError(`non-error thrown: ${String(value)}`);
  }
}

/** A run stopped on request (SIGTERM/SIGINT) after checkpointing; it resumes on the next start. */
export class RunInterruptedError extends HiresyncError {}
