// A list the API does not serve (404) names the setting that leaves it out of
// what the account syncs: the account's own --resources, or the deployment's
// HIRESYNC_RESOURCES.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { accounts } = cleanupAfterEach();

describe('a 404 for a list the API does not serve', () => {
  it("names accounts update NAME --resources for a list only the account's own resources name, and HIRESYNC_RESOURCES for the deployment's", async () => {
    const h = await accounts({
      accounts: ['alpha', 'beta'],
      withoutDefault: true,
      records: 5,
      // No resource of the simulator's has these names: both lists answer 404.
      env: { HIRESYNC_RESOURCES: 'jobs,deployment_nowhere', HIRESYNC_PER_PAGE: '50' },
    });
    const update = captureIo();
    const updated = await main(
      ['accounts', 'update', 'alpha', '--resources', 'jobs,alpha_nowhere'],
      h.env,
      update,
    );
    expect(updated, update.err()).toBe(0);
    const outcomes = await h.sync([
      { account: 'alpha', resource: 'alpha_nowhere' },
      { account: 'beta', resource: 'deployment_nowhere' },
    ]);
    const errorOf = (account: string) => {
      const outcome = outcomes.find((o) => o.account === account);
      return outcome?.ok === false ? outcome.error : '';
    };
    expect(errorOf('alpha')).toContain('404 from /v3/alpha_nowhere');
    expect(errorOf('alpha')).toContain(
      "leave it out of account alpha's own resources: hiresync accounts update alpha --resources jobs",
    );
    expect(errorOf('alpha')).not.toContain('HIRESYNC_RESOURCES');
    expect(errorOf('beta')).toContain('404 from /v3/deployment_nowhere');
    expect(errorOf('beta')).toContain('leave it out of HIRESYNC_RESOURCES');
    expect(errorOf('beta')).not.toContain('accounts update');
  }, 60_000);
});
