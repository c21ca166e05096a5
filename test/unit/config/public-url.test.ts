import { describe, expect, it } from 'vitest';
import { parseExpires } from '../../../src/commands/accounts/invite.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { readPublicUrl } from '../../../src/config/public-url.js';
import { ConfigError } from '../../../src/errors.js';

const base = {
  DATABASE_URL: 'postgres://127.0.0.1/db',
  REDIS_URL: 'redis://127.0.0.1',
  HIRESYNC_BASE_URL: 'https://api.example.com',
  HIRESYNC_API_KEY: 'key',
};

describe('HIRESYNC_PUBLIC_URL', () => {
  it('takes https, or http on a loopback host, without its trailing slashes', () => {
    expect(readPublicUrl({ HIRESYNC_PUBLIC_URL: ' https://sync.example.com/hiresync/ ' })).toEqual({
      publicUrl: 'https://sync.example.com/hiresync',
      problems: [],
    });
    expect(readPublicUrl({ HIRESYNC_PUBLIC_URL: 'http://127.0.0.1:9464' }).publicUrl).toBe(
      'http://127.0.0.1:9464',
    );
    expect(readPublicUrl({})).toEqual({ publicUrl: undefined, problems: [] });
  });

  it('refuses plain http elsewhere, a query and credentials, as the other URLs do', () => {
    for (const [value, message] of [
      [
        'http://sync.example.com',
        'must use https:// (plain http is allowed only for loopback hosts)',
      ],
      ['https://sync.example.com/?x=1', 'must not carry a query, fragment or credentials'],
      ['https://user:pw@sync.example.com', 'must not carry a query, fragment or credentials'],
      ['sync.example.com', 'is not a URL'],
    ] as const) {
      const { problems } = readPublicUrl({ HIRESYNC_PUBLIC_URL: value });
      expect(problems[0]?.variable).toBe('HIRESYNC_PUBLIC_URL');
      expect(problems[0]?.message).toContain(message);
    }
  });

  it('is a configuration error of worker and sync when invalid, and optional otherwise', () => {
    expect(() =>
      loadConfig({ ...base, HIRESYNC_PUBLIC_URL: 'http://example.com' }, ['jobs']),
    ).toThrow(ConfigError);
    expect(loadConfig(base, ['jobs']).publicUrl).toBeUndefined();
    expect(
      loadConfig({ ...base, HIRESYNC_PUBLIC_URL: 'https://x.example' }, ['jobs']).publicUrl,
    ).toBe('https://x.example');
  });

  it('says what it is for when required and missing', () => {
    expect(readPublicUrl({}, 'make a connect link').problems[0]?.message).toContain(
      "is required to make a connect link (the public base URL of the worker's HTTP server",
    );
  });
});

describe('accounts invite --expires', () => {
  it('takes 1 minute to 30 days', () => {
    expect(parseExpires('7d')).toBe(7 * 86_400_000);
    expect(parseExpires('1m')).toBe(60_000);
    expect(parseExpires('30d')).toBe(30 * 86_400_000);
    for (const bad of ['31d', '30s', 'soon', '0'])
      expect(() => parseExpires(bad)).toThrow('--expires');
  });
});
