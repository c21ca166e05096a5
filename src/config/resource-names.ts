/**
 * The resources of the configuration: HIRESYNC_RESOURCES, HIRESYNC_RESOURCE_PATHS,
 * and the names a resource stored as sent may take.
 */
import { z } from 'zod';
import { ANALYTICS_SET } from '../sync/analytics-set.js';
import type { ResourceName } from '../sync/ports.js';

export { ANALYTICS_SET };

/** The named sets a resource list accepts: `@default` is `known` (the default list), `@analytics` {@link ANALYTICS_SET}. */
function resourceSets(known: readonly string[]): ReadonlyMap<string, readonly string[]> {
  return new Map([
    ['@default', known],
    ['@analytics', ANALYTICS_SET],
  ]);
}

/**
 * The names of a resource list as typed (`@default,@analytics,scorecards`):
 * each `@set` replaced by its names, in order, each name once (its first
 * place); an unknown set is a problem naming the sets.
 */
export function expandResourceList(
  items: readonly string[],
  known: readonly string[],
): { names: string[]; problems: string[] } {
  const sets = resourceSets(known);
  const names: string[] = [];
  const problems: string[] = [];
  for (const item of items) {
    if (!item.startsWith('@')) {
      names.push(item);
      continue;
    }
    const members = sets.get(item);
    if (members) names.push(...members);
    else
      problems.push(
        `${JSON.stringify(item)} is not a set of resources: the sets are ${[...sets]
          .map(([set, members]) => `${set} (${members.join(', ')})`)
          .join(' and ')}`,
      );
  }
  return { names: [...new Set(names)], problems };
}

/**
 * `HIRESYNC_RESOURCES`: a comma-separated list of resource names and named
 * sets (see {@link expandResourceList}): the declared ones (`known`, the set
 * `@default`), the lists of `@analytics`, and any other list resource of the
 * API, stored as sent (see {@link resourceNameProblem}). Default: the
 * declared ones.
 */
export function resourceList(known: readonly string[]) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      const items = (text ?? known.join(','))
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const { names, problems } = expandResourceList(items, known);
      for (const message of problems) ctx.addIssue({ code: 'custom', message });
      if (problems.length > 0) return z.NEVER;
      if (names.length === 0) {
        ctx.addIssue({
          code: 'custom',
          message: `must list at least one resource (the built-in ones are ${known.join(', ')})`,
        });
        return z.NEVER;
      }
      for (const name of names) {
        const problem = known.includes(name) ? undefined : resourceNameProblem(name);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }
      return names as ResourceName[];
    });
}

/**
 * Relations hiresync keeps in every account schema beside the resources'
 * own: a resource of these names would collide with them.
 */
const OWN_RELATIONS = [
  'job_boards',
  'referrers',
  'sources',
  'sync_runs',
  'rejected_records',
  'typed_view_columns',
  'typed_views',
  'demographic_labels',
  'kysely_migration',
  'kysely_migration_lock',
];

/**
 * Why `name` cannot be a resource hiresync stores as sent (table `NAME_data`,
 * history `NAME_history`, views `NAME` and `NAME_flat`), or undefined.
 */
export function resourceNameProblem(name: string): string | undefined {
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(name)) {
    return `${JSON.stringify(name)} is not a resource name: lower-case letters, digits and _, starting with a letter, at most 40 characters`;
  }
  const rename = `name it otherwise and give its path in HIRESYNC_RESOURCE_PATHS (e.g. api_${name}=/v3/${name})`;
  if (OWN_RELATIONS.includes(name)) {
    return `${name} is the name of one of hiresync's own tables; ${rename}`;
  }
  const suffix = /_(data|history|flat)$/.exec(name)?.[0];
  if (suffix) {
    return `${name} ends in ${suffix}, which hiresync keeps for the tables and views of resources; ${rename}`;
  }
  return undefined;
}

/** `HIRESYNC_RESOURCE_PATHS`: `name=/path,…`, the list paths of resources that are not at `/v3/NAME`. */
export const resourcePaths = z
  .string()
  .optional()
  .transform((text, ctx) => {
    const paths: Record<string, string> = {};
    for (const entry of (text ?? '').split(',').map((s) => s.trim())) {
      if (entry === '') continue;
      const match = /^([^=\s]+)\s*=\s*(\S+)$/.exec(entry);
      const [, name = '', path = ''] = match ?? [];
      if (!match || !path.startsWith('/') || path.includes('?') || path.includes('#')) {
        ctx.addIssue({
          code: 'custom',
          message: `must be name=/path pairs separated by commas (a path starts with / and has no query), got ${JSON.stringify(entry)}`,
        });
        continue;
      }
      paths[name] = path;
    }
    return paths;
  });

/**
 * `HIRESYNC_EXTRA_WALKS`: comma-separated `NAME?QUERY` items (for example
 * `job_posts?active=false,users?show_service_accounts=true`), the walks a run
 * of NAME reads after its default walk, QUERY beside `per_page` on the first
 * request. Read as the queries of each name, in order; default none.
 */
export const extraWalks = z
  .string()
  .optional()
  .transform((text, ctx) => {
    const walks: Record<string, string[]> = {};
    for (const item of (text ?? '').split(',').map((s) => s.trim())) {
      if (item === '') continue;
      const at = item.indexOf('?');
      if (at < 0) {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(item)} is not NAME?QUERY (for example job_posts?active=false)`,
        });
        continue;
      }
      const name = item.slice(0, at);
      const query = item.slice(at + 1);
      if (!/^[a-z][a-z0-9_]{0,39}$/.test(name)) {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(item)}: ${JSON.stringify(name)} is not a resource name (lower-case letters, digits and _, starting with a letter)`,
        });
        continue;
      }
      if (query === '') {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(item)} has an empty query: give the parameters of the walk (for example job_posts?active=false)`,
        });
        continue;
      }
      if (!/^[^?#&=\s]+=[^?#&\s]*(&[^?#&=\s]+=[^?#&\s]*)*$/.test(query)) {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(item)}: the query must be KEY=VALUE pairs joined by & (for example active=false)`,
        });
        continue;
      }
      if (/(^|&)(cursor|per_page)=/i.test(query)) {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(item)}: the query may not set cursor or per_page (hiresync sends those)`,
        });
        continue;
      }
      const queries = walks[name] ?? [];
      if (!queries.includes(query)) queries.push(query);
      walks[name] = queries;
    }
    return walks as Readonly<Record<string, readonly string[]>>;
  });

/** One resource's incremental read as HIRESYNC_RESOURCE_UPDATED_FILTERS sets it. */
export type ResourceUpdatedFilter = { readonly template: string } | { readonly everyRunFull: true };

/** A query template holding `{since}`, as HIRESYNC_UPDATED_FILTER takes one. */
export function isUpdatedTemplate(text: string): boolean {
  return (
    /^[^?#&=\s]+=[^#&\s]*(&[^?#&=\s]+=[^#&\s]*)*$/.test(text) &&
    /=[^&]*\{since\}/.test(text) &&
    !/(^|&)(cursor|per_page)=/i.test(text)
  );
}

/**
 * `HIRESYNC_RESOURCE_UPDATED_FILTERS`: comma-separated `NAME?TEMPLATE` items
 * (`eeoc?submitted_at=gte|{since}`), the incremental filter of NAME instead of
 * HIRESYNC_UPDATED_FILTER's and its declared one, or `NAME?full`: every run of
 * NAME is a full run (a list that refuses every date filter). Default none.
 */
export const resourceUpdatedFilters = z
  .string()
  .optional()
  .transform((text, ctx) => {
    const filters: Record<string, ResourceUpdatedFilter> = {};
    for (const item of (text ?? '').split(',').map((s) => s.trim())) {
      if (item === '') continue;
      const at = item.indexOf('?');
      const name = at < 0 ? item : item.slice(0, at);
      const query = at < 0 ? '' : item.slice(at + 1);
      const problem = !/^[a-z][a-z0-9_]{0,39}$/.test(name)
        ? `${JSON.stringify(name)} is not a resource name (lower-case letters, digits and _, starting with a letter)`
        : query !== 'full' && !isUpdatedTemplate(query)
          ? 'give NAME?TEMPLATE, the template holding {since} (eeoc?submitted_at=gte|{since}; no cursor or per_page), or NAME?full'
          : Object.hasOwn(filters, name)
            ? `${name} is given twice`
            : undefined;
      if (problem) {
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(item)}: ${problem}` });
        continue;
      }
      filters[name] = query === 'full' ? { everyRunFull: true } : { template: query };
    }
    return Object.freeze(filters) as Readonly<Record<string, ResourceUpdatedFilter>>;
  });
