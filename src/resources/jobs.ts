import { defineJsonResource } from './json-resource.js';

const STATUSES = ['open', 'closed', 'draft'] as const;

/** Jobs: stored as sent in jobs.data; `HIRESYNC_JOBS_STATUS` filters the list. */
export const jobs = defineJsonResource({
  name: 'jobs',
  description: 'jobs, stored as sent (the spec shows only the status filter)',
  filters: (api) => ({ status: api.jobsStatus }),
  simulate: (sim, index) => {
    const h = sim.mix(sim.seed, index);
    const t = sim.times('jobs', index);
    return {
      id: sim.idOf('jobs', index),
      name: `Job ${index}${t.version ? ` (rev ${t.version})` : ''}`,
      status: STATUSES[h % 3] ?? 'open',
      requisition_id: h % 5 === 0 ? null : `REQ-${h % 100_000}`,
      created_at: t.created_at,
      updated_at: t.updated_at,
    };
  },
});
