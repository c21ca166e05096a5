/**
 * The vendor's webhook events for changes made to a simulated dataset: each
 * function makes the change (a record removed or touched) and returns the
 * event the vendor would send about it, shaped like its published examples
 * (../shared/v3-as-served.md, "Webhooks"): thin payloads of ids and a few
 * fields.
 */
import type { Dataset } from './dataset.js';
import { applicationsOfCandidate } from './extra/candidates.js';
import type { WebhookEventBody } from './webhook-sender.js';

/** The resources whose deletion the vendor announces, and the action it uses. */
export const DELETE_ACTIONS: Readonly<Record<string, string>> = {
  candidates: 'delete_candidate',
  jobs: 'job_deleted',
  job_posts: 'job_post_deleted',
};

function fieldsOf(record: unknown, keys: readonly string[]): Record<string, unknown> {
  const source = (typeof record === 'object' && record !== null ? record : {}) as Record<
    string,
    unknown
  >;
  return Object.fromEntries(keys.filter((k) => k in source).map((k) => [k, source[k]]));
}

/**
 * Removes candidate `index` and its applications (those the dataset holds)
 * and returns `delete_candidate` listing them in `deleted_application_ids`
 * (none when `merged`: after a merge the vendor moves them to the other
 * candidate, and the list is empty).
 */
export function deleteCandidate(
  dataset: Dataset,
  index: number,
  options: { merged?: boolean } = {},
): WebhookEventBody {
  const record = dataset.record('candidates', index);
  const applications = options.merged
    ? []
    : applicationsOfCandidate(index).filter((i) => dataset.isPresent('applications', i));
  const deleted = applications.map((i) => dataset.remove('applications', i));
  const id = dataset.remove('candidates', index);
  return {
    action: 'delete_candidate',
    payload: {
      person: {
        id,
        ...fieldsOf(record, ['first_name', 'last_name', 'company', 'title', 'created_at']),
        // The vendor's encoder escapes this (and anything not ASCII) as \uXXXX.
        headline: 'Eager to find a new commission — <b>soon</b> ✓',
        ...fieldsOf(record, ['is_private', 'can_email']),
        deleted_application_ids: deleted,
      },
    },
  };
}

/** Removes job `index` and returns `job_deleted`. */
export function deleteJob(dataset: Dataset, index: number): WebhookEventBody {
  const record = dataset.record('jobs', index);
  const id = dataset.remove('jobs', index);
  return {
    action: 'job_deleted',
    payload: {
      job: { id, ...fieldsOf(record, ['name', 'requisition_id', 'status', 'created_at']) },
    },
  };
}

/** Removes job post `index` and returns `job_post_deleted`. */
export function deleteJobPost(dataset: Dataset, index: number): WebhookEventBody {
  const record = dataset.record('job_posts', index);
  const id = dataset.remove('job_posts', index);
  return {
    action: 'job_post_deleted',
    payload: { job_post: { id, ...fieldsOf(record, ['job_id', 'title', 'live', 'created_at']) } },
  };
}

/**
 * Removes record `index` of `resource` and returns the vendor's delete
 * event about it; throws for a resource whose deletions the vendor does not
 * announce ({@link DELETE_ACTIONS}).
 */
export function deleteRecord(dataset: Dataset, resource: string, index: number): WebhookEventBody {
  if (resource === 'candidates') return deleteCandidate(dataset, index);
  if (resource === 'jobs') return deleteJob(dataset, index);
  if (resource === 'job_posts') return deleteJobPost(dataset, index);
  throw new Error(`the vendor sends no delete event for ${resource}`);
}

/** The update action the vendor sends for a resource, and the payload key holding the record (none: flat). */
function updateActionOf(resource: string): { action: string; key: string | undefined } {
  if (resource === 'candidates') return { action: 'update_candidate', key: 'candidate' };
  if (resource === 'job_posts') return { action: 'job_post_updated', key: undefined };
  const singular = resource.replace(/ies$/, 'y').replace(/s$/, '');
  return { action: `${singular}_updated`, key: singular };
}

/**
 * Changes record `index` of `resource` (a new version, updated now) and
 * returns the vendor's update event about it: `job_updated`,
 * `job_post_updated`, `update_candidate`, `application_updated`, …
 */
export function updateRecord(dataset: Dataset, resource: string, index: number): WebhookEventBody {
  dataset.touch(resource, index);
  const record = dataset.record(resource, index);
  const { action, key } = updateActionOf(resource);
  return { action, payload: key === undefined ? record : { [key]: record } };
}
