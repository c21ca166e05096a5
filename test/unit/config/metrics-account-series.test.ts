import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/errors.js';
import { RESOURCE_NAMES } from '../../../src/resources/index.js';

const BASE = {
  HIRESYNC_BASE_URL: 'https://harvest.example.com',
  DATABASE_URL: 'postgres://u@db/hiresync',
  REDIS_URL: 'redis://cache:6379',
  HIRESYNC_AUTH_URL: 'https://auth.example.com',
  HIRESYNC_CLIENT_ID: 'client-1',
  HIRESYNC_CLIENT_SECRET: 'top-secret-value',
};

const accountSeries = (value?: string) =>
  loadConfig(
    value === undefined ? BASE : { ...BASE, HIRESYNC_METRICS_ACCOUNT_SERIES: value },
    RESOURCE_NAMES,
  ).metricsAccountSeries;

describe('HIRESYNC_METRICS_ACCOUNT_SERIES', () => {
  it('is 100 accounts unless set, and takes auto, all, none or a count', () => {
    expect(accountSeries()).toBe(100);
    expect(accountSeries('auto')).toBe(100);
    expect(accountSeries(' ALL ')).toBe(Number.POSITIVE_INFINITY);
    expect(accountSeries('none')).toBe(0);
    expect(accountSeries('2500')).toBe(2500);
  });

  it('names itself and what it takes in the configuration error of anything else', () => {
    for (const value of ['some', '-1', '1.5']) {
      expect(() => accountSeries(value)).toThrow(ConfigError);
      try {
        accountSeries(value);
      } catch (error) {
        const problems = (error as ConfigError).problems;
        expect(problems.map((p) => p.variable)).toEqual(['HIRESYNC_METRICS_ACCOUNT_SERIES']);
        expect(problems[0]?.message).toMatch(/auto, all, none or a number of accounts/);
      }
    }
  });
});
