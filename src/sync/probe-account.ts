import { coerceError, ForbiddenError } from '../errors.js';
import { scopeOfRun } from './not-permitted.js';
import type { PageSource, ResourceName } from './ports.js';

/**
 * What a test of an account (`accounts test`, `accounts add`) found: whether
 * a token could be minted with its credentials, and what the first page of
 * each of its resources answered. Nothing of it is stored: no run, no
 * checkpoint, no row.
 */
export type TokenProbe = { ok: true } | { ok: false; error: string; cause: unknown };

/** What reading the first page of one resource found. */
export type ResourceProbe =
  | { resource: ResourceName; outcome: 'ok' }
  /** 403: the credential lacks the list's scope (or its user is not a site administrator). */
  | { resource: ResourceName; outcome: 'not_permitted'; scope: string; error: string }
  | { resource: ResourceName; outcome: 'failed'; error: string };

/**
 * Mints a new access token with `renewToken` (the account's own token
 * provider: a partner account's rotated refresh token is stored by it).
 * Resolves to why it could not, never throws.
 */
export async function probeToken(renewToken: () => Promise<void>): Promise<TokenProbe> {
  try {
    await renewToken();
    return { ok: true };
  } catch (error) {
    return { ok: false, error: coerceError(error).message, cause: error };
  }
}

/**
 * Reads the first page of each of `resources` from `source`, one after the
 * other, and says per resource whether it was served, refused with 403 (not
 * permitted, with the scope it needs) or failed (the error). Throws only
 * when `signal` is aborted.
 */
export async function probeResources(
  source: PageSource,
  resources: readonly ResourceName[],
  signal?: AbortSignal,
): Promise<ResourceProbe[]> {
  const probes: ResourceProbe[] = [];
  for (const resource of resources) probes.push(await probeResource(source, resource, signal));
  return probes;
}

async function probeResource(
  source: PageSource,
  resource: ResourceName,
  signal: AbortSignal | undefined,
): Promise<ResourceProbe> {
  try {
    // The first page alone: the walk is left before a `next` link is followed.
    for await (const _page of source.pages(source.firstPageUrl(resource), 1, { signal })) break;
    return { resource, outcome: 'ok' };
  } catch (error) {
    if (signal?.aborted) throw error;
    const message = coerceError(error).message;
    if (error instanceof ForbiddenError) {
      return {
        resource,
        outcome: 'not_permitted',
        scope: scopeOfRun(resource, message),
        error: message,
      };
    }
    return { resource, outcome: 'failed', error: message };
  }
}

/** Whether a test found everything working: a token, and every resource served. */
export function probePassed(token: TokenProbe, resources: readonly ResourceProbe[]): boolean {
  return token.ok && resources.every((r) => r.outcome === 'ok');
}
