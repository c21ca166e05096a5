import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ANALYTICS_SET } from '../../../src/config/resource-names.js';
import {
  ANALYTICS_RESOURCES,
  BUILT_IN_RESOURCES,
  catalogFor,
  declarationOf,
  RESOURCE_NAMES,
} from '../../../src/resources/index.js';
import { planRead } from '../../../src/resources/read-plan.js';
import { scopeOfPath } from '../../../src/sync/not-permitted.js';

const DEPLOYMENT = { api: { baseUrl: 'https://api.test', perPage: 500 } };
const of = (name: string) => declarationOf(ANALYTICS_RESOURCES, name);

/** The lists without a date filter: every run reads them whole. */
const UNDATED = ['demographic_questions', 'demographic_answer_options'];

/** Keys holding free text or what identifies a person: never a typed column. */
const PERSONAL = [
  'answers',
  'location_address',
  'custom_fields',
  'question_custom_fields',
  'free_form_text',
  'primary_email',
  'emails',
  'employee_id',
];

describe('the analytics resources', () => {
  it('are the fifteen lists of the @analytics set, in its order, none of them built in', () => {
    expect([...ANALYTICS_RESOURCES.keys()]).toEqual(ANALYTICS_SET);
    expect(ANALYTICS_SET).toHaveLength(15);
    expect(RESOURCE_NAMES).toEqual([
      'jobs',
      'job_posts',
      'tracking_links',
      'job_boards',
      'sources',
      'referrers',
    ]);
    for (const name of ANALYTICS_SET) expect(BUILT_IN_RESOURCES.has(name)).toBe(false);
  });

  it.each(ANALYTICS_SET)(
    '%s is stored like a list named in HIRESYNC_RESOURCES, at /v3/NAME, its scope harvest:NAME:list',
    (name) => {
      const d = of(name);
      expect(d).toMatchObject({
        name,
        table: `${name}_data`,
        defaultPath: `/v3/${name}`,
        pathVariable: 'HIRESYNC_RESOURCE_PATHS',
        storage: 'json',
        recordColumn: 'data',
        onDemand: true,
        sweeps: true,
        typedView: `${name}_flat`,
        historyTable: `${name}_history`,
      });
      expect(d.description).not.toMatch(/\n/);
      expect(d.path({ resourcePaths: { [name]: `/v3/other_${name}` } })).toBe(`/v3/other_${name}`);
      expect(scopeOfPath(d.path({}))).toBe(`harvest:${name}:list`);
    },
  );

  it.each(ANALYTICS_SET.filter((n) => !UNDATED.includes(n)))(
    '%s: incremental runs ask for updated_at=gte|{since}, and HIRESYNC_UPDATED_FILTER replaces it',
    (name) => {
      expect(planRead(of(name), DEPLOYMENT)).toMatchObject({
        updated: { template: 'updated_at=gte|{since}' },
      });
      expect(planRead(of(name), DEPLOYMENT).everyRunFull).toBeUndefined();
      const env = { ...DEPLOYMENT, updatedFilter: 'submitted_at=gte|{since}' };
      expect(planRead(of(name), env).updated?.template).toBe('submitted_at=gte|{since}');
    },
  );

  it.each(UNDATED)(
    '%s has no date filter: every run of it is full, whatever HIRESYNC_UPDATED_FILTER says',
    (name) => {
      expect(of(name).read.incremental).toBeUndefined();
      expect(planRead(of(name), DEPLOYMENT).everyRunFull).toBe(true);
      const env = { ...DEPLOYMENT, updatedFilter: 'updated_at=gte|{since}' };
      expect(planRead(of(name), env).everyRunFull).toBe(true);
    },
  );

  it('sends include_defaults=true (rejection_reasons) and show_service_accounts=true (users) on the first page, as no filter: their full runs still sweep', () => {
    const reasons = planRead(of('rejection_reasons'), DEPLOYMENT);
    expect(reasons.walks.map((w) => w.firstUrl)).toEqual([
      'https://api.test/v3/rejection_reasons?include_defaults=true&per_page=500',
    ]);
    expect(reasons.filter).toBeUndefined();
    const users = planRead(of('users'), { ...DEPLOYMENT, extraWalks: { users: ['active=false'] } });
    expect(users.walks.map((w) => w.firstUrl)).toEqual([
      'https://api.test/v3/users?show_service_accounts=true&per_page=500',
      'https://api.test/v3/users?show_service_accounts=true&per_page=500&active=false',
    ]);
    expect(users.filter).toBeUndefined();
    for (const name of ANALYTICS_SET.filter((n) => n !== 'users' && n !== 'rejection_reasons')) {
      expect(of(name).read.constants).toEqual({});
    }
  });

  it.each(ANALYTICS_SET)(
    '%s: its typed columns are keys its schema checks, never free text or personal identifiers',
    (name) => {
      const d = of(name);
      const shape = (d.schema as z.ZodObject).shape;
      expect(Object.keys(d.columns).length).toBeGreaterThan(0);
      for (const key of Object.keys(d.columns)) {
        expect(Object.keys(shape)).toContain(key);
        expect(PERSONAL).not.toContain(key);
      }
      expect(d.columns).not.toHaveProperty('id');
    },
  );

  it('are the declarations catalogFor uses for the lists a deployment names; another name is a list stored as sent', () => {
    const catalog = catalogFor(['jobs', 'applications', 'scorecards']);
    expect(catalog.get('applications')).toBe(of('applications'));
    expect(catalog.get('scorecards')).toMatchObject({ table: 'scorecards_data', columns: {} });
    expect(catalog.get('scorecards')?.validate({ id: 1, anything: 'x' })).toBeUndefined();
    expect(catalogFor(RESOURCE_NAMES)).toBe(BUILT_IN_RESOURCES);
  });
});
