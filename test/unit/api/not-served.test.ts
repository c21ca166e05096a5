import { describe, expect, it } from 'vitest';
import { notServedFix, notServedMessage } from '../../../src/api/not-served.js';

describe('the fix a 404 for a whole list names', () => {
  it("names accounts update NAME --resources with the account's list less the list not served", () => {
    const source = { kind: 'account', account: 'acme', resources: ['jobs', 'scorecards'] } as const;
    expect(notServedFix(source, 'scorecards')).toBe(
      "leave it out of account acme's own resources: hiresync accounts update acme --resources jobs (or give its path in HIRESYNC_RESOURCE_PATHS)",
    );
    // The account's only resource: back to the deployment's.
    expect(
      notServedFix({ kind: 'account', account: 'acme', resources: ['scorecards'] }, 'scorecards'),
    ).toContain('hiresync accounts update acme --resources default');
    // A request of no run: the list is not known, the command is.
    expect(notServedFix(source, undefined)).toContain(
      'hiresync accounts update acme --resources …',
    );
  });

  it("names HIRESYNC_RESOURCES and HIRESYNC_RESOURCE_PATHS for the deployment's list", () => {
    const fix = notServedFix({ kind: 'deployment' }, 'job_boards');
    expect(fix).toContain('leave it out of HIRESYNC_RESOURCES');
    expect(fix).toContain('HIRESYNC_RESOURCE_PATHS');
    expect(fix).not.toContain('accounts update');
    expect(notServedMessage('/v3/job_boards', '', fix)).toBe(
      `404 from /v3/job_boards: not found; this API does not serve that list: ${fix}`,
    );
  });
});
