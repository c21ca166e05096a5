import { defineJsonResource } from './json-resource.js';

/** Job posts: stored as sent in job_posts.data. */
export const jobPosts = defineJsonResource({
  name: 'job_posts',
  description: 'job posts, stored as sent',
  simulate: (sim, index) => {
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
  },
});
