import { afterEach, describe, expect, it } from 'vitest';
import { catalogOf } from '../../src/resources/index.js';
import { jobPosts } from '../../src/resources/job-posts.js';
import { jobs } from '../../src/resources/jobs.js';
import { trackingLinks } from '../../src/resources/tracking-links.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

let h: SyncHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a deployment on the default HIRESYNC_RESOURCES, against an API of the spec (no reference lists)', () => {
  it('syncs what the API serves, and names the variable that leaves out each list it does not serve', async () => {
    h = await startSyncHarness({
      simulator: { dataset: { resources: catalogOf(jobs, jobPosts, trackingLinks) } },
    });
    expect(h.config.resources).toEqual([
      'jobs',
      'job_posts',
      'tracking_links',
      'job_boards',
      'sources',
      'referrers',
    ]);
    const outcomes = await h.sync([...h.config.resources], 'auto');
    expect(outcomes.filter((o) => o.ok).map((o) => o.resource)).toEqual([
      'jobs',
      'job_posts',
      'tracking_links',
    ]);
    const failed = outcomes.filter((o) => !o.ok);
    expect(failed.map((o) => o.resource)).toEqual(['job_boards', 'sources', 'referrers']);
    for (const o of failed) {
      expect(String(o.error)).toContain(`404 from /v3/${o.resource}`);
      expect(String(o.error)).toContain('HIRESYNC_RESOURCES=jobs,job_posts,tracking_links');
    }
  });
});
