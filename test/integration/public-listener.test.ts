import type { AddressInfo } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { workerWebhooks } from '../../src/commands/worker-webhooks.js';
import { loadConfig } from '../../src/config/load-config.js';
import { startHttpServer } from '../../src/http/server.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { sendWebhook } from '../../src/simulator/webhook-sender.js';
import { captureLogger } from '../support/capture-logger.js';
import { createTestDatabase } from '../support/databases.js';
import { freePort } from '../support/free-port.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';
import { clearRedisPrefix, PARTNER_APP_ENV, servicesEnv } from '../support/test-env.js';

const { defer, cli } = cleanupAfterEach();

/**
 * A migrated deployment of a partner app with no customer yet (its worker
 * waits for connect links), its public URL on `publicPort`.
 */
async function partnerDeployment(publicPort: number) {
  const database = await createTestDatabase(inject('databaseUrl'));
  const env: Record<string, string> = {
    ...servicesEnv(database.url),
    ...PARTNER_APP_ENV,
    HIRESYNC_BASE_URL: 'http://127.0.0.1:9',
    HIRESYNC_AUTH_URL: 'http://127.0.0.1:9',
    HIRESYNC_AUTHORIZE_URL: 'http://127.0.0.1:9/authorize',
    HIRESYNC_PUBLIC_URL: `http://127.0.0.1:${publicPort}`,
    HIRESYNC_RESOURCES: 'jobs',
  };
  defer(async () => {
    await database.drop();
    await clearRedisPrefix(env);
  });
  expect((await runCli(['migrate'], env)).code).toBe(0);
  return env;
}

/** The status and body of `GET url` (no redirect followed). */
async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, text: await res.text() };
}

describe('the public listener (HIRESYNC_PUBLIC_PORT)', () => {
  it('serves webhooks and connect links only, every other path 404; /metrics, /healthz and the rest stay on HIRESYNC_HTTP_PORT', async () => {
    const publicPort = await freePort();
    const env = await partnerDeployment(publicPort);
    const worker = cli(['worker'], {
      ...env,
      HIRESYNC_HTTP_PORT: '0',
      HIRESYNC_PUBLIC_PORT: String(publicPort),
      LOG_LEVEL: 'info',
    });
    const started = await waitFor(async () =>
      /"worker started"/.test(worker.stdout()) ? worker.stdout() : undefined,
    );
    const privatePort = Number(/"port":(\d+)/.exec(started)?.[1]);
    expect(started).toContain(`"publicPort":${publicPort}`);
    expect(started).toContain('"host":"127.0.0.1"');
    const publicOrigin = `http://127.0.0.1:${publicPort}`;
    const privateOrigin = `http://127.0.0.1:${privatePort}`;

    // Nothing on the public listener says which accounts exist, or how the worker is.
    for (const path of ['/metrics', '/', '/healthz', '/healthz?x', '/nothing']) {
      expect(await get(`${publicOrigin}${path}`), path).toEqual({
        status: 404,
        text: 'not found\n',
      });
    }
    // The webhooks and the connect links are there.
    expect(
      (
        await sendWebhook(`${publicOrigin}/webhooks/acme`, {
          body: { action: 'ping', payload: {} },
        })
      ).status,
    ).toBe(401);
    const invite = await runCli(['accounts', 'invite', 'acme'], env);
    expect(invite.code, invite.stderr).toBe(0);
    const link = /^(https?:\/\/\S+\/connect\/\S+)$/m.exec(invite.stdout)?.[1] as string;
    expect(new URL(link).port).toBe(String(publicPort));
    const opened = await fetch(link, { redirect: 'manual' });
    expect(opened.status).toBe(302);
    expect(opened.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:9\/authorize\?/);
    expect((await get(`${publicOrigin}/oauth/callback`)).status).not.toBe(404);

    // The private listener: metrics and health with their details, and none of the public routes.
    const metrics = await get(`${privateOrigin}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('hiresync_');
    expect(JSON.parse((await get(`${privateOrigin}/healthz`)).text)).toMatchObject({
      postgres: 'ok',
      redis: 'ok',
    });
    expect((await get(link.replace(publicOrigin, privateOrigin))).status).toBe(404);
    expect(
      (
        await sendWebhook(`${privateOrigin}/webhooks/acme`, {
          body: { action: 'ping', payload: {} },
        })
      ).status,
    ).toBe(404);
  });

  it('binds HIRESYNC_HTTP_HOST, loopback by default, and HIRESYNC_PUBLIC_HOST, every address by default', async () => {
    const database = await createTestDatabase(inject('databaseUrl'));
    const env = {
      ...servicesEnv(database.url),
      HIRESYNC_API_KEY: 'key-0123456789',
      HIRESYNC_BASE_URL: 'http://127.0.0.1:9',
      HIRESYNC_HTTP_PORT: '0',
      HIRESYNC_PUBLIC_PORT: '0',
    };
    defer(async () => {
      await database.drop();
      await clearRedisPrefix(env);
    });
    const config = loadConfig(env, RESOURCE_NAMES);
    const log = captureLogger('warn');
    const app = createApp(config, log.logger, { defaultMetrics: false });
    defer(() => app.close());
    const webhooks = workerWebhooks(app, log.logger);
    defer(() => webhooks.close({ force: false, deadline: Number.POSITIVE_INFINITY }));
    const http = await startHttpServer({
      port: config.listeners.http.port,
      host: config.listeners.http.host,
      publicListener: config.listeners.public,
      db: app.db,
      redis: app.redis,
      metrics: app.metrics,
      routes: [webhooks.route],
    });
    defer(() => http.close());
    expect((http.server.address() as AddressInfo).address).toBe('127.0.0.1');
    expect(http.publicServer?.address()).toMatchObject({ address: '0.0.0.0' });
    expect(http.publicPort).not.toBe(http.port);
  });
});
