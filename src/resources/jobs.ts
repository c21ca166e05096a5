import { defineJsonResource } from './json-resource.js';

/** Jobs: stored as sent in jobs.data; `HIRESYNC_JOBS_STATUS` filters the list. */
export const jobs = defineJsonResource({
  name: 'jobs',
  description: 'jobs, stored as sent (the spec shows only the status filter)',
  read: { params: { status: 'HIRESYNC_JOBS_STATUS' } },
});
