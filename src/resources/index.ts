import type { ResourceName } from '../sync/ports.js';
import { ANALYTICS_DECLARATIONS } from './analytics/index.js';
import { jobPosts } from './job-posts.js';
import { jobs } from './jobs.js';
import { defineListResource } from './json-resource.js';
import { jobBoards, referrers, sources } from './reference-lists.js';
import type { ResourceDeclaration } from './resource.js';
import { trackingLinks } from './tracking-links.js';

export type { ResourceDeclaration } from './resource.js';

/** Declarations by name: what a deployment can sync. */
export type ResourceCatalog = ReadonlyMap<ResourceName, ResourceDeclaration>;

/** Builds a catalog from declarations (tests add their own to the built-in ones). */
export function catalogOf(...declarations: ResourceDeclaration[]): ResourceCatalog {
  return new Map(declarations.map((d) => [d.name, d]));
}

/** The resources hiresync knows, in the order `sync` and `status` list them. */
export const BUILT_IN_RESOURCES: ResourceCatalog = catalogOf(
  jobs,
  jobPosts,
  trackingLinks,
  jobBoards,
  sources,
  referrers,
);

/**
 * The lists the analytics views read (the `@analytics` set, in its order):
 * list resources with their paths, schemas, reads and typed columns declared.
 * Not built in: a deployment syncs them when it (or an account) names them.
 */
export const ANALYTICS_RESOURCES: ResourceCatalog = catalogOf(...ANALYTICS_DECLARATIONS);

/**
 * The declaration of a list resource named in HIRESYNC_RESOURCES or an
 * account's `--resources`: an analytics resource's own, else a list stored
 * as sent (defineListResource).
 */
export function listResourceOf(name: ResourceName): ResourceDeclaration {
  return ANALYTICS_RESOURCES.get(name) ?? defineListResource(name);
}

/**
 * The resources a deployment syncs: the declared ones (default the built-in
 * ones), and a list resource ({@link listResourceOf}) for each other name of
 * HIRESYNC_RESOURCES.
 */
export function catalogFor(
  resources: readonly ResourceName[],
  declared: ResourceCatalog = BUILT_IN_RESOURCES,
): ResourceCatalog {
  const extra = resources.filter((name) => !declared.has(name)).map((n) => listResourceOf(n));
  return extra.length === 0 ? declared : catalogOf(...declared.values(), ...extra);
}

/** Names of the built-in resources. */
export const RESOURCE_NAMES: readonly ResourceName[] = [...BUILT_IN_RESOURCES.keys()];

/** The declaration of `name`; throws on a name the catalog lacks (a bug: config validates names). */
export function declarationOf(catalog: ResourceCatalog, name: ResourceName): ResourceDeclaration {
  const declaration = catalog.get(name);
  if (!declaration) throw new Error(`no declaration for resource ${JSON.stringify(name)}`);
  return declaration;
}

/** Checks a record of a built-in resource (tests and the soak compare tables with the simulator). */
export function validateRecord(resource: ResourceName, record: unknown): string | undefined {
  return declarationOf(BUILT_IN_RESOURCES, resource).validate(record);
}
