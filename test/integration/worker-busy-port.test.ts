import { createServer } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../support/databases.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';
import { clearRedisPrefix, servicesEnv } from '../support/test-env.js';

const { defer } = cleanupAfterEach();

/** A port something else listens on, on every address, until the test ends. */
async function occupiedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

/** A migrated deployment of the account `default` (its API is never reached: the worker stops first). */
async function deployment(): Promise<Record<string, string>> {
  const database = await createTestDatabase(inject('databaseUrl'));
  const env = {
    ...servicesEnv(database.url),
    HIRESYNC_API_KEY: 'key-0123456789',
    HIRESYNC_BASE_URL: 'http://127.0.0.1:9',
    HIRESYNC_RESOURCES: 'jobs',
  };
  defer(async () => {
    await database.drop();
    await clearRedisPrefix(env);
  });
  expect((await runCli(['migrate'], env)).code).toBe(0);
  return env;
}

describe('hiresync worker on a port in use', () => {
  it('exits 1 naming HIRESYNC_HTTP_PORT, its address and what to do, not a bare EADDRINUSE', async () => {
    const env = await deployment();
    const port = await occupiedPort();
    const result = await runCli(['worker'], { ...env, HIRESYNC_HTTP_PORT: String(port) });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(
      `hiresync: cannot listen on 0.0.0.0:${port} (HIRESYNC_HTTP_PORT=${port}, HIRESYNC_HTTP_HOST=0.0.0.0): the port is in use by another process`,
    );
    expect(result.stderr).toContain(`set HIRESYNC_HTTP_PORT to a free port, or stop what holds it`);
  });

  it('exits 1 naming HIRESYNC_PUBLIC_PORT when the public listener cannot listen', async () => {
    const env = await deployment();
    const port = await occupiedPort();
    const result = await runCli(['worker'], {
      ...env,
      HIRESYNC_HTTP_PORT: '0',
      HIRESYNC_PUBLIC_PORT: String(port),
    });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(
      `cannot listen on 0.0.0.0:${port} (HIRESYNC_PUBLIC_PORT=${port}, HIRESYNC_PUBLIC_HOST=0.0.0.0): the port is in use`,
    );
  });
});
