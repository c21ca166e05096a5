import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_RESOURCES, declarationOf } from '../../../src/resources/index.js';
import { defineListResource } from '../../../src/resources/json-resource.js';
import { recordGeneratorOf } from '../../../src/simulator/simulated-records.js';
import { listResourceTable } from '../../../src/warehouse/layout/list-resource-tables.js';

/** Every module specifier the .ts files of `src/<dir>` import. */
function specifiersIn(dir: string): string[] {
  const folder = new URL(`../../../src/${dir}/`, import.meta.url);
  return readdirSync(folder)
    .filter((name) => name.endsWith('.ts'))
    .flatMap((name) =>
      [...readFileSync(new URL(name, folder), 'utf8').matchAll(/from '([^']+)'/g)].map(
        (m) => m[1] as string,
      ),
    );
}

describe('resource declarations', () => {
  it('import only zod, the sync types and each other: no config, warehouse or simulator', () => {
    const outside = specifiersIn('resources').filter(
      (s) => s !== 'zod' && s !== '../sync/ports.js' && !s.startsWith('./'),
    );
    expect(outside).toEqual([]);
  });

  it('are not imported by the configuration, which gets the known names from its caller', () => {
    const config = readFileSync(
      new URL('../../../src/config/load-config.ts', import.meta.url),
      'utf8',
    );
    expect(config).not.toMatch(/from '\.\/resources\//);
  });

  it('give the default path unless their setting names another', () => {
    const links = declarationOf(BUILT_IN_RESOURCES, 'tracking_links');
    expect(links.path({})).toBe('/v3/tracking_links');
    expect(links.path({ trackingLinksPath: '/v3/links' })).toBe('/v3/links');
    const offers = defineListResource('offers');
    expect(offers.path({ trackingLinksPath: '/v3/links' })).toBe('/v3/offers');
    expect(offers.path({ resourcePaths: { offers: '/v3/job_offers' } })).toBe('/v3/job_offers');
    expect(declarationOf(BUILT_IN_RESOURCES, 'jobs').path({ resourcePaths: { jobs: '/x' } })).toBe(
      '/v3/jobs',
    );
  });

  it("send jobs' status filter only when HIRESYNC_JOBS_STATUS sets one", () => {
    const jobs = declarationOf(BUILT_IN_RESOURCES, 'jobs');
    expect(jobs.query({})).toEqual({});
    expect(jobs.query({ jobsStatus: 'open' })).toEqual({ status: 'open' });
    expect(declarationOf(BUILT_IN_RESOURCES, 'job_posts').query({ jobsStatus: 'open' })).toEqual(
      {},
    );
  });

  it('store a list resource in the table the warehouse makes on demand', () => {
    expect(defineListResource('offers')).toMatchObject({
      table: listResourceTable('offers'),
      historyTable: 'offers_history',
      storage: 'json',
      onDemand: true,
    });
  });

  it('name each built-in resource the simulator has records for; others get an id and times', () => {
    const sim = {
      seed: 1,
      flat: false,
      mix: (a: number, b: number) => a + b,
      idOf: (_: string, index: number) => 100 + index,
      size: () => 10,
      startSize: () => 10,
      times: () => ({ version: 0, created_at: 'c', updated_at: 'u' }),
    };
    for (const name of BUILT_IN_RESOURCES.keys()) {
      expect(Object.keys(recordGeneratorOf(name)(sim, 3)).length).toBeGreaterThan(4);
    }
    expect(recordGeneratorOf('scorecards')(sim, 3)).toEqual({
      id: 103,
      version: 0,
      created_at: 'c',
      updated_at: 'u',
    });
  });
});
