import type { RecordGenerator } from '../simulation-context.js';

const STATUSES = ['open', 'closed', 'draft'] as const;

/** A job: a name, a status (`HIRESYNC_JOBS_STATUS` filters on it), a requisition id or null. */
export const simulateJob: RecordGenerator = (sim, index) => {
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
};
