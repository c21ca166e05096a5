import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/config/fields.js';
import {
  loadConfig,
  loadDatabaseConfig,
  loadStatusConfig,
  withEnvironmentCredentials,
} from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { redactSecrets } from '../../src/secret.js';

const BASE = {
  HIRESYNC_BASE_URL: 'https://harvest.example.com',
  DATABASE_URL: 'postgres://u@db/hiresync',
  REDIS_URL: 'redis://cache:6379',
};
const PARTNER = {
  HIRESYNC_PARTNER_CLIENT_ID: 'partner-1',
  HIRESYNC_PARTNER_CLIENT_SECRET: 'partner-secret',
  HIRESYNC_AUTH_URL: 'https://auth.example.com',
};
const CLIENT = {
  HIRESYNC_AUTH_URL: 'https://auth.example.com/oauth/',
  HIRESYNC_CLIENT_ID: 'client-1',
  HIRESYNC_CLIENT_SECRET: 'top-secret-value',
};

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env, RESOURCE_NAMES);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems.map((p) => p.variable);
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({ ...BASE, ...CLIENT }, RESOURCE_NAMES);
    expect(config.api.perPage).toBe(500);
    expect(config.resources).toEqual([
      'jobs',
      'job_posts',
      'tracking_links',
      'job_boards',
      'sources',
      'referrers',
    ]);
    expect(config.api.trackingLinksPath).toBe('/v3/tracking_links');
    expect(config.incrementalEveryMs).toBe(15 * 60_000);
    expect(config.fullCron).toBe('0 3 * * *');
    expect(config.fullWindowMs).toBe(3_600_000);
    expect(config.listeners).toEqual({ http: { port: 9464, host: '0.0.0.0' }, public: undefined });
    expect(config.logLevel).toBe('info');
    expect(config.api.rateLimitWindowMs).toBe(10_000);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('forms token URLs by appending to configured URLs that carry a path', () => {
    const cc = withEnvironmentCredentials(loadConfig({ ...BASE, ...CLIENT }, RESOURCE_NAMES));
    expect(cc.api.auth.tokenUrl).toBe('https://auth.example.com/oauth/token');
    const key = withEnvironmentCredentials(
      loadConfig(
        {
          ...BASE,
          HIRESYNC_BASE_URL: 'https://harvest.example.com/api/',
          HIRESYNC_API_KEY: 'k',
        },
        RESOURCE_NAMES,
      ),
    );
    expect(key.api.auth.tokenUrl).toBe('https://harvest.example.com/api/auth/token');
    expect(key.api.baseUrl).toBe('https://harvest.example.com/api');
  });

  it('keeps HIRESYNC_SUB for client credentials', () => {
    const config = withEnvironmentCredentials(
      loadConfig({ ...BASE, ...CLIENT, HIRESYNC_SUB: '4242' }, RESOURCE_NAMES),
    );
    expect(config.api.auth.mode === 'client_credentials' && config.api.auth.sub).toBe('4242');
  });

  it('requires https unless the host is loopback', () => {
    expect(
      problems({ ...BASE, ...CLIENT, HIRESYNC_BASE_URL: 'http://harvest.example.com' }),
    ).toEqual(['HIRESYNC_BASE_URL']);
    expect(problems({ ...BASE, ...CLIENT, HIRESYNC_AUTH_URL: 'http://auth.example.com' })).toEqual([
      'HIRESYNC_AUTH_URL',
    ]);
    for (const host of ['127.0.0.1:8080', 'localhost:1', '[::1]:9', '127.10.0.3']) {
      expect(
        loadConfig({ ...BASE, ...CLIENT, HIRESYNC_BASE_URL: `http://${host}` }, RESOURCE_NAMES).api
          .baseUrl,
      ).toBe(`http://${host}`);
    }
  });

  it('reports every problem at once, naming each variable', () => {
    const names = problems({
      HIRESYNC_BASE_URL: 'ftp://x',
      REDIS_URL: 'postgres://nope',
      HIRESYNC_PER_PAGE: '501',
      HIRESYNC_SUB: 'abc',
      HIRESYNC_RESOURCES: 'jobs,rejected_records',
      HIRESYNC_INCREMENTAL_EVERY: 'often',
      HIRESYNC_FULL_CRON: 'every night',
      LOG_LEVEL: 'loud',
      ...CLIENT,
    });
    expect(names.sort()).toEqual(
      [
        'DATABASE_URL',
        'HIRESYNC_BASE_URL',
        'HIRESYNC_FULL_CRON',
        'HIRESYNC_INCREMENTAL_EVERY',
        'HIRESYNC_PER_PAGE',
        'HIRESYNC_RESOURCES',
        'HIRESYNC_SUB',
        'LOG_LEVEL',
        'REDIS_URL',
      ].sort(),
    );
  });

  it('takes the environment credentials as optional: without them there is no account default, and the secret key is required', () => {
    const key = Buffer.alloc(32, 1).toString('base64');
    const config = loadConfig({ ...BASE, HIRESYNC_SECRET_KEY: key }, RESOURCE_NAMES);
    expect(config.api.auth).toBeUndefined();
    expect(() => withEnvironmentCredentials(config)).toThrow(/there is no account default/);
    // Nothing could ever be synced without credentials of any kind: naming what to set.
    let message = '';
    try {
      loadConfig({ ...BASE, ...PARTNER }, RESOURCE_NAMES);
    } catch (error) {
      message = (error as Error).message;
    }
    for (const name of [
      'HIRESYNC_CLIENT_ID',
      'HIRESYNC_CLIENT_SECRET',
      'HIRESYNC_API_KEY',
      'HIRESYNC_SECRET_KEY',
      'HIRESYNC_PARTNER_CLIENT_ID',
    ]) {
      expect(message).toContain(name);
    }
    expect(
      loadConfig({ ...BASE, ...PARTNER, HIRESYNC_SECRET_KEY: key }, RESOURCE_NAMES).partner,
    ).toBeDefined();
    expect(problems({ ...BASE, HIRESYNC_SECRET_KEY: key, HIRESYNC_SUB: '7' })).toEqual([
      'HIRESYNC_SUB',
    ]);
  });

  it('lets HIRESYNC_RESOURCE_PATHS give the path of a resource only accounts list, checking its name', () => {
    const key = Buffer.alloc(32, 1).toString('base64');
    const config = loadConfig(
      { ...BASE, HIRESYNC_SECRET_KEY: key, HIRESYNC_RESOURCE_PATHS: 'offers=/v3/job_offers' },
      RESOURCE_NAMES,
    );
    expect(config.api.resourcePaths).toEqual({ offers: '/v3/job_offers' });
    expect(config.resources).not.toContain('offers');
    expect(
      problems({ ...BASE, HIRESYNC_SECRET_KEY: key, HIRESYNC_RESOURCE_PATHS: 'sync_runs=/v3/x' }),
    ).toEqual(['HIRESYNC_RESOURCE_PATHS']);
  });

  it('requires exactly one auth mode', () => {
    expect(problems({ ...BASE })).toEqual(['HIRESYNC_CLIENT_ID']);
    expect(problems({ ...BASE, ...CLIENT, HIRESYNC_API_KEY: 'k' })).toEqual(['HIRESYNC_API_KEY']);
    // BASE names another API than the live one, whose token service is not the live one's.
    expect(problems({ ...BASE, HIRESYNC_CLIENT_ID: 'c' }).sort()).toEqual([
      'HIRESYNC_AUTH_URL',
      'HIRESYNC_CLIENT_SECRET',
    ]);
    const { HIRESYNC_BASE_URL: _, ...live } = BASE;
    expect(problems({ ...live, HIRESYNC_CLIENT_ID: 'c' })).toEqual(['HIRESYNC_CLIENT_SECRET']);
    expect(problems({ ...BASE, HIRESYNC_API_KEY: 'k', HIRESYNC_SUB: '1' })).toEqual([
      'HIRESYNC_SUB',
    ]);
  });

  it('bounds per_page to 1..500', () => {
    expect(problems({ ...BASE, ...CLIENT, HIRESYNC_PER_PAGE: '0' })).toEqual(['HIRESYNC_PER_PAGE']);
    expect(problems({ ...BASE, ...CLIENT, HIRESYNC_PER_PAGE: '2.5' })).toEqual([
      'HIRESYNC_PER_PAGE',
    ]);
    expect(
      loadConfig({ ...BASE, ...CLIENT, HIRESYNC_PER_PAGE: '1' }, RESOURCE_NAMES).api.perPage,
    ).toBe(1);
  });

  it('never puts a secret into an error message or a serialized config', () => {
    let message = '';
    try {
      loadConfig({ ...CLIENT, HIRESYNC_API_KEY: 'api-key-secret-value' }, RESOURCE_NAMES);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toContain('top-secret-value');
    expect(message).not.toContain('api-key-secret-value');
    // The message still names the problem and the variables.
    expect(message).toContain(
      'HIRESYNC_API_KEY: set either HIRESYNC_CLIENT_ID/HIRESYNC_CLIENT_SECRET or HIRESYNC_API_KEY, not both',
    );
    const config = withEnvironmentCredentials(loadConfig({ ...BASE, ...CLIENT }, RESOURCE_NAMES));
    expect(JSON.stringify(config)).not.toContain('top-secret-value');
    expect(
      String(config.api.auth.mode === 'client_credentials' && config.api.auth.clientSecret),
    ).toBe('[redacted]');
  });
});

describe('command scopes', () => {
  it('migrate needs only DATABASE_URL', () => {
    expect(loadDatabaseConfig({ DATABASE_URL: 'postgresql://x/y' }).databaseUrl).toBe(
      'postgresql://x/y',
    );
    expect(() => loadDatabaseConfig({})).toThrow(ConfigError);
  });

  it('status needs DATABASE_URL and REDIS_URL', () => {
    expect(
      loadStatusConfig({ DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://r' }, RESOURCE_NAMES)
        .redis,
    ).toMatchObject({ kind: 'server', url: 'redis://r' });
    expect(() => loadStatusConfig({ DATABASE_URL: 'postgres://x/y' }, RESOURCE_NAMES)).toThrow(
      /REDIS_URL/,
    );
  });
});

describe('isLoopbackHost', () => {
  it('accepts 127.0.0.0/8, ::1 and localhost only', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('127.255.1.2')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('LOCALHOST')).toBe(true);
    expect(isLoopbackHost('10.0.0.1')).toBe(false);
    expect(isLoopbackHost('localhost.evil.com')).toBe(false);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
  });
});

describe('loadConfig guards and bounds', () => {
  const valid = { ...BASE, ...CLIENT };
  const messageOf = (env: Record<string, string>): string => {
    try {
      loadConfig(env, RESOURCE_NAMES);
    } catch (error) {
      return (error as ConfigError).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('applies the guard defaults: half the live rows, 4 MiB pages, a one-hour Retry-After', () => {
    const config = loadConfig(valid, RESOURCE_NAMES);
    expect(config.maxDeleteFraction).toBe(0.5);
    expect(config.api.maxPageBytes).toBe(4 * 1024 ** 2);
    expect(config.api.maxRetryAfterMs).toBe(3_600_000);
  });

  it('reads guard values in their units', () => {
    const config = loadConfig(
      {
        ...valid,
        HIRESYNC_MAX_DELETE_FRACTION: '0.25',
        HIRESYNC_MAX_PAGE_BYTES: '512KiB',
        HIRESYNC_MAX_RETRY_AFTER: '10m',
      },
      RESOURCE_NAMES,
    );
    expect(config.maxDeleteFraction).toBe(0.25);
    expect(config.api.maxPageBytes).toBe(512 * 1024);
    expect(config.api.maxRetryAfterMs).toBe(600_000);
  });

  it('rejects a fraction outside 0..1, a size without a known unit, and sizes out of range', () => {
    expect(problems({ ...valid, HIRESYNC_MAX_DELETE_FRACTION: '1.5' })).toEqual([
      'HIRESYNC_MAX_DELETE_FRACTION',
    ]);
    expect(problems({ ...valid, HIRESYNC_MAX_DELETE_FRACTION: 'half' })).toEqual([
      'HIRESYNC_MAX_DELETE_FRACTION',
    ]);
    expect(problems({ ...valid, HIRESYNC_MAX_PAGE_BYTES: '10 parsecs' })).toEqual([
      'HIRESYNC_MAX_PAGE_BYTES',
    ]);
    expect(problems({ ...valid, HIRESYNC_MAX_PAGE_BYTES: '10' })).toEqual([
      'HIRESYNC_MAX_PAGE_BYTES',
    ]);
  });

  it('rejects durations below their floor, naming the bounds (0.4ms timeouts and schedules)', () => {
    expect(problems({ ...valid, HIRESYNC_HTTP_TIMEOUT: '0.4ms' })).toEqual([
      'HIRESYNC_HTTP_TIMEOUT',
    ]);
    expect(problems({ ...valid, HIRESYNC_INCREMENTAL_EVERY: '0.4ms' })).toEqual([
      'HIRESYNC_INCREMENTAL_EVERY',
    ]);
    expect(messageOf({ ...valid, HIRESYNC_HTTP_TIMEOUT: '0.4ms' })).toMatch(/from 100ms to 1h/);
  });

  it('rejects durations no timer can hold (a run lock TTL of 100d would renew every millisecond)', () => {
    expect(problems({ ...valid, HIRESYNC_RUN_LOCK_TTL: '100d' })).toEqual([
      'HIRESYNC_RUN_LOCK_TTL',
    ]);
    expect(problems({ ...valid, HIRESYNC_INCREMENTAL_EVERY: '30d' })).toEqual([
      'HIRESYNC_INCREMENTAL_EVERY',
    ]);
  });

  it('takes only five-field cron patterns, as its message says', () => {
    expect(problems({ ...valid, HIRESYNC_FULL_CRON: '0 0 3 * * *' })).toEqual([
      'HIRESYNC_FULL_CRON',
    ]);
    expect(
      loadConfig({ ...valid, HIRESYNC_FULL_CRON: '30 2 * * 1' }, RESOURCE_NAMES).fullCron,
    ).toBe('30 2 * * 1');
  });

  it('reads HIRESYNC_FULL_WINDOW as a duration, 0 turning the spread of full runs off', () => {
    const window = (text: string) =>
      loadConfig({ ...valid, HIRESYNC_FULL_WINDOW: text }, RESOURCE_NAMES).fullWindowMs;
    expect(window('90m')).toBe(5_400_000);
    expect(window('0')).toBe(0);
    expect(window('0s')).toBe(0);
    expect(window(' 0h ')).toBe(0);
    expect(problems({ ...valid, HIRESYNC_FULL_WINDOW: 'an hour' })).toEqual([
      'HIRESYNC_FULL_WINDOW',
    ]);
    expect(messageOf({ ...valid, HIRESYNC_FULL_WINDOW: 'an hour' })).toMatch(/or 0 for none/);
    expect(messageOf({ ...valid, HIRESYNC_FULL_WINDOW: '8d' })).toMatch(
      /must be 0 \(none\) or from 1s to 7d, got "8d"/,
    );
    expect(problems({ ...valid, HIRESYNC_FULL_WINDOW: '-1h' })).toEqual(['HIRESYNC_FULL_WINDOW']);
  });

  it('ignores surrounding spaces in every variable alike', () => {
    const config = loadConfig(
      {
        ...valid,
        DATABASE_URL: ' postgres://u@db/hiresync  ',
        REDIS_URL: 'redis://cache:6379 ',
        LOG_LEVEL: ' debug',
        HIRESYNC_PER_PAGE: ' 200 ',
      },
      RESOURCE_NAMES,
    );
    expect(config.databaseUrl).toBe('postgres://u@db/hiresync');
    expect(config.redis).toMatchObject({ kind: 'server', url: 'redis://cache:6379' });
    expect(config.logLevel).toBe('debug');
    expect(config.api.perPage).toBe(200);
  });
});

describe('HIRESYNC_UPDATED_FILTER', () => {
  const valid = { ...BASE, ...CLIENT };

  it('is off by default, with a five-minute lookback', () => {
    const config = loadConfig(valid, RESOURCE_NAMES);
    expect(config.updatedFilter).toBeUndefined();
    expect(config.updatedLookbackMs).toBe(300_000);
  });

  it('takes a query-string template holding {since}', () => {
    const config = loadConfig(
      {
        ...valid,
        HIRESYNC_UPDATED_FILTER: 'updated_at=gte|{since}',
        HIRESYNC_UPDATED_LOOKBACK: '1h',
      },
      RESOURCE_NAMES,
    );
    expect(config.updatedFilter).toBe('updated_at=gte|{since}');
    expect(config.updatedLookbackMs).toBe(3_600_000);
  });

  it('refuses a template without {since}, with a cursor or per_page, or that is no query string', () => {
    for (const text of [
      'updated_at=gte|2024-01-01',
      'cursor=x&updated_at=gte|{since}',
      'per_page=5&updated_at=gte|{since}',
      '?updated_at=gte|{since}',
      '{since}',
      '{since}=x',
      'Per_Page=5&updated_at=gte|{since}',
      'updated_at=gte|{since}&status',
    ]) {
      expect(problems({ ...valid, HIRESYNC_UPDATED_FILTER: text }), text).toEqual([
        'HIRESYNC_UPDATED_FILTER',
      ]);
    }
  });
});

describe('HIRESYNC_EXTRA_WALKS', () => {
  const valid = { ...BASE, ...CLIENT };

  function messages(text: string): string[] {
    try {
      loadConfig({ ...valid, HIRESYNC_EXTRA_WALKS: text }, RESOURCE_NAMES);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).problems.map((p) => `${p.variable} ${p.message}`);
    }
    throw new Error('expected a ConfigError');
  }

  it('is unset by default: every resource reads its default walk only', () => {
    expect(loadConfig(valid, RESOURCE_NAMES).extraWalks).toEqual({});
  });

  it('reads comma-separated NAME?QUERY items as the queries of each name, in order', () => {
    const config = loadConfig(
      {
        ...valid,
        HIRESYNC_EXTRA_WALKS:
          'job_posts?active=false, users?show_service_accounts=true,users?include_defaults=true',
      },
      RESOURCE_NAMES,
    );
    expect(config.extraWalks).toEqual({
      job_posts: ['active=false'],
      users: ['show_service_accounts=true', 'include_defaults=true'],
    });
  });

  it('refuses an item of unknown format, an empty query or a name that is not a resource name, naming the item', () => {
    for (const [text, item] of [
      ['job_posts', 'job_posts'],
      ['job_posts?', 'job_posts?'],
      ['Job-Posts?active=false', 'Job-Posts?active=false'],
      ['job_posts?active', 'job_posts?active'],
      ['job_posts?per_page=5', 'job_posts?per_page=5'],
      ['jobs?status=open,job_posts?cursor=x', 'job_posts?cursor=x'],
    ] as const) {
      const found = messages(text);
      expect(found, text).toHaveLength(1);
      expect(found[0], text).toMatch(/^HIRESYNC_EXTRA_WALKS /);
      expect(found[0], text).toContain(JSON.stringify(item));
    }
  });
});

describe('HIRESYNC_CONSOLE_PASSWORD', () => {
  const env = { ...BASE, ...CLIENT };

  it('is unset by default: the console is off', () => {
    expect(loadConfig(env, RESOURCE_NAMES).consolePassword).toBeUndefined();
  });

  it('keeps the password as a secret that never prints', () => {
    const config = loadConfig(
      { ...env, HIRESYNC_CONSOLE_PASSWORD: 'a long console password' },
      RESOURCE_NAMES,
    );
    expect(config.consolePassword?.reveal()).toBe('a long console password');
    expect(JSON.stringify(config)).not.toContain('a long console password');
    expect(redactSecrets('login: a long console password')).toBe('login: [redacted]');
  });

  it('refuses a password shorter than 12 characters without quoting it', () => {
    let error: unknown;
    try {
      loadConfig({ ...env, HIRESYNC_CONSOLE_PASSWORD: 'short-pw' }, RESOURCE_NAMES);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      {
        variable: 'HIRESYNC_CONSOLE_PASSWORD',
        message: 'must be at least 12 characters (make one with: openssl rand -base64 18)',
      },
    ]);
    expect((error as ConfigError).message).not.toContain('short-pw');
  });
});
