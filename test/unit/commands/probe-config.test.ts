import { describe, expect, it } from 'vitest';
import { loadProbeConfig } from '../../../src/commands/accounts/probe-config.js';

const SERVICES = {
  DATABASE_URL: 'postgres://u@db/hiresync',
  REDIS_URL: 'redis://cache:6379',
  HIRESYNC_SECRET_KEY: Buffer.alloc(32, 1).toString('base64'),
};

describe("the configuration an account's test reads with", () => {
  it("reads a registered account's resources with the live service's recommended settings when the deployment sets no base URL", () => {
    const config = loadProbeConfig(SERVICES, 'acme');
    expect(config.updatedFilter).toBe('updated_at=gte|{since}');
    expect(config.extraWalks).toEqual({ job_posts: ['active=false'] });
  });

  it('keeps them off for a deployment whose base URL is set, as its sync does', () => {
    const config = loadProbeConfig(
      { ...SERVICES, HIRESYNC_BASE_URL: 'https://harvest.example.com' },
      'acme',
    );
    expect(config.updatedFilter).toBeUndefined();
    expect(config.extraWalks).toEqual({});
    const v3 = loadProbeConfig(
      { ...SERVICES, HIRESYNC_BASE_URL: 'https://harvest.example.com', HIRESYNC_API: 'v3' },
      'acme',
    );
    expect(v3.updatedFilter).toBe('updated_at=gte|{since}');
  });

  it("tests default against the live service's URLs when none is set", () => {
    const config = loadProbeConfig(
      { ...SERVICES, HIRESYNC_CLIENT_ID: 'c', HIRESYNC_CLIENT_SECRET: 's' },
      'default',
    );
    expect(config.api.baseUrl).toBe('https://harvest.greenhouse.io');
    expect(config.api.auth?.tokenUrl).toBe('https://auth.greenhouse.io/token');
  });
});
