import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/errors.js';
import {
  ANALYTICS_RESOURCES,
  BUILT_IN_RESOURCES,
  declarationOf,
  RESOURCE_NAMES,
} from '../../../src/resources/index.js';
import { planRead } from '../../../src/resources/read-plan.js';

const ENV = {
  HIRESYNC_BASE_URL: 'https://harvest.example.com',
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  REDIS_URL: 'redis://127.0.0.1:1',
  HIRESYNC_API_KEY: 'key-0123456789',
};
const configWith = (filters: string, updatedFilter?: string) =>
  loadConfig(
    {
      ...ENV,
      HIRESYNC_RESOURCE_UPDATED_FILTERS: filters,
      ...(updatedFilter === undefined ? {} : { HIRESYNC_UPDATED_FILTER: updatedFilter }),
    },
    RESOURCE_NAMES,
  );
const eeoc = declarationOf(ANALYTICS_RESOURCES, 'eeoc');
const applications = declarationOf(ANALYTICS_RESOURCES, 'applications');
const jobs = declarationOf(BUILT_IN_RESOURCES, 'jobs');

describe('HIRESYNC_RESOURCE_UPDATED_FILTERS', () => {
  it("gives one resource its incremental filter, over HIRESYNC_UPDATED_FILTER's and the declared one; the others keep theirs", () => {
    const config = configWith('eeoc?submitted_at=gte|{since}', 'updated_at=gt|{since}');
    expect(config.resourceUpdatedFilters).toEqual({
      eeoc: { template: 'submitted_at=gte|{since}' },
    });
    expect(planRead(eeoc, config).updated?.template).toBe('submitted_at=gte|{since}');
    expect(planRead(applications, config).updated?.template).toBe('updated_at=gt|{since}');
    expect(planRead(jobs, config).updated?.template).toBe('updated_at=gt|{since}');
    expect(planRead(applications, configWith('')).updated?.template).toBe('updated_at=gte|{since}');
  });

  it('makes every run of a resource full with NAME?full, and cannot make a list without a date filter incremental', () => {
    const config = configWith('eeoc?full,demographic_questions?updated_at=gte|{since}');
    expect(planRead(eeoc, config).everyRunFull).toBe(true);
    expect(planRead(applications, config).everyRunFull).toBeUndefined();
    const questions = declarationOf(ANALYTICS_RESOURCES, 'demographic_questions');
    expect(planRead(questions, config).everyRunFull).toBe(true);
  });

  it.each([
    ['eeoc', 'give NAME?TEMPLATE'],
    ['eeoc?submitted_at=gte', 'give NAME?TEMPLATE'],
    ['eeoc?cursor={since}', 'no cursor or per_page'],
    ['Eeoc?full', 'is not a resource name'],
    ['eeoc?full,eeoc?updated_at=gte|{since}', 'eeoc is given twice'],
  ])('refuses %s, naming the item', (value, message) => {
    let error: unknown;
    try {
      configWith(value);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems.map((p) => p.variable)).toEqual(['HIRESYNC_RESOURCE_UPDATED_FILTERS']);
    expect(problems[0]?.message).toContain(message);
  });
});
