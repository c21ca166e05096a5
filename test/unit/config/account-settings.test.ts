import { describe, expect, it } from 'vitest';
import {
  describeAccountSettings,
  effectiveSettings,
  parseAccountSettings,
} from '../../../src/config/account-settings.js';
import { RESOURCE_NAMES } from '../../../src/resources/index.js';

const DEPLOYMENT = {
  resources: ['jobs', 'job_posts'],
  incrementalEveryMs: 15 * 60_000,
  fullCron: '0 3 * * *',
};

describe('per-account settings', () => {
  it('reads each option as its variable is read, and default as the deployment value', () => {
    expect(
      parseAccountSettings(
        { resources: ' jobs, applications ,jobs', incrementalEvery: '5m', fullCron: '0 4 * * 0' },
        RESOURCE_NAMES,
      ),
    ).toEqual({
      change: {
        resources: ['jobs', 'applications'],
        incrementalEveryMs: 300_000,
        fullCron: '0 4 * * 0',
      },
      problems: [],
    });
    expect(
      parseAccountSettings(
        { resources: 'default', incrementalEvery: 'default', fullCron: ' default ' },
        RESOURCE_NAMES,
      ).change,
    ).toEqual({ resources: null, incrementalEveryMs: null, fullCron: null });
    // Options not given change nothing.
    expect(parseAccountSettings({}, RESOURCE_NAMES)).toEqual({ change: {}, problems: [] });
  });

  it('refuses a resource named demographic_labels: every account schema holds the operator labels of that name', () => {
    const { problems } = parseAccountSettings({ resources: 'demographic_labels' }, RESOURCE_NAMES);
    expect(problems).toEqual([
      {
        variable: '--resources',
        message: expect.stringContaining(
          "demographic_labels is the name of one of hiresync's own tables",
        ),
      },
    ]);
  });

  it('refuses what the variables refuse, naming the option and quoting the value', () => {
    const { problems } = parseAccountSettings(
      { resources: 'jobs,sync_runs', incrementalEvery: 'often', fullCron: '0 3 * * * *' },
      RESOURCE_NAMES,
    );
    expect(problems).toEqual([
      {
        variable: '--resources',
        message: expect.stringContaining("sync_runs is the name of one of hiresync's own tables"),
      },
      {
        variable: '--incremental-every',
        message: 'is not a duration like 30s, 15m or 1h: "often"',
      },
      {
        variable: '--full-cron',
        message: 'is not a valid cron pattern (five fields, e.g. "0 3 * * *")',
      },
    ]);
    expect(
      parseAccountSettings({ incrementalEvery: '100ms', resources: ' ' }, RESOURCE_NAMES).problems,
    ).toEqual([
      { variable: '--resources', message: expect.stringContaining('was given an empty value') },
      { variable: '--incremental-every', message: 'must be from 1s to 2147483647ms, got "100ms"' },
    ]);
  });

  it("fills what an account does not override with the deployment's, and shows - for it", () => {
    expect(effectiveSettings(DEPLOYMENT, undefined)).toEqual(DEPLOYMENT);
    expect(effectiveSettings(DEPLOYMENT, { incrementalEveryMs: 60_000 })).toEqual({
      ...DEPLOYMENT,
      incrementalEveryMs: 60_000,
    });
    expect(describeAccountSettings(undefined)).toEqual({
      resources: '-',
      incrementalEvery: '-',
      fullCron: '-',
    });
    expect(
      describeAccountSettings({ resources: ['jobs', 'offers'], incrementalEveryMs: 3_600_000 }),
    ).toEqual({ resources: 'jobs,offers', incrementalEvery: '1h', fullCron: '-' });
  });
});
