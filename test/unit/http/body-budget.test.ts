import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyBudget } from '../../../src/http/body-budget.js';
import { type WebhookRoutesOptions, webhookRoutes } from '../../../src/http/webhook-routes.js';
import { Secret } from '../../../src/secret.js';
import { sendWebhook } from '../../../src/simulator/webhook-sender.js';
import { captureLogger } from '../../support/capture-logger.js';

const SECRET = 'acme webhook secret 0123456789';
const JOB_UPDATED = { action: 'job_updated', payload: { job: { id: 1 } } };

describe('BodyBudget', () => {
  it('gives at most maxInflight slots, then none until one is released', () => {
    const budget = new BodyBudget({ maxInflight: 2, maxBytes: 100 });
    const a = budget.enter();
    const b = budget.enter();
    expect([a, b].every(Boolean)).toBe(true);
    expect(budget.enter()).toBeUndefined();
    a?.release();
    expect(budget.enter()).toBeDefined();
    expect(budget.inflight).toBe(2);
    expect(budget.peakInflight).toBe(2);
  });

  it('lets the slots hold at most maxBytes in all: a take beyond it takes nothing', () => {
    const budget = new BodyBudget({ maxInflight: 3, maxBytes: 100 });
    const a = budget.enter();
    const b = budget.enter();
    expect(a?.take(60)).toBe(true);
    expect(b?.take(41)).toBe(false);
    expect(budget.bytes).toBe(60);
    expect(b?.take(40)).toBe(true);
    expect(budget.bytes).toBe(100);
    expect(a?.take(1)).toBe(false);
    expect(budget.peakBytes).toBe(100);
  });

  it('gives back every byte and the slot on release, once however often it is called', () => {
    const budget = new BodyBudget({ maxInflight: 2, maxBytes: 100 });
    const a = budget.enter();
    const b = budget.enter();
    a?.take(30);
    a?.take(20);
    b?.take(10);
    a?.release();
    a?.release();
    expect({ bytes: budget.bytes, inflight: budget.inflight }).toEqual({ bytes: 10, inflight: 1 });
    expect(a?.take(1)).toBe(false);
    b?.release();
    expect({ bytes: budget.bytes, inflight: budget.inflight }).toEqual({ bytes: 0, inflight: 0 });
    expect(budget.peakBytes).toBe(60);
  });
});

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** The webhook route of account `acme` on a real server, reading within `budget`. */
async function start(budget: BodyBudget, overrides: Partial<WebhookRoutesOptions> = {}) {
  const route = webhookRoutes({
    publicUrl: undefined,
    accountOf: async (name) =>
      name === 'acme' ? { secret: new Secret(SECRET), resources: ['jobs'], runs: true } : undefined,
    ledger: { claim: async () => true, release: async () => undefined },
    queueDeletion: async () => undefined,
    queueRun: async () => undefined,
    logger: captureLogger('fatal').logger,
    budget,
    ...overrides,
  });
  server = createServer((req, res) => {
    void route(req, res);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * A chunked POST (no Content-Length) of `chunks` to /webhooks/acme, then
 * the request ended, or destroyed (`abort`), or left open (`stall`).
 */
function chunked(
  port: number,
  chunks: Buffer[],
  then: 'end' | 'abort' | 'stall',
  reading: () => boolean = () => true,
) {
  return new Promise<{ status: number; retryAfter: string | undefined } | 'aborted'>((resolve) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/webhooks/acme',
      method: 'POST',
      agent: false,
    });
    req.on('response', (res) => {
      res.resume();
      const retryAfter = res.headers['retry-after'] as string | undefined;
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter }));
    });
    req.on('error', () => resolve('aborted'));
    for (const chunk of chunks) req.write(chunk);
    if (then === 'end') req.end();
    if (then === 'abort') void until(reading).then(() => req.destroy());
  });
}

/** Resolves once `check` holds (polled every 5 ms, at most 5 s). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('the webhook endpoint within its budget', () => {
  it('answers 503 with Retry-After to a chunked body that passes the bytes left, and keeps none of it', async () => {
    const budget = new BodyBudget({ maxInflight: 4, maxBytes: 1000 });
    const held = budget.enter();
    held?.take(900);
    const port = await start(budget);
    const answer = await chunked(port, [Buffer.alloc(50, 'x'), Buffer.alloc(100, 'x')], 'end');
    expect(answer).toEqual({ status: 503, retryAfter: '5' });
    expect(budget.bytes).toBe(900);
    held?.release();
  });

  it('answers 503 with Retry-After when every slot is taken, reading nothing of the body', async () => {
    const budget = new BodyBudget({ maxInflight: 1, maxBytes: 1 << 20 });
    const held = budget.enter();
    const port = await start(budget);
    const answer = await sendWebhook(`http://127.0.0.1:${port}/webhooks/acme`, {
      body: JOB_UPDATED,
      secret: SECRET,
    });
    expect(answer.status).toBe(503);
    expect(budget.peakBytes).toBe(0);
    held?.release();
  });

  it('gives back the slot and the bytes on every way out: 200, 400, 401, 413, 408, an abort, a failed account lookup', async () => {
    const budget = new BodyBudget({ maxInflight: 2, maxBytes: 4096 });
    const idle = () => ({ bytes: budget.bytes, inflight: budget.inflight });
    let lookupFails = false;
    const port = await start(budget, {
      maxBodyBytes: 2048,
      readTimeoutMs: 200,
      accountOf: async (name) => {
        if (lookupFails) throw new Error('Postgres is away');
        return name === 'acme'
          ? { secret: new Secret(SECRET), resources: ['jobs'], runs: true }
          : undefined;
      },
    });
    const url = `http://127.0.0.1:${port}/webhooks/acme`;
    const statuses: (number | string)[] = [];
    const send = async (delivery: Parameters<typeof sendWebhook>[1]) => {
      statuses.push((await sendWebhook(url, delivery)).status);
      expect(idle()).toEqual({ bytes: 0, inflight: 0 });
    };
    await send({ body: JOB_UPDATED, secret: SECRET });
    await send({ body: 'not json', secret: SECRET });
    await send({ body: JOB_UPDATED, secret: 'not the secret' });
    await send({ body: Buffer.alloc(3000, 'x'), secret: SECRET });
    lookupFails = true;
    await send({ body: JOB_UPDATED, secret: SECRET });
    lookupFails = false;
    for (const then of ['end', 'stall', 'abort'] as const) {
      const chunks = then === 'end' ? [Buffer.alloc(1500), Buffer.alloc(1500)] : [Buffer.alloc(10)];
      const answer = await chunked(port, chunks, then, () => budget.bytes > 0);
      statuses.push(typeof answer === 'string' ? answer : answer.status);
      // The server learns of the abort a little after the client.
      await until(() => budget.inflight === 0);
      expect(idle()).toEqual({ bytes: 0, inflight: 0 });
    }
    expect(statuses).toEqual([200, 400, 401, 413, 503, 413, 408, 'aborted']);
    expect(budget.peakBytes).toBeLessThanOrEqual(4096);
  });
});
