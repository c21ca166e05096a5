import { describe, expect, it } from 'vitest';
import { isNotPermitted, scopeOfPath, scopeOfRun } from '../../../src/sync/not-permitted.js';

describe('a list not permitted', () => {
  it("is named by the scope of its path's last segment", () => {
    expect(scopeOfPath('/v3/job_posts')).toBe('harvest:job_posts:list');
    expect(scopeOfPath('/v3/tracking_links?cursor=abc')).toBe('harvest:tracking_links:list');
  });

  it('is a failed run whose error is a 403 of a list, and nothing else', () => {
    expect(isNotPermitted({ outcome: 'failed', error: '403 from /v3/jobs: Forbidden' })).toBe(true);
    expect(isNotPermitted({ outcome: 'succeeded', error: null })).toBe(false);
    expect(isNotPermitted({ outcome: 'failed', error: '422 from /v3/jobs: bad' })).toBe(false);
    expect(isNotPermitted({ outcome: 'failed', error: 'token request was refused (403)' })).toBe(
      false,
    );
    expect(isNotPermitted(undefined)).toBe(false);
  });

  it("asks for the scope the run's error names, else the resource's own", () => {
    expect(
      scopeOfRun('links', '403 from /v3/tracking_links: …scope harvest:tracking_links:list'),
    ).toBe('harvest:tracking_links:list');
    expect(scopeOfRun('jobs', '403 from /v3/jobs: Forbidden')).toBe('harvest:jobs:list');
  });
});
