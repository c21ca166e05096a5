/**
 * A list the credential may not read: the API answered 403. On the live
 * service that is either a scope the partner app was not granted for that
 * list (`harvest:NAME:list`; the account's other lists work) or an
 * authorizing user who is not a site administrator (every list answers 403).
 * One answer cannot tell the two apart; every resource of an account
 * answering 403 points to the second.
 *
 * The run of such a list fails without retry and without sweeping, its
 * error starting with {@link NOT_PERMITTED_PREFIX}'s status text as the API
 * client writes it; scheduled incremental runs of it are skipped until a full
 * run (scheduled or by hand) succeeds.
 */

import { HiresyncError } from '../errors.js';

/** How every error of a list request answered 403 begins (src/api/api-client.ts writes it). */
export const NOT_PERMITTED_PREFIX = '403 from ';

/** The scope a partner app needs to read the list at `path` (`/v3/job_posts` → `harvest:job_posts:list`). */
export function scopeOfPath(path: string): string {
  const name =
    path
      .split('?')[0]
      ?.split('/')
      .filter((p) => p !== '')
      .at(-1) ?? '';
  return `harvest:${name}:list`;
}

/** The scope of resource `name` when its path is the default `/v3/NAME`. */
export function scopeOfResource(name: string): string {
  return `harvest:${name}:list`;
}

/** Whether a run that ended `outcome` with `error` was refused by a 403 (not permitted). */
export function isNotPermitted(
  run: { outcome: string; error: string | null } | undefined,
): boolean {
  return run?.outcome === 'failed' && (run.error ?? '').startsWith(NOT_PERMITTED_PREFIX);
}

/** The scope a not-permitted run's error names, else resource `resource`'s own. */
export function scopeOfRun(resource: string, error: string | null): string {
  return /\bharvest:[a-z0-9_]+:list\b/.exec(error ?? '')?.[0] ?? scopeOfResource(resource);
}

/**
 * A scheduled incremental run that did not start: the resource's last run
 * was refused 403, and only a full run tries again (see runResource's
 * `skipNotPermitted`). Nothing was recorded.
 */
export class NotPermittedSkip extends HiresyncError {
  /** The scope the refused run's error names (see {@link scopeOfRun}). */
  readonly scope: string;
  constructor(scope: string) {
    super(`not permitted (scope ${scope})`);
    this.scope = scope;
  }
}
