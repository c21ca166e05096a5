import { defineJsonResource } from './json-resource.js';

/** Jobs: stored as sent in jobs.data; `HIRESYNC_JOBS_STATUS` filters the list. */
export const jobs = defineJsonResource({
  name: 'jobs',
  description: 'jobs, stored as sent (the spec shows only the status filter)',
  read: { params: { status: 'HIRESYNC_JOBS_STATUS' } },
  // What analysts group and join jobs by, in the seed shape and v3's; the
  // types are those the data gave jobs_flat before, so none narrows.
  columns: {
    name: 'text',
    status: 'text',
    requisition_id: 'text',
    department_id: 'bigint',
    confidential: 'boolean',
    is_template: 'boolean',
    opened_at: 'timestamptz',
    closed_at: 'timestamptz',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
});
