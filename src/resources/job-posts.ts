import { defineJsonResource } from './json-resource.js';

/** Job posts: stored as sent in job_posts.data. */
export const jobPosts = defineJsonResource({
  name: 'job_posts',
  description: 'job posts, stored as sent',
});
