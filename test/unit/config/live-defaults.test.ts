import { describe, expect, it } from 'vitest';
import { loadAccountUrls } from '../../../src/config/account-urls.js';
import {
  apiProfileOf,
  LIVE_AUTH_URL,
  LIVE_BASE_URL,
  withLiveDefaults,
} from '../../../src/config/live-defaults.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { readPartner } from '../../../src/config/partner.js';
import { ConfigError } from '../../../src/errors.js';
import { RESOURCE_NAMES } from '../../../src/resources/index.js';

const SERVICES = { DATABASE_URL: 'postgres://u@db/hiresync', REDIS_URL: 'redis://cache:6379' };
const CLIENT = { HIRESYNC_CLIENT_ID: 'client-1', HIRESYNC_CLIENT_SECRET: 'top-secret-value' };
const PARTNER = {
  HIRESYNC_PARTNER_CLIENT_ID: 'partner-1',
  HIRESYNC_PARTNER_CLIENT_SECRET: 'partner-secret',
};
const KEY = { HIRESYNC_SECRET_KEY: Buffer.alloc(32, 1).toString('base64') };

/** Every variable a deployment sets today: the URLs, the credentials and the recommended settings. */
const FULLY_SET = {
  ...SERVICES,
  ...CLIENT,
  HIRESYNC_BASE_URL: 'https://harvest.example.com',
  HIRESYNC_AUTH_URL: 'https://auth.example.com',
  HIRESYNC_UPDATED_FILTER: 'updated_at=gte|{since}',
  HIRESYNC_EXTRA_WALKS: 'job_posts?active=false',
};

describe('the live service by default', () => {
  it('syncs the live service with credentials, DATABASE_URL and REDIS_URL alone', () => {
    const config = loadConfig({ ...SERVICES, ...CLIENT }, RESOURCE_NAMES);
    expect(config.api.baseUrl).toBe('https://harvest.greenhouse.io');
    expect(config.api.auth?.tokenUrl).toBe('https://auth.greenhouse.io/token');
    expect(config.updatedFilter).toBe('updated_at=gte|{since}');
    expect(config.extraWalks).toEqual({ job_posts: ['active=false'] });
  });

  it('keeps the recommended settings off when HIRESYNC_BASE_URL is set, as before', () => {
    const config = loadConfig(
      {
        ...SERVICES,
        ...CLIENT,
        HIRESYNC_BASE_URL: 'https://harvest.example.com',
        HIRESYNC_AUTH_URL: 'https://auth.example.com',
      },
      RESOURCE_NAMES,
    );
    expect(config.api.baseUrl).toBe('https://harvest.example.com');
    expect(config.updatedFilter).toBeUndefined();
    expect(config.extraWalks).toEqual({});
  });

  it('lets HIRESYNC_API name the profile whatever the base URL: spec turns the recommended defaults off, v3 on', () => {
    const spec = loadConfig({ ...SERVICES, ...CLIENT, HIRESYNC_API: 'spec' }, RESOURCE_NAMES);
    expect(spec.api.baseUrl).toBe(LIVE_BASE_URL);
    expect(spec.updatedFilter).toBeUndefined();
    expect(spec.extraWalks).toEqual({});
    const v3 = loadConfig(
      {
        ...SERVICES,
        ...CLIENT,
        HIRESYNC_BASE_URL: 'http://127.0.0.1:8910',
        HIRESYNC_AUTH_URL: 'http://127.0.0.1:8910/oauth',
        HIRESYNC_API: 'V3',
      },
      RESOURCE_NAMES,
    );
    expect(v3.api.baseUrl).toBe('http://127.0.0.1:8910');
    expect(v3.updatedFilter).toBe('updated_at=gte|{since}');
    expect(v3.extraWalks).toEqual({ job_posts: ['active=false'] });
  });

  it('keeps the meaning of every variable set under the profile v3', () => {
    const config = loadConfig(
      {
        ...SERVICES,
        ...CLIENT,
        HIRESYNC_UPDATED_FILTER: 'last_activity_at=gte|{since}',
        HIRESYNC_EXTRA_WALKS: 'users?show_service_accounts=true',
        HIRESYNC_AUTH_URL: 'https://auth.example.com',
      },
      RESOURCE_NAMES,
    );
    expect(config.updatedFilter).toBe('last_activity_at=gte|{since}');
    expect(config.extraWalks).toEqual({ users: ['show_service_accounts=true'] });
    expect(config.api.auth?.tokenUrl).toBe('https://auth.example.com/token');
  });

  it('treats an empty variable as unset, as every other variable', () => {
    const { env } = withLiveDefaults({ HIRESYNC_BASE_URL: ' ', HIRESYNC_EXTRA_WALKS: '' });
    expect(env.HIRESYNC_BASE_URL).toBe(LIVE_BASE_URL);
    expect(env.HIRESYNC_API).toBe('v3');
    expect(env.HIRESYNC_EXTRA_WALKS).toBe('job_posts?active=false');
  });

  it('refuses a profile that is neither v3 nor spec, naming HIRESYNC_API', () => {
    expect(apiProfileOf({ HIRESYNC_API: 'v2' }).problem?.variable).toBe('HIRESYNC_API');
    let problems: readonly { variable: string }[] = [];
    try {
      loadConfig({ ...SERVICES, ...CLIENT, HIRESYNC_API: 'live' }, RESOURCE_NAMES);
    } catch (error) {
      if (error instanceof ConfigError) problems = error.problems;
    }
    expect(problems.map((p) => p.variable)).toEqual(['HIRESYNC_API']);
  });

  it('yields the same configuration as before for an environment that sets every variable', () => {
    const withProfile = loadConfig({ ...FULLY_SET, HIRESYNC_API: 'spec' }, RESOURCE_NAMES);
    const asToday = loadConfig(FULLY_SET, RESOURCE_NAMES);
    expect(asToday).toEqual(withProfile);
    expect(asToday.api.baseUrl).toBe('https://harvest.example.com');
    expect(asToday.api.auth?.tokenUrl).toBe('https://auth.example.com/token');
    expect(asToday.updatedFilter).toBe('updated_at=gte|{since}');
    expect(asToday.extraWalks).toEqual({ job_posts: ['active=false'] });
    // The live service named in full, as a deployment of today names it, is the default.
    const named = loadConfig(
      {
        ...FULLY_SET,
        HIRESYNC_BASE_URL: LIVE_BASE_URL,
        HIRESYNC_AUTH_URL: LIVE_AUTH_URL,
      },
      RESOURCE_NAMES,
    );
    expect(named).toEqual(loadConfig({ ...SERVICES, ...CLIENT }, RESOURCE_NAMES));
  });

  it("gives a partner app the live service's authorize endpoint unless HIRESYNC_AUTHORIZE_URL or HIRESYNC_AUTH_URL says otherwise", () => {
    expect(readPartner(PARTNER).partner?.authorizeUrl).toBe('https://auth.greenhouse.io/authorize');
    expect(
      readPartner({ ...PARTNER, HIRESYNC_AUTH_URL: 'https://auth.example.com' }).partner
        ?.authorizeUrl,
    ).toBe('https://auth.example.com/authorize');
    const config = loadConfig({ ...SERVICES, ...PARTNER, ...KEY }, RESOURCE_NAMES);
    expect(config.partner?.authorizeUrl).toBe('https://auth.greenhouse.io/authorize');
  });

  it("gives a new account the deployment's URLs, else the live service's", () => {
    const none = { baseUrl: undefined, authUrl: undefined };
    expect(loadAccountUrls({}, none, true)).toEqual({
      baseUrl: LIVE_BASE_URL,
      authUrl: LIVE_AUTH_URL,
    });
    expect(
      loadAccountUrls({ HIRESYNC_BASE_URL: 'https://harvest.example.com' }, none, false),
    ).toEqual({ baseUrl: 'https://harvest.example.com', authUrl: undefined });
    expect(
      loadAccountUrls(
        { HIRESYNC_AUTH_URL: 'https://auth.example.com' },
        { baseUrl: 'http://127.0.0.1:9', authUrl: undefined },
        true,
      ),
    ).toEqual({ baseUrl: 'http://127.0.0.1:9', authUrl: 'https://auth.example.com' });
  });

  it("never sends credentials meant for another API to the live token service: without a token service of its own, another API's client credentials are refused", () => {
    const other = { ...SERVICES, ...CLIENT, HIRESYNC_BASE_URL: 'http://127.0.0.1:8910' };
    expect(() => loadConfig(other, RESOURCE_NAMES)).toThrow(
      /HIRESYNC_AUTH_URL: is required with client credentials when HIRESYNC_BASE_URL is not the live service's/,
    );
    const live = { ...SERVICES, ...CLIENT, HIRESYNC_BASE_URL: 'https://harvest.greenhouse.io/' };
    expect(loadConfig(live, RESOURCE_NAMES).api.auth?.tokenUrl).toBe(`${LIVE_AUTH_URL}/token`);
    expect(() =>
      loadAccountUrls({}, { baseUrl: 'https://harvest.example.com', authUrl: undefined }, true),
    ).toThrow(/--auth-url or HIRESYNC_AUTH_URL: is required when the account's base URL/);
    expect(
      readPartner({ ...PARTNER, HIRESYNC_BASE_URL: 'https://harvest.example.com' }).partner
        ?.authorizeUrl,
    ).toBeUndefined();
  });

  it('never gives an account of another API the live token service the environment names for the live API: --base-url without --auth-url is refused', () => {
    // .env.example's lines: the live service's URLs, set.
    const liveEnv = { HIRESYNC_BASE_URL: LIVE_BASE_URL, HIRESYNC_AUTH_URL: `${LIVE_AUTH_URL}/` };
    const proxy = { baseUrl: 'https://harvest.example.com', authUrl: undefined };
    for (const env of [liveEnv, { HIRESYNC_AUTH_URL: LIVE_AUTH_URL }]) {
      expect(() => loadAccountUrls(env, proxy, true)).toThrow(
        /--auth-url or HIRESYNC_AUTH_URL: is required when the account's base URL/,
      );
    }
    // Named on purpose, it is taken: with --auth-url, or paired with the environment's own base URL.
    expect(loadAccountUrls(liveEnv, { ...proxy, authUrl: LIVE_AUTH_URL }, true).authUrl).toBe(
      LIVE_AUTH_URL,
    );
    const paired = { HIRESYNC_BASE_URL: proxy.baseUrl, HIRESYNC_AUTH_URL: LIVE_AUTH_URL };
    expect(loadAccountUrls(paired, { baseUrl: undefined, authUrl: undefined }, true)).toEqual({
      baseUrl: proxy.baseUrl,
      authUrl: LIVE_AUTH_URL,
    });
    expect(
      loadAccountUrls(liveEnv, { baseUrl: `${LIVE_BASE_URL}/`, authUrl: undefined }, true).authUrl,
    ).toBe(LIVE_AUTH_URL);
  });
});
