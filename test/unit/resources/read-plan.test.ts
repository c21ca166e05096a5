import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { BUILT_IN_RESOURCES, declarationOf, RESOURCE_NAMES } from '../../../src/resources/index.js';
import { defineJsonResource, defineListResource } from '../../../src/resources/json-resource.js';
import { planRead, templateOf } from '../../../src/resources/read-plan.js';
import { DEFAULT_READ } from '../../../src/resources/resource.js';

/** The deployment's settings with nothing set but the base URL and the page size. */
const DEPLOYMENT = { api: { baseUrl: 'https://api.test', perPage: 500 } };

const jobs = declarationOf(BUILT_IN_RESOURCES, 'jobs');
const jobPosts = declarationOf(BUILT_IN_RESOURCES, 'job_posts');
const trackingLinks = declarationOf(BUILT_IN_RESOURCES, 'tracking_links');

/** A declaration that reads applications as a resource with its own walks and incremental filter would. */
const applications = defineJsonResource({
  name: 'applications',
  description: 'applications, stored as sent',
  read: {
    extraWalks: ['status=rejected'],
    incremental: { parameter: 'last_activity_at', operator: 'gte' },
  },
});

const firstUrls = (plan: ReturnType<typeof planRead>) => plan.walks.map((w) => w.firstUrl);

describe('the read plan: the declared read', () => {
  it('is the default read for a resource that declares none: its default walk only, no filter, incremental runs stop by id', () => {
    expect(jobPosts.read).toEqual(DEFAULT_READ);
    expect(planRead(jobPosts, DEPLOYMENT)).toEqual({
      resource: 'job_posts',
      walks: [{ query: undefined, firstUrl: 'https://api.test/v3/job_posts?per_page=500' }],
      filter: undefined,
      updated: undefined,
      maxClockSkewMs: undefined,
    });
  });

  it("reads a declaration's extra walks after its default walk, each query beside per_page", () => {
    const plan = planRead(applications, DEPLOYMENT);
    expect(plan.walks).toEqual([
      { query: undefined, firstUrl: 'https://api.test/v3/applications?per_page=500' },
      {
        query: 'status=rejected',
        firstUrl: 'https://api.test/v3/applications?per_page=500&status=rejected',
      },
    ]);
  });

  it("sends a declaration's incremental filter, parameter and operator in the pipe-delimited form, with the lookback", () => {
    expect(planRead(applications, { ...DEPLOYMENT, updatedLookbackMs: 300_000 }).updated).toEqual({
      template: 'last_activity_at=gte|{since}',
      lookbackMs: 300_000,
    });
  });

  it('writes each form of incremental filter as a template holding {since}', () => {
    expect(templateOf({ parameter: 'updated_at', operator: 'gte' })).toBe('updated_at=gte|{since}');
    expect(templateOf({ parameter: 'updated_after' })).toBe('updated_after={since}');
    expect(templateOf({ template: 'updated_at=gte|{since}&x=1' })).toBe(
      'updated_at=gte|{since}&x=1',
    );
  });

  it('binds a parameter to its setting by name: sent, and recorded as the filter, only when the setting is set', () => {
    expect(jobs.read.params).toEqual({ status: 'HIRESYNC_JOBS_STATUS' });
    expect(planRead(jobs, DEPLOYMENT)).toMatchObject({
      filter: undefined,
      walks: [{ firstUrl: 'https://api.test/v3/jobs?per_page=500' }],
    });
    const open = planRead(jobs, { api: { ...DEPLOYMENT.api, jobsStatus: 'open' } });
    expect(open.filter).toBe('status=open');
    expect(firstUrls(open)).toEqual(['https://api.test/v3/jobs?status=open&per_page=500']);
  });

  it("lets a walk's query replace a filter of the same key", () => {
    const plan = planRead(jobs, {
      api: { ...DEPLOYMENT.api, jobsStatus: 'open' },
      extraWalks: { jobs: ['status=closed'] },
    });
    expect(firstUrls(plan)).toEqual([
      'https://api.test/v3/jobs?status=open&per_page=500',
      'https://api.test/v3/jobs?status=closed&per_page=500',
    ]);
  });
});

describe('the read plan: deployment settings override the declaration', () => {
  it('HIRESYNC_EXTRA_WALKS naming the resource replaces its declared extra walks; a resource it does not name keeps them', () => {
    const env = { ...DEPLOYMENT, extraWalks: { applications: ['status=hired', 'active=false'] } };
    expect(planRead(applications, env).walks.map((w) => w.query)).toEqual([
      undefined,
      'status=hired',
      'active=false',
    ]);
    const other = { ...DEPLOYMENT, extraWalks: { job_posts: ['active=false'] } };
    expect(planRead(applications, other).walks.map((w) => w.query)).toEqual([
      undefined,
      'status=rejected',
    ]);
    expect(planRead(jobPosts, other).walks.map((w) => w.query)).toEqual([
      undefined,
      'active=false',
    ]);
  });

  it("a resource named like an object's own property gets no extra walk HIRESYNC_EXTRA_WALKS does not give it", () => {
    const plan = planRead(defineListResource('constructor'), { ...DEPLOYMENT, extraWalks: {} });
    expect(plan.walks).toHaveLength(1);
  });

  it("HIRESYNC_UPDATED_FILTER, when set, is every resource's incremental filter, the declared one's too", () => {
    const env = {
      ...DEPLOYMENT,
      updatedFilter: 'updated_at=gte|{since}',
      updatedLookbackMs: 60_000,
    };
    for (const declaration of [jobs, applications]) {
      expect(planRead(declaration, env)).toMatchObject({
        updated: { template: 'updated_at=gte|{since}', lookbackMs: 60_000 },
        maxClockSkewMs: 60_000,
      });
    }
  });

  it('the path variables give the list path: HIRESYNC_TRACKING_LINKS_PATH of tracking links, HIRESYNC_RESOURCE_PATHS of a list resource', () => {
    const api = {
      ...DEPLOYMENT.api,
      trackingLinksPath: '/v3/links',
      resourcePaths: { offers: '/v3/job_offers' },
    };
    expect(firstUrls(planRead(trackingLinks, { api }))).toEqual([
      'https://api.test/v3/links?per_page=500',
    ]);
    expect(firstUrls(planRead(defineListResource('offers'), { api }))).toEqual([
      'https://api.test/v3/job_offers?per_page=500',
    ]);
  });

  it('the variables read by the configuration plan the same read', () => {
    const config = loadConfig(
      {
        HIRESYNC_BASE_URL: 'https://harvest.example.com',
        DATABASE_URL: 'postgres://u@db/hiresync',
        REDIS_URL: 'redis://cache:6379',
        HIRESYNC_API_KEY: 'api-key-value',
        HIRESYNC_PER_PAGE: '100',
        HIRESYNC_JOBS_STATUS: 'open',
        HIRESYNC_EXTRA_WALKS: 'jobs?active=false',
        HIRESYNC_UPDATED_FILTER: 'updated_after={since}',
        HIRESYNC_UPDATED_LOOKBACK: '2m',
      },
      RESOURCE_NAMES,
    );
    expect(planRead(jobs, config)).toEqual({
      resource: 'jobs',
      walks: [
        {
          query: undefined,
          firstUrl: 'https://harvest.example.com/v3/jobs?status=open&per_page=100',
        },
        {
          query: 'active=false',
          firstUrl: 'https://harvest.example.com/v3/jobs?status=open&per_page=100&active=false',
        },
      ],
      filter: 'status=open',
      updated: { template: 'updated_after={since}', lookbackMs: 120_000 },
      maxClockSkewMs: 120_000,
    });
  });
});

describe("the read plan: the account's settings override the deployment's", () => {
  it("reads from the account's base URL, with the deployment's paths, filters and page size", () => {
    const plan = planRead(
      jobs,
      { api: { ...DEPLOYMENT.api, jobsStatus: 'open' }, extraWalks: { jobs: ['active=false'] } },
      { baseUrl: 'https://eu.api.test' },
    );
    expect(firstUrls(plan)).toEqual([
      'https://eu.api.test/v3/jobs?status=open&per_page=500',
      'https://eu.api.test/v3/jobs?status=open&per_page=500&active=false',
    ]);
  });

  it("keeps the deployment's base URL for an account that sets none", () => {
    expect(firstUrls(planRead(jobPosts, DEPLOYMENT, {}))).toEqual([
      'https://api.test/v3/job_posts?per_page=500',
    ]);
  });

  it('takes each part from the highest layer that sets it: account, then deployment, then declaration, then the default read', () => {
    const plan = planRead(
      applications,
      {
        ...DEPLOYMENT,
        extraWalks: { applications: ['status=active'] },
      },
      { baseUrl: 'https://account.api.test' },
    );
    expect(plan).toEqual({
      resource: 'applications',
      walks: [
        { query: undefined, firstUrl: 'https://account.api.test/v3/applications?per_page=500' },
        {
          query: 'status=active',
          firstUrl: 'https://account.api.test/v3/applications?per_page=500&status=active',
        },
      ],
      // The declaration's, as the deployment sets no HIRESYNC_UPDATED_FILTER; no lookback set.
      updated: { template: 'last_activity_at=gte|{since}', lookbackMs: 0 },
      // The default read's: no params.
      filter: undefined,
      maxClockSkewMs: undefined,
    });
  });
});
