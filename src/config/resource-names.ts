/**
 * The resources of the configuration: HIRESYNC_RESOURCES, HIRESYNC_RESOURCE_PATHS,
 * and the names a resource stored as sent may take.
 */
import { z } from 'zod';
import type { ResourceName } from '../sync/ports.js';

/**
 * `HIRESYNC_RESOURCES`: a comma-separated list of resource names: the
 * declared ones (`known`) and any other list resource of the API, stored as
 * sent (see {@link resourceNameProblem}). Default: the declared ones.
 */
export function resourceList(known: readonly string[]) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      const names = (text ?? known.join(','))
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
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
      return [...new Set(names)] as ResourceName[];
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
