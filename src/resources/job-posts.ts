import { defineJsonResource } from './json-resource.js';

/** Job posts: stored as sent in job_posts.data. */
export const jobPosts = defineJsonResource({
  name: 'job_posts',
  description: 'job posts, stored as sent',
  // The keys an application's job board is found through (job_post_id →
  // job_board_id), and the post's own; types as the data gave them before.
  columns: {
    job_id: 'bigint',
    job_board_id: 'bigint',
    title: 'text',
    live: 'boolean',
    active: 'boolean',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
});
