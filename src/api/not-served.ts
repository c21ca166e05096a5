/**
 * What a 404 for a whole list says: the API does not serve it, and which
 * setting leaves it out of what the account syncs. Pure: the caller says
 * where the account's list of resources comes from.
 */

/**
 * Where the resources an account syncs are set, as a 404 names the fix:
 * its own list (`accounts add|update --resources`), else the deployment's
 * HIRESYNC_RESOURCES.
 */
export type ResourcesSource =
  | { kind: 'deployment' }
  | { kind: 'account'; account: string; resources: readonly string[] };

/**
 * The fix of a list the API does not serve, `resource` (undefined when the
 * request was no run's): for an account's own list, the `accounts update`
 * line that leaves it out; for the deployment's, HIRESYNC_RESOURCES, or
 * HIRESYNC_RESOURCE_PATHS when the list lives at another path.
 */
export function notServedFix(source: ResourcesSource, resource: string | undefined): string {
  if (source.kind === 'account') {
    const rest = source.resources.filter((name) => name !== resource);
    const list =
      resource === undefined || rest.length === source.resources.length ? '…' : rest.join(',');
    return `leave it out of account ${source.account}'s own resources: hiresync accounts update ${source.account} --resources ${list === '' ? 'default' : list} (or give its path in HIRESYNC_RESOURCE_PATHS)`;
  }
  return "leave it out of HIRESYNC_RESOURCES (an API of the spec's shape, without the reference lists: HIRESYNC_RESOURCES=jobs,job_posts,tracking_links), or give its path in HIRESYNC_RESOURCE_PATHS";
}

/** The message of a 404 from `path`: the API's `detail`, then the fix. */
export function notServedMessage(path: string, detail: string, fix: string): string {
  return `404 from ${path}: ${detail || 'not found'}; this API does not serve that list: ${fix}`;
}
