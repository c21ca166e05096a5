import { describe, expect, it } from 'vitest';
import { formatProbe } from '../../../src/commands/accounts/account-probe.js';
import { Secret } from '../../../src/secret.js';

describe('what accounts test prints', () => {
  it('one line per resource, the first 403 followed by its explanation only', () => {
    const text = formatProbe('acme', 'partner authorization', {
      token: { ok: true },
      resources: [
        { resource: 'jobs', outcome: 'ok' },
        {
          resource: 'job_posts',
          outcome: 'not_permitted',
          scope: 'harvest:job_posts:list',
          error: '403 from /v3/job_posts: what to do',
        },
        {
          resource: 'sources',
          outcome: 'not_permitted',
          scope: 'harvest:sources:list',
          error: '403 from /v3/sources: what to do',
        },
        { resource: 'referrers', outcome: 'failed', error: '404 from /v3/referrers: why' },
      ],
    });
    expect(text).toBe(
      [
        'account acme (partner authorization): access token minted',
        '  jobs       ok',
        '  job_posts  not permitted (scope harvest:job_posts:list)',
        '             403 from /v3/job_posts: what to do',
        '  sources    not permitted (scope harvest:sources:list)',
        '  referrers  failed: 404 from /v3/referrers: why',
      ].join('\n'),
    );
  });

  it('says why no token was minted, and never shows a secret', () => {
    const secret = new Secret('s3cr3t-value-echoed');
    const text = formatProbe('acme', 'API key', {
      token: { ok: false, error: `refused ${secret.reveal()}`, cause: undefined },
      resources: [],
    });
    expect(text).toBe(
      'account acme (API key): no access token could be minted with its credentials: refused [redacted]',
    );
  });
});
