import { simulateJobPost } from './records/job-posts.js';
import { simulateJob } from './records/jobs.js';
import { simulateJobBoard, simulateReferrer, simulateSource } from './records/reference-lists.js';
import { simulateTrackingLink } from './records/tracking-links.js';
import type { RecordGenerator } from './simulation-context.js';

/**
 * The record generators of the built-in resources, by resource name (the
 * extra resources carry their own, see extra-resources.ts).
 */
export const SIMULATED_RECORDS: ReadonlyMap<string, RecordGenerator> = new Map([
  ['jobs', simulateJob],
  ['job_posts', simulateJobPost],
  ['tracking_links', simulateTrackingLink],
  ['job_boards', simulateJobBoard],
  ['sources', simulateSource],
  ['referrers', simulateReferrer],
]);

/**
 * The record generator of `resource`: its own, or for a resource the
 * simulator knows nothing of, a record with the id and its times.
 */
export function recordGeneratorOf(resource: string): RecordGenerator {
  return (
    SIMULATED_RECORDS.get(resource) ??
    ((sim, index) => ({ id: sim.idOf(resource, index), ...sim.times(resource, index) }))
  );
}
