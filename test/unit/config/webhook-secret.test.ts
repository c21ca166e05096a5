import { describe, expect, it } from 'vitest';
import { loadAccountsConfig, loadConfig } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/errors.js';
import { RESOURCE_NAMES } from '../../../src/resources/index.js';
import { redactSecrets } from '../../../src/secret.js';

const ENV = {
  HIRESYNC_BASE_URL: 'https://harvest.example.com',
  DATABASE_URL: 'postgres://u@db/hiresync',
  REDIS_URL: 'redis://cache:6379',
  HIRESYNC_AUTH_URL: 'https://auth.example.com/oauth/',
  HIRESYNC_CLIENT_ID: 'client-1',
  HIRESYNC_CLIENT_SECRET: 'top-secret-value',
};

function problemsOf(env: Record<string, string>) {
  try {
    loadConfig(env, RESOURCE_NAMES);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('HIRESYNC_WEBHOOK_SECRET', () => {
  it("is unset by default: default's webhook endpoint refuses every delivery", () => {
    expect(loadConfig(ENV, RESOURCE_NAMES).webhookSecret).toBeUndefined();
  });

  it('keeps the secret (spaces around it dropped) as a Secret that never prints', () => {
    const config = loadConfig(
      { ...ENV, HIRESYNC_WEBHOOK_SECRET: '  vendor-webhook-key-42  ' },
      RESOURCE_NAMES,
    );
    expect(config.webhookSecret?.reveal()).toBe('vendor-webhook-key-42');
    expect(JSON.stringify(config)).not.toContain('vendor-webhook-key-42');
    expect(redactSecrets('signed with vendor-webhook-key-42')).toBe('signed with [redacted]');
  });

  it('refuses a secret shorter than 8 characters without quoting it', () => {
    const error = problemsOf({ ...ENV, HIRESYNC_WEBHOOK_SECRET: 'short7!' });
    expect(error.problems).toEqual([
      {
        variable: 'HIRESYNC_WEBHOOK_SECRET',
        message: expect.stringContaining('at least 8 characters'),
      },
    ]);
    expect(error.message).not.toContain('short7!');
  });

  it('is a configuration error without the environment credentials: there is no account default', () => {
    const { HIRESYNC_CLIENT_ID, HIRESYNC_CLIENT_SECRET, ...without } = ENV;
    const error = problemsOf({
      ...without,
      HIRESYNC_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
      HIRESYNC_WEBHOOK_SECRET: 'a webhook secret',
    });
    expect(error.problems.map((p) => p.variable)).toEqual(['HIRESYNC_WEBHOOK_SECRET']);
    expect(error.message).toContain('accounts update NAME --webhook-secret');
  });

  it('accounts commands learn whether default has one, never its value', () => {
    const config = loadAccountsConfig({ ...ENV, HIRESYNC_WEBHOOK_SECRET: 'a webhook secret' });
    expect(config.defaultWebhookSecret).toBe(true);
    expect(JSON.stringify(config)).not.toContain('a webhook secret');
    expect(loadAccountsConfig(ENV).defaultWebhookSecret).toBe(false);
  });
});
