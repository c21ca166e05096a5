import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/errors.js';
import { main } from '../../../src/main.js';
import { RESOURCE_NAMES } from '../../../src/resources/index.js';
import { captureIo } from '../../support/capture-io.js';

// Nothing answers here: a worker that connected would fail otherwise (exit 1).
const ENV = {
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  REDIS_URL: 'redis://127.0.0.1:1',
  HIRESYNC_BASE_URL: 'https://harvest.example.com',
  HIRESYNC_API_KEY: 'key-0123456789',
};

const listenersOf = (env: Record<string, string>) =>
  loadConfig({ ...ENV, ...env }, RESOURCE_NAMES).listeners;

describe('the listeners of the worker', () => {
  it('without HIRESYNC_PUBLIC_PORT: one listener on HIRESYNC_HTTP_PORT, every address, as before', () => {
    expect(listenersOf({})).toEqual({ http: { port: 9464, host: '0.0.0.0' }, public: undefined });
    expect(listenersOf({ HIRESYNC_HTTP_HOST: '10.0.0.5' }).http.host).toBe('10.0.0.5');
  });

  it('with HIRESYNC_PUBLIC_PORT: the public listener on every address, the private one on loopback, unless set', () => {
    expect(listenersOf({ HIRESYNC_PUBLIC_PORT: '8080' })).toEqual({
      http: { port: 9464, host: '127.0.0.1' },
      public: { port: 8080, host: '0.0.0.0' },
    });
    expect(
      listenersOf({
        HIRESYNC_PUBLIC_PORT: '8080',
        HIRESYNC_PUBLIC_HOST: '[::]',
        HIRESYNC_HTTP_HOST: 'metrics.internal',
        HIRESYNC_HTTP_PORT: '9000',
      }),
    ).toEqual({
      http: { port: 9000, host: 'metrics.internal' },
      public: { port: 8080, host: '::' },
    });
  });

  it.each([
    [
      { HIRESYNC_PUBLIC_PORT: '65536' },
      'HIRESYNC_PUBLIC_PORT',
      'must be an integer from 0 to 65535',
    ],
    [{ HIRESYNC_PUBLIC_PORT: 'http' }, 'HIRESYNC_PUBLIC_PORT', 'must be an integer'],
    [{ HIRESYNC_PUBLIC_PORT: '9464' }, 'HIRESYNC_PUBLIC_PORT', "is HIRESYNC_HTTP_PORT's port"],
    [
      { HIRESYNC_PUBLIC_PORT: '9000', HIRESYNC_HTTP_PORT: '9000' },
      'HIRESYNC_PUBLIC_PORT',
      'needs a port of its own',
    ],
    [
      { HIRESYNC_PUBLIC_PORT: '8080', HIRESYNC_PUBLIC_HOST: 'http://0.0.0.0' },
      'HIRESYNC_PUBLIC_HOST',
      'must be an IP address',
    ],
    [
      { HIRESYNC_PUBLIC_PORT: '8080', HIRESYNC_HTTP_HOST: '127.0.0.1:9464' },
      'HIRESYNC_HTTP_HOST',
      'or a host name, got "127.0.0.1:9464"',
    ],
    [{ HIRESYNC_HTTP_HOST: 'under_score' }, 'HIRESYNC_HTTP_HOST', 'must be an IP address'],
    [
      { HIRESYNC_PUBLIC_HOST: '0.0.0.0' },
      'HIRESYNC_PUBLIC_HOST',
      'HIRESYNC_PUBLIC_PORT is not set',
    ],
    [{ HIRESYNC_WEBHOOK_MAX_INFLIGHT: '0' }, 'HIRESYNC_WEBHOOK_MAX_INFLIGHT', 'from 1 to 10000'],
    [
      { HIRESYNC_WEBHOOK_MAX_BUFFERED_BYTES: '512KiB' },
      'HIRESYNC_WEBHOOK_MAX_BUFFERED_BYTES',
      'from 1048576 bytes',
    ],
  ])('%o makes the worker exit 2 before connecting, naming %s', async (env, variable, message) => {
    let error: unknown;
    try {
      loadConfig({ ...ENV, ...env }, RESOURCE_NAMES);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.objectContaining({ variable, message: expect.stringContaining(message) }),
    ]);
    const io = captureIo();
    expect(await main(['worker'], { ...ENV, ...env }, io)).toBe(2);
    expect(io.err()).toContain(variable);
    expect(io.err()).toContain(message);
    expect(io.err()).not.toMatch(/ECONNREFUSED|connect/i);
  });
});
