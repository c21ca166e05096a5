import { SecretKeyError } from '../accounts/secret-box.js';
import {
  ApiError,
  ConfigError,
  CrossOriginLinkError,
  DeletionGuardError,
  PaginationLoopError,
  ReauthorizationRequiredError,
  RedirectedError,
  ResponseTooLargeError,
  UnexpectedBodyError,
} from '../errors.js';

/** Errors a retry cannot cure: the run fails at once. */
export function isUnrecoverable(error: unknown): boolean {
  // The deletion guard (src/warehouse/sync-runs.ts) will say the same on every attempt.
  if (error instanceof DeletionGuardError) return true;
  // Sealed credentials no configured HIRESYNC_SECRET_KEY opens: the same on every attempt.
  if (error instanceof SecretKeyError) return true;
  // A partner account whose authorization is gone: only the customer can restore it.
  if (error instanceof ReauthorizationRequiredError) return true;
  if (
    error instanceof ConfigError ||
    error instanceof CrossOriginLinkError ||
    error instanceof PaginationLoopError
  ) {
    return true;
  }
  // A body that is not a list, or a redirect: the same URL answers the same
  // way on a retry; the message says what to fix.
  if (error instanceof UnexpectedBodyError || error instanceof RedirectedError) return true;
  // Too large a page fails the run's attempt (the contract): the page may be
  // smaller on a later attempt; the attempts are bounded all the same.
  if (error instanceof ResponseTooLargeError) return false;
  // 401 after a renewal, 403, 422 and other 4xx: the API said no, and will again.
  return (
    error instanceof ApiError &&
    error.status >= 400 &&
    error.status < 500 &&
    // 408 (the server timed the request out) and 429 pass: a retry may succeed.
    error.status !== 408 &&
    error.status !== 429
  );
}
