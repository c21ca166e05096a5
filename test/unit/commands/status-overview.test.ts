import { describe, expect, it } from 'vitest';
import { formatStatusOverview } from '../../../src/commands/status-overview.js';
import { accountOf, reportOf, resource, run } from '../../support/status-fixture.js';

describe('the overview hiresync status prints for many accounts', () => {
  const report = reportOf(
    Array.from({ length: 300 }, (_, i) => {
      const name = `customer_${String(i).padStart(3, '0')}`;
      const failed = i % 10 === 0;
      return accountOf({ name, authMode: 'client_credentials', state: 'enabled' }, [
        resource(
          name,
          'jobs',
          run({
            id: `${i}`,
            outcome: failed ? 'failed' : 'succeeded',
            error: failed ? '500 from /v3/jobs' : null,
          }),
        ),
        resource(name, 'job_posts', run({ id: `${1000 + i}`, outcome: 'succeeded' })),
      ]);
    }),
  );
  const text = formatStatusOverview(report);

  it('says how many accounts stand where and which resources fail, in a few lines', () => {
    expect(text).toMatch(/^300 accounts: 300 enabled$/m);
    expect(text).toMatch(/^resources they sync: 570 ok, 30 failed$/m);
    expect(text).toMatch(/^failing resources \(accounts\): jobs 30 failed$/m);
  });

  it('names the first 20 accounts that need action and counts the others, and names the stalest', () => {
    expect(text).toMatch(/^accounts that need action: 30 /m);
    expect(text).toMatch(/^customer_000\s+enabled\s+failed: jobs$/m);
    expect(text).toMatch(/^customer_190\s+enabled\s+failed: jobs$/m);
    expect(text).not.toMatch(/^customer_200\s+enabled\s+failed: jobs$/m);
    expect(text).toMatch(/^… and 10 more$/m);
    expect(text).toMatch(/^stalest: the 10 accounts not disabled whose last success is oldest$/m);
  });

  it('stays short whatever the number of accounts, and says how to see every line', () => {
    expect(text.split('\n').length).toBeLessThan(60);
    expect(text).toContain("'hiresync status --account NAME'");
    expect(text).toContain("'hiresync status -v'");
    expect(text).toContain("'hiresync status --summary'");
  });
});
