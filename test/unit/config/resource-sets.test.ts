import { describe, expect, it } from 'vitest';
import { parseResources } from '../../../src/commands/sync.js';
import { parseAccountSettings } from '../../../src/config/account-settings.js';
import { loadConfig, loadMigrateConfig } from '../../../src/config/load-config.js';
import { ANALYTICS_SET } from '../../../src/config/resource-names.js';
import { ConfigError, UsageError } from '../../../src/errors.js';
import { main } from '../../../src/main.js';
import { RESOURCE_NAMES } from '../../../src/resources/index.js';
import { captureIo } from '../../support/capture-io.js';

const ENV = {
  HIRESYNC_BASE_URL: 'https://harvest.example.com',
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  REDIS_URL: 'redis://127.0.0.1:1',
  HIRESYNC_API_KEY: 'key-0123456789',
};
const resourcesOf = (value: string | undefined) =>
  loadConfig(
    { ...ENV, ...(value === undefined ? {} : { HIRESYNC_RESOURCES: value }) },
    RESOURCE_NAMES,
  ).resources;

describe('the named sets of a resource list', () => {
  it('leave the default list what it is: the six built-in resources, which @default names', () => {
    expect(resourcesOf(undefined)).toEqual(RESOURCE_NAMES);
    expect(resourcesOf('@default')).toEqual(RESOURCE_NAMES);
  });

  it('expand in order, combined with names, each name once at its first place', () => {
    expect(resourcesOf('@default,@analytics,scorecards')).toEqual([
      ...RESOURCE_NAMES,
      ...ANALYTICS_SET,
      'scorecards',
    ]);
    expect(resourcesOf('users, @analytics ,jobs,@default')).toEqual([
      'users',
      ...ANALYTICS_SET.filter((n) => n !== 'users'),
      ...RESOURCE_NAMES,
    ]);
    expect(
      loadMigrateConfig({ ...ENV, HIRESYNC_RESOURCES: '@analytics' }, RESOURCE_NAMES).resources,
    ).toEqual(ANALYTICS_SET);
  });

  it('refuse an unknown set, naming the sets and their members', () => {
    let error: unknown;
    try {
      resourcesOf('jobs,@analytic');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const [problem, ...more] = (error as ConfigError).problems;
    expect(more).toEqual([]);
    expect(problem?.variable).toBe('HIRESYNC_RESOURCES');
    expect(problem?.message).toContain('"@analytic" is not a set of resources');
    expect(problem?.message).toContain('@default (jobs, job_posts');
    expect(problem?.message).toContain('@analytics (applications, application_stages');
  });

  it("are read in an account's --resources, an unknown one a problem naming the option", () => {
    expect(parseAccountSettings({ resources: '@analytics,jobs' }, RESOURCE_NAMES)).toEqual({
      change: { resources: [...ANALYTICS_SET, 'jobs'] },
      problems: [],
    });
    const { problems } = parseAccountSettings({ resources: '@all' }, RESOURCE_NAMES);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.variable).toBe('--resources');
    expect(problems[0]?.message).toContain('@default');
  });

  it('are read in sync --resource: each member must be configured, an unknown set is a usage error', () => {
    expect(parseResources(['@default'], RESOURCE_NAMES)).toEqual(RESOURCE_NAMES);
    const configured = [...RESOURCE_NAMES, ...ANALYTICS_SET];
    expect(parseResources(['@analytics,jobs'], configured)).toEqual([...ANALYTICS_SET, 'jobs']);
    expect(() => parseResources(['@analytics'], RESOURCE_NAMES)).toThrow(
      /--resource applications is not a configured resource/,
    );
    expect(() => parseResources(['@x'], RESOURCE_NAMES)).toThrow(UsageError);
  });

  it('make sync exit 2 on an unknown set before connecting, naming the variable and the sets', async () => {
    const io = captureIo();
    expect(await main(['sync'], { ...ENV, HIRESYNC_RESOURCES: '@analytcs' }, io)).toBe(2);
    expect(io.err()).toContain('HIRESYNC_RESOURCES');
    expect(io.err()).toContain('@analytics (');
    expect(io.err()).not.toMatch(/ECONNREFUSED/);
  });
});
