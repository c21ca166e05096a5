import type { RecordGenerator } from '../simulation-context.js';

/** A job post: of a job (or none), live or not. */
export const simulateJobPost: RecordGenerator = (sim, index) => {
  const h = sim.mix(sim.seed + 1, index);
  const t = sim.times('job_posts', index);
  return {
    id: sim.idOf('job_posts', index),
    job_id: h % 6 === 0 ? null : sim.idOf('jobs', h % Math.max(1, sim.size('jobs'))),
    title: `Post ${index}${t.version ? ` (rev ${t.version})` : ''}`,
    live: h % 2 === 0,
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
};
