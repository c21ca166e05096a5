import { applications } from './extra/applications.js';
import { candidates } from './extra/candidates.js';
import { departments } from './extra/departments.js';
import { offers } from './extra/offers.js';
import type { ExtraResource } from './extra-resource.js';

/**
 * The lists the simulator serves besides those hiresync's catalog declares
 * (src/resources): shapes for typed views and for syncing resources a
 * deployment names in HIRESYNC_RESOURCES. Served at `/v3/NAME` unless a
 * dataset's catalog declares the name itself (its declaration then wins).
 */
export const EXTRA_RESOURCES: ReadonlyMap<string, ExtraResource> = new Map(
  [applications, candidates, offers, departments].map((r) => [r.name, r]),
);

/** Names of the extra resources, in the order the simulator lists them. */
export const EXTRA_RESOURCE_NAMES: readonly string[] = [...EXTRA_RESOURCES.keys()];

/** The extra resources named, in the order given; throws on a name that is not one. */
export function extraResourcesNamed(names: readonly string[]): ExtraResource[] {
  return names.map((name) => {
    const resource = EXTRA_RESOURCES.get(name);
    if (!resource)
      throw new Error(
        `the simulator has no extra resource ${JSON.stringify(name)} (it has ${EXTRA_RESOURCE_NAMES.join(', ')})`,
      );
    return resource;
  });
}
