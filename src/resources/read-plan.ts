import type { PlannedWalk, ReadPlan, ResourceSettings } from '../sync/ports.js';
import type { IncrementalFilter, ResourceDeclaration } from './resource.js';

// A resource's read, merged once per run: the declaration (DEFAULT_READ with
// what the resource overrides), then the deployment's settings, then the
// account's, each overriding what it sets.

/** What a list URL is made of besides the declaration: the base URL, the page size, and the settings of paths and filters. */
export interface ListSettings extends ResourceSettings {
  /** `HIRESYNC_BASE_URL` (or an account's), without a trailing slash. */
  readonly baseUrl: string;
  /** `HIRESYNC_PER_PAGE`. */
  readonly perPage: number;
}

/** The deployment's settings of a read (a Config has them). */
export interface DeploymentReadSettings {
  /** Base URL, page size, `HIRESYNC_TRACKING_LINKS_PATH`, `HIRESYNC_RESOURCE_PATHS`, `HIRESYNC_JOBS_STATUS`. */
  readonly api: ListSettings;
  /** `HIRESYNC_UPDATED_FILTER`: when set, every resource's incremental filter. */
  readonly updatedFilter?: string | undefined;
  /** `HIRESYNC_UPDATED_LOOKBACK`: subtracted from `{since}`; also the clock skew that is warned of. */
  readonly updatedLookbackMs?: number | undefined;
  /** `HIRESYNC_EXTRA_WALKS`: per resource it names, the extra walks instead of the declared ones. */
  readonly extraWalks?: Readonly<Record<string, readonly string[]>> | undefined;
  /**
   * `HIRESYNC_RESOURCE_UPDATED_FILTERS`: per resource it names, its
   * incremental filter (over `updatedFilter` and the declared one), or every
   * run of it full.
   */
  readonly resourceUpdatedFilters?:
    | Readonly<Record<string, { readonly template: string } | { readonly everyRunFull: true }>>
    | undefined;
}

/** An account's settings of a read (an Account has them): its base URL. */
export interface AccountReadSettings {
  readonly baseUrl?: string | undefined;
}

/**
 * The first-page URL of a resource's list: its path, its constants
 * (`include_defaults=true`), its filters and `per_page`, never a cursor. An
 * extra walk's `walkQuery` (`active=false`) goes beside `per_page`; a key it
 * shares with the constants or filters replaces theirs.
 */
export function listUrl(
  settings: ListSettings,
  declaration: ResourceDeclaration,
  walkQuery?: string,
): string {
  const url = new URL(`${settings.baseUrl}${declaration.path(settings)}`);
  const query = {
    ...declaration.read.constants,
    ...declaration.query(settings),
    per_page: String(settings.perPage),
    ...Object.fromEntries(new URLSearchParams(walkQuery ?? '')),
  };
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url.href;
}

/** The template (holding `{since}`) of an incremental filter. */
export function templateOf(filter: IncrementalFilter): string {
  if ('template' in filter) return filter.template;
  return filter.operator === undefined
    ? `${filter.parameter}={since}`
    : `${filter.parameter}=${filter.operator}|{since}`;
}

/**
 * What a run of `declaration` reads for an account: the declared read, under
 * the deployment's settings (HIRESYNC_EXTRA_WALKS naming the resource replaces
 * its extra walks; HIRESYNC_UPDATED_FILTER, when set, its incremental filter,
 * and HIRESYNC_RESOURCE_UPDATED_FILTERS naming it both; the path variables,
 * its path), under the account's (its base URL). A list whose every run is
 * full (declared `everyRunFull`) stays so whatever the settings.
 */
export function planRead(
  declaration: ResourceDeclaration,
  deployment: DeploymentReadSettings,
  account: AccountReadSettings = {},
): ReadPlan {
  const { name, read } = declaration;
  const settings: ListSettings = {
    ...deployment.api,
    baseUrl: account.baseUrl ?? deployment.api.baseUrl,
  };
  const extraWalks =
    deployment.extraWalks && Object.hasOwn(deployment.extraWalks, name)
      ? (deployment.extraWalks[name] ?? [])
      : read.extraWalks;
  const walk = (query: string | undefined): PlannedWalk => ({
    query,
    firstUrl: listUrl(settings, declaration, query),
  });
  const filters = declaration.query(settings);
  const own = deployment.resourceUpdatedFilters;
  const set = own && Object.hasOwn(own, name) ? own[name] : undefined;
  const everyRunFull = read.everyRunFull || (set !== undefined && 'everyRunFull' in set);
  const template =
    set !== undefined && 'template' in set
      ? set.template
      : (deployment.updatedFilter ?? (read.incremental && templateOf(read.incremental)));
  return {
    resource: name,
    walks: [walk(undefined), ...extraWalks.map(walk)],
    filter: Object.keys(filters).length === 0 ? undefined : new URLSearchParams(filters).toString(),
    updated:
      template === undefined
        ? undefined
        : { template, lookbackMs: deployment.updatedLookbackMs ?? 0 },
    maxClockSkewMs: deployment.updatedLookbackMs,
    ...(everyRunFull ? { everyRunFull: true } : {}),
  };
}
