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
  constructor(problems: readonly ConfigProblem[], options?: { cause?: unknown }) {
    super(
      `invalid configuration: ${problems.map((p) => `${p.variable}: ${p.message}`).join('; ')}`,
      options,
    );
    this.problems = problems;
  }
}

/**
 * Runs `load`; a ConfigError's problems are added to `problems` instead of
 * thrown, so that a command reports every problem of its configuration at
 * once. Anything else is thrown.
 */
export function collectProblems<T>(problems: ConfigProblem[], load: () => T): T | undefined {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
    return undefined;
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

/**
 * The token endpoint refused a partner account's refresh token (invalid_grant,
 * or another 400/401 of a refresh): the customer must authorize again.
 */
export class RefreshRefusedError extends AuthError {}

/**
 * A partner account needs re-authorizing (`hiresync accounts authorize NAME`):
 * its refresh token was refused, or lost. Its runs fail without retry; the
 * other accounts go on.
 */
export class ReauthorizationRequiredError extends HiresyncError {
  readonly account: string;
  /** Why, without what to do (its refresh token was refused, …). */
  readonly reason: string;
  constructor(account: string, reason: string) {
    super(
      `account ${account} needs re-authorizing: ${reason}; ask the customer to authorize again: send their administrator a link from 'hiresync accounts invite ${account}', or run 'hiresync accounts authorize ${account}' where their browser can reach this host (its data is kept)`,
    );
    this.account = account;
    this.reason = reason;
  }
}

/**
 * The token endpoint refused a registered client-credentials or API-key
 * account's credential itself (401, or 400 invalid_client): the same secret
 * is refused at every request, so the account is put in state
 * `credentials_refused`.
 */
export class CredentialRefusedError extends AuthError {
  /** Why, as `status` and `accounts list` show it (the status and the endpoint's text). */
  readonly reason: string;
  constructor(status: number, path: string, message: string, body: unknown, reason: string) {
    super(status, path, message, body);
    this.reason = reason;
  }
}

/**
 * What to do about an account in state `credentials_refused`: store the right
 * secret (or key); `accounts enable` when the vendor's side was at fault. An
 * API key's token endpoint is its base URL + /auth/token, on the API itself:
 * a base URL of another region or path is answered 401 just as a wrong key
 * is, so its base URL is named as the other fix.
 */
export function credentialsRefusedAction(account: string, authMode: string | null): string {
  const what = authMode === 'api_key' ? 'key' : 'secret';
  const baseUrl =
    authMode === 'api_key'
      ? `; if the key is right, its base URL may be wrong (its token endpoint is the base URL + /auth/token): 'hiresync accounts update ${account} --base-url URL' enables it too`
      : '';
  return (
    `store the right ${what} with 'hiresync accounts update ${account}' (${what} on standard input), then it is enabled again; ` +
    `'hiresync accounts test ${account}' checks it ('hiresync accounts enable ${account}' if the fault was on the vendor's side and is fixed)${baseUrl}`
  );
}

/**
 * A registered account in state `credentials_refused`: its runs fail at once,
 * without a token request and without retry; the other accounts go on.
 */
export class CredentialsRefusedError extends HiresyncError {
  readonly account: string;
  /** Why, without what to do (the token endpoint's refusal). */
  readonly reason: string;
  constructor(account: string, authMode: string | null, reason: string) {
    super(
      `account ${account}'s credentials were refused: ${reason}; ${credentialsRefusedAction(account, authMode)}`,
    );
    this.account = account;
    this.reason = reason;
  }
}

/** 403: the authorizing user lacks a permission. Never retried. */
export class ForbiddenError extends ApiError {}

/** 422 on a request that carried a cursor: the checkpointed cursor is stale or invalid. */
export class CursorRejectedError extends ApiError {}

/**
 * A `next` link (or any URL) whose origin differs from the base URL's.
 * `setting` names where that base URL is set: HIRESYNC_BASE_URL (the default),
 * or a registered account's own.
 */
export class CrossOriginLinkError extends HiresyncError {
  readonly expectedOrigin: string;
  readonly actualOrigin: string;
  constructor(expectedOrigin: string, actualOrigin: string, setting = 'HIRESYNC_BASE_URL') {
    super(
      `refused a next link to ${actualOrigin}: it is not the configured API origin ${expectedOrigin}; ` +
        `no request was sent there (check ${setting}, or report the API answer to the vendor)`,
    );
    this.expectedOrigin = expectedOrigin;
    this.actualOrigin = actualOrigin;
  }
}

/** The API returned a `next` link this walk has already followed (or the URL just fetched). */
export class PaginationLoopError extends HiresyncError {}

/**
 * A response body that is not what the list endpoint should return (HTML, not
 * JSON, or JSON of another shape). Asking again returns the same body, so it
 * fails at once rather than after the run's retries.
 */
export class UnexpectedBodyError extends HiresyncError {}

/**
 * A response body larger than HIRESYNC_MAX_PAGE_BYTES (counted after
 * decompression): reading was stopped before it could exhaust memory. The same
 * page would be just as large on a retry.
 */
export class ResponseTooLargeError extends HiresyncError {
  readonly path: string;
  readonly limitBytes: number;
  constructor(path: string, limitBytes: number, detail: string) {
    super(
      `response from ${path} ${detail}, more than HIRESYNC_MAX_PAGE_BYTES (${limitBytes} bytes, counted after decompression); ` +
        'reading stopped to protect memory. Lower HIRESYNC_PER_PAGE, or raise HIRESYNC_MAX_PAGE_BYTES together with the heap (--max-old-space-size)',
    );
    this.path = path;
    this.limitBytes = limitBytes;
  }
}

/**
 * The API asked for a wait (Retry-After, or the shared pause it set) longer
 * than HIRESYNC_MAX_RETRY_AFTER: the run's attempt ends instead of sleeping,
 * and resumes from its checkpoint at its next attempt.
 */
export class RetryAfterTooLongError extends HiresyncError {
  readonly waitMs: number;
  readonly limitMs: number;
  constructor(path: string, waitMs: number, limitMs: number) {
    super(
      `${path} asked to wait ${describeWait(waitMs)} before retrying, longer than HIRESYNC_MAX_RETRY_AFTER (${describeWait(limitMs)}); ` +
        'this attempt ends and the run resumes from its checkpoint at its next attempt (raise HIRESYNC_MAX_RETRY_AFTER to wait that long)',
    );
    this.waitMs = waitMs;
    this.limitMs = limitMs;
  }
}

/**
 * A run would wait longer than HIRESYNC_MAX_SLOT_WAIT for its account's rate
 * limit: it gives its worker slot to other accounts' runs instead, and its job
 * resumes from its checkpoint at `resumeAt` (epoch ms), sending the same
 * request again. Not a failure: no attempt is spent.
 */
export class SlotYieldError extends HiresyncError {
  readonly resumeAt: number;
  constructor(what: string, waitMs: number, now = Date.now()) {
    super(`${what}: waiting ${describeWait(waitMs)} for the rate limit, off the worker slot`);
    this.resumeAt = now + waitMs;
  }
}

/** A wait as a person reads it: `90 s`, `2.5 h`, `57.0 years`. */
export function describeWait(ms: number): string {
  const s = ms / 1000;
  if (s < 120) return `${Math.ceil(s)} s`;
  if (s < 7200) return `${(s / 60).toFixed(1)} min`;
  if (s < 172_800) return `${(s / 3600).toFixed(1)} h`;
  if (s < 31_557_600 * 2) return `${(s / 86_400).toFixed(1)} days`;
  return `${(s / 31_557_600).toFixed(1)} years`;
}

/**
 * An endpoint answered with a redirect, which is never followed (the
 * Authorization header must not travel to another address): the configured
 * URL is wrong, and will be wrong on every retry.
 */
export class RedirectedError extends ApiError {}

/** 5xx, network failures or timeouts that outlasted the retry budget of one request. */
export class TransientApiError extends HiresyncError {
  readonly status: number | undefined;
  constructor(message: string, status: number | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
  }
}

/**
 * Every try of one request failed at the network level (refused, reset, no
 * such host; not a timeout): its server could not be reached. Transient like
 * its parent, so every retry policy treats it so; a one-shot command may
 * stop at once instead of waiting out the runs' attempts.
 */
export class UnreachableError extends TransientApiError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, undefined, options);
  }
}

/** Does `error`, or any error in its chain of causes, hold an {@link UnreachableError}? */
export function unreachableIn(error: unknown): UnreachableError | undefined {
  const seen = new Set<unknown>();
  for (let e = error; e instanceof Error && !seen.has(e); e = e.cause) {
    if (e instanceof UnreachableError) return e;
    seen.add(e);
  }
  return undefined;
}

/**
 * The {@link ConfigError} in `error`'s chain of causes (a certificate of
 * DATABASE_URL's server that does not verify, met on connecting): the
 * command exits 2 with it, whatever wrapped it.
 */
export function configErrorIn(error: unknown): ConfigError | undefined {
  const seen = new Set<unknown>();
  for (let e = error; e instanceof Error && !seen.has(e); e = e.cause) {
    if (e instanceof ConfigError) return e;
    seen.add(e);
  }
  return undefined;
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

/** What the deletion guard's hint names: the run's account and the variable that sets its list's path. */
export interface DeletionGuardHint {
  /** The run's account (`default`: the environment's). Default `default`. */
  account?: string | undefined;
  /** The variable that sets the resource's list path; undefined for a fixed path. */
  pathVariable?: string | undefined;
}

/** A full run's sweep would soft-delete more of a resource's live rows than the guard allows. */
export class DeletionGuardError extends HiresyncError {
  readonly resource: string;
  readonly wouldDelete: number;
  readonly live: number;
  constructor(
    resource: string,
    wouldDelete: number,
    live: number,
    maxFraction: number,
    hint: DeletionGuardHint = {},
  ) {
    const percent = (n: number) => `${Math.round(n * 1000) / 10}%`;
    const account = hint.account ?? 'default';
    // A path variable is named only for the resource whose path it sets.
    const settings = hint.pathVariable
      ? `the list's path and body settings (${hint.pathVariable}, HIRESYNC_RECORDS_KEY)`
      : "the list's body setting (HIRESYNC_RECORDS_KEY)";
    super(
      `the full run of ${resource} of account ${account} would soft-delete ${wouldDelete} of ${live} live rows ` +
        `(${percent(wouldDelete / live)}, above HIRESYNC_MAX_DELETE_FRACTION=${maxFraction}); none were marked. ` +
        'If the API really no longer lists them, confirm this run only with ' +
        `'hiresync sync --full --account ${account} --resource ${resource} --allow-mass-delete'; ` +
        `otherwise check the API (a short or empty answer) and ${settings}`,
    );
    this.resource = resource;
    this.wouldDelete = wouldDelete;
    this.live = live;
  }
}
