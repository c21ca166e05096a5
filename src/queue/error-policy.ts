import { AccountUnavailableError } from '../accounts/account.js';
import { SecretKeyError } from '../accounts/secret-box.js';
import {
  ApiError,
  ConfigError,
  CredentialsRefusedError,
  CrossOriginLinkError,
  DeletionGuardError,
  PaginationLoopError,
  ReauthorizationRequiredError,
  RedirectedError,
  ResponseTooLargeError,
  RunInterruptedError,
  SlotYieldError,
  UnexpectedBodyError,
} from '../errors.js';

/**
 * What the queue does with a job whose attempt threw:
 * - `resume-later`: the run stopped after a checkpoint (shutdown, run lock
 *   lost); the job goes back to the queue at `at`, no attempt spent;
 * - `yield-slot`: the run gave its worker slot up to wait for its account's
 *   rate limit; the job goes back to the queue until the wait is over
 *   (`at`), no attempt spent;
 * - `skip`: the account runs nothing now; the job completes, skipped;
 * - `fail`: a retry cannot cure it; the run fails at once (UnrecoverableError);
 * - `retry`: the attempt failed; retried with backoff from the checkpoint
 *   while attempts remain.
 */
export type JobBehaviour =
  | { action: 'resume-later'; at: number }
  | { action: 'yield-slot'; at: number; wait: SlotYieldError }
  | { action: 'skip' }
  | { action: 'fail' }
  | { action: 'retry' };

/** How soon an interrupted run's job is offered to the workers again. */
export const RESUME_DELAY_MS = 1000;

/**
 * The one map from errors to queue behaviour. `stopReason` is why the run's
 * signal was aborted, if it was: a run that stopped because it gave its slot
 * up ({@link SlotYieldError}) yields; one stopped by a shutdown or a lost
 * lock resumes a second later.
 */
export function jobBehaviourOf(
  error: unknown,
  stopReason?: unknown,
  now: number = Date.now(),
): JobBehaviour {
  if (error instanceof RunInterruptedError || error instanceof SlotYieldError) {
    const wait =
      error instanceof SlotYieldError
        ? error
        : stopReason instanceof SlotYieldError
          ? stopReason
          : undefined;
    return wait
      ? { action: 'yield-slot', at: wait.resumeAt, wait }
      : { action: 'resume-later', at: now + RESUME_DELAY_MS };
  }
  // Disabled or removed while the run was in flight (or before it started).
  if (error instanceof AccountUnavailableError) return { action: 'skip' };
  return isUnrecoverable(error) ? { action: 'fail' } : { action: 'retry' };
}

/** Errors a retry cannot cure: the run fails at once. */
export function isUnrecoverable(error: unknown): boolean {
  // The deletion guard (src/warehouse/runs/sync-runs.ts) will say the same on every attempt.
  if (error instanceof DeletionGuardError) return true;
  // Sealed credentials no configured HIRESYNC_SECRET_KEY opens: the same on every attempt.
  if (error instanceof SecretKeyError) return true;
  // A partner account whose authorization is gone: only the customer can restore it.
  if (error instanceof ReauthorizationRequiredError) return true;
  // A credential the token endpoint refused: only a new secret (or the operator) restores it.
  if (error instanceof CredentialsRefusedError) return true;
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
