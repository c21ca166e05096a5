import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type App, createApp } from '../../src/app.js';
import { type WorkerWebhooks, workerWebhooks } from '../../src/commands/worker-webhooks.js';
import { loadConfig } from '../../src/config/load-config.js';
import { type HttpServers, startHttpServer } from '../../src/http/server.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { sendWebhook, webhookSignature } from '../../src/simulator/webhook-sender.js';
import { captureLogger } from '../support/capture-logger.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { waitFor } from '../support/lifecycle.js';
import { clearRedisPrefix, servicesEnv } from '../support/test-env.js';

const SECRET = 'default-webhook-secret-0123456789';
const MAX_INFLIGHT = 4;
const MAX_BUFFERED = 2 * 1024 * 1024;

let database: TestDatabase;
let env: Record<string, string>;
let app: App;
let webhooks: WorkerWebhooks;
let http: HttpServers;
let log: ReturnType<typeof captureLogger>;

beforeAll(async () => {
  database = await createTestDatabase(inject('databaseUrl'));
  env = {
    ...servicesEnv(database.url),
    HIRESYNC_API_KEY: 'key-0123456789',
    HIRESYNC_BASE_URL: 'http://127.0.0.1:9',
    HIRESYNC_RESOURCES: 'jobs',
    HIRESYNC_WEBHOOK_SECRET: SECRET,
    HIRESYNC_WEBHOOK_MAX_INFLIGHT: String(MAX_INFLIGHT),
    HIRESYNC_WEBHOOK_MAX_BUFFERED_BYTES: '2MiB',
  };
  const config = loadConfig(env, RESOURCE_NAMES);
  log = captureLogger('warn');
  app = createApp(config, log.logger, { defaultMetrics: false });
  webhooks = workerWebhooks(app, log.logger);
  http = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    db: app.db,
    redis: app.redis,
    metrics: app.metrics,
    routes: [webhooks.route],
  });
});

afterAll(async () => {
  await http?.close();
  await webhooks?.close({ force: false, deadline: Number.POSITIVE_INFINITY });
  await app?.close();
  await database?.drop();
  if (env) await clearRedisPrefix(env);
});

/** The deliveries refused for want of room so far (logged once each). */
const busyRefusals = () => log.lines().filter((l) => l.includes('"refused":"busy"')).length;

/**
 * A POST of `body` to `/webhooks/<account>` whose first half is sent now and
 * the rest when `finish` is called: the answer, whenever it comes (an answer
 * before the body is all sent is the answer, whatever becomes of the rest).
 */
function halfSent(account: string, body: Buffer, signature: string) {
  const req = request({
    host: '127.0.0.1',
    port: http.port,
    path: `/webhooks/${account}`,
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': body.length, signature },
  });
  const answer = new Promise<{ status: number; retryAfter: string | undefined }>(
    (resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'] as string | undefined,
          }),
        );
      });
      req.on('error', (error) => {
        if (!req.destroyed || !req.writableFinished) reject(error);
      });
    },
  );
  const half = Math.floor(body.length / 2);
  req.write(body.subarray(0, half));
  return {
    answer,
    finish: () => req.end(body.subarray(half)),
    abort: () => req.destroy(),
  };
}

/** A body of `size` bytes that is an event, with a signature no secret made. */
function forged(size: number): { body: Buffer; signature: string } {
  const text = JSON.stringify({ action: 'job_deleted', payload: { job: { id: 1 } }, pad: '' });
  const body = Buffer.from(text.replace('"pad":""', `"pad":"${'x'.repeat(size - text.length)}"`));
  return { body, signature: webhookSignature(body, 'not the secret') };
}

describe('webhook bodies not yet authenticated', () => {
  it('a burst of near-1 MiB forged deliveries beyond the bound: some 503 with Retry-After, the rest 401; the bytes held never pass the bound and return to 0; a signed delivery is then accepted', async () => {
    const n = 12;
    const before = busyRefusals();
    const { body, signature } = forged(1_000_000);
    const senders = Array.from({ length: n }, () => halfSent('default', body, signature));
    // Every delivery has been taken up (its first half in) or refused before any is finished.
    await waitFor(async () => webhooks.budget.inflight + (busyRefusals() - before) === n);
    expect(webhooks.budget.bytes).toBeLessThanOrEqual(MAX_BUFFERED);
    for (const sender of senders) sender.finish();
    const answers = await Promise.all(senders.map((s) => s.answer));
    const refused = answers.filter((a) => a.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((a) => Number(a.retryAfter) > 0)).toBe(true);
    expect(answers.filter((a) => a.status !== 503).map((a) => a.status)).toEqual(
      Array(n - refused.length).fill(401),
    );
    expect(webhooks.budget.peakBytes).toBeLessThanOrEqual(MAX_BUFFERED);
    expect(webhooks.budget.peakInflight).toBeLessThanOrEqual(MAX_INFLIGHT);
    expect({ bytes: webhooks.budget.bytes, inflight: webhooks.budget.inflight }).toEqual({
      bytes: 0,
      inflight: 0,
    });

    const signed = await sendWebhook(`http://127.0.0.1:${http.port}/webhooks/default`, {
      body: { action: 'job_updated', payload: { job: { id: 1 } } },
      secret: SECRET,
    });
    expect(signed.status).toBe(200);
  });

  it('more small forged deliveries at once than HIRESYNC_WEBHOOK_MAX_INFLIGHT: the excess is refused (503), and every slot is given back', async () => {
    const n = MAX_INFLIGHT + 6;
    const before = busyRefusals();
    const { body, signature } = forged(2000);
    const senders = Array.from({ length: n }, () => halfSent('default', body, signature));
    await waitFor(async () => webhooks.budget.inflight + (busyRefusals() - before) === n);
    expect(webhooks.budget.inflight).toBe(MAX_INFLIGHT);
    for (const sender of senders) sender.finish();
    const statuses = (await Promise.all(senders.map((s) => s.answer))).map((a) => a.status);
    expect(statuses.filter((s) => s === 503)).toHaveLength(n - MAX_INFLIGHT);
    expect(statuses.filter((s) => s === 401)).toHaveLength(MAX_INFLIGHT);
    expect(webhooks.budget.inflight).toBe(0);
  });

  it('a sender that goes away mid-body gives back its bytes and its slot', async () => {
    const { body, signature } = forged(1_000_000);
    const sender = halfSent('default', body, signature);
    sender.answer.catch(() => undefined);
    await waitFor(async () => webhooks.budget.inflight === 1);
    expect(webhooks.budget.bytes).toBeGreaterThan(0);
    sender.abort();
    await waitFor(async () => webhooks.budget.inflight === 0);
    expect(webhooks.budget.bytes).toBe(0);
  });
});
