import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type WebhookAccount,
  type WebhookDeleteWork,
  type WebhookRoutesOptions,
  webhookRoutes,
} from '../../../src/http/webhook-routes.js';
import { Secret } from '../../../src/secret.js';
import { sendWebhook } from '../../../src/simulator/webhook-sender.js';
import { captureLogger } from '../../support/capture-logger.js';

const SECRET = 'acme webhook secret 0123456789';
const JOB_DELETED = { action: 'job_deleted', payload: { job: { id: 209256, name: 'Ops' } } };
const JOB_UPDATED = { action: 'job_updated', payload: { job: { id: 209256 } } };

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** The route on a real HTTP server, with ports that record what they are asked. */
async function start(overrides: Partial<WebhookRoutesOptions> = {}) {
  const claimed = new Set<string>();
  const calls = {
    claims: 0,
    releases: [] as string[],
    deletions: [] as WebhookDeleteWork[],
    runs: [] as string[],
  };
  const accounts: Record<string, WebhookAccount> = {
    acme: { secret: new Secret(SECRET), resources: ['jobs', 'job_posts'], runs: true },
    quiet: { secret: undefined, resources: ['jobs'], runs: true },
    paused: { secret: new Secret(SECRET), resources: ['jobs'], runs: false },
  };
  const log = captureLogger('info');
  const route = webhookRoutes({
    publicUrl: 'https://hiresync.example.com/sync/',
    accountOf: async (name) => accounts[name],
    ledger: {
      claim: async (account, eventId) => {
        calls.claims += 1;
        const key = `${account}/${eventId}`;
        if (claimed.has(key)) return false;
        claimed.add(key);
        return true;
      },
      release: async (account, eventId) => {
        calls.releases.push(eventId);
        claimed.delete(`${account}/${eventId}`);
      },
    },
    queueDeletion: async (work) => {
      calls.deletions.push(work);
    },
    queueRun: async (account, resource) => {
      calls.runs.push(`${account}/${resource}`);
    },
    logger: log.logger,
    ...overrides,
  });
  server = createServer((req, res) => {
    void route(req, res).then((answered) => {
      if (!answered) {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: (path: string) => `http://127.0.0.1:${port}${path}`, calls, claimed, log };
}

describe('the webhook endpoint', () => {
  it('queues a delete event signed with the secret and answers 200, under the public URL path or without it', async () => {
    const h = await start();
    const answer = await sendWebhook(h.url('/sync/webhooks/acme'), {
      body: JOB_DELETED,
      secret: SECRET,
      eventId: 'e1',
    });
    expect(answer).toMatchObject({ status: 200, text: 'queued\n' });
    expect(h.calls.deletions).toEqual([
      {
        account: 'acme',
        action: 'job_deleted',
        eventId: 'e1',
        deletions: [{ resource: 'jobs', ids: ['209256'] }],
      },
    ]);
    expect(
      (await sendWebhook(h.url('/webhooks/acme'), { body: JOB_UPDATED, secret: SECRET })).status,
    ).toBe(200);
    expect(h.calls.runs).toEqual(['acme/jobs']);
    const logged = h.log.text();
    expect(logged).toContain('"outcome":"queued"');
    expect(logged).toContain('"eventId":"e1"');
    expect(logged).not.toContain(SECRET);
    expect(logged).not.toContain('"name":"Ops"');
  });

  it('refuses a bad signature, none, an unknown account and one without a secret alike (401), keeping nothing', async () => {
    const h = await start();
    const answers = await Promise.all([
      sendWebhook(h.url('/webhooks/acme'), { body: JOB_DELETED, secret: 'not the secret' }),
      sendWebhook(h.url('/webhooks/acme'), { body: JOB_DELETED }),
      sendWebhook(h.url('/webhooks/acme'), {
        body: JOB_DELETED,
        secret: SECRET,
        signature: 'sha256 00',
      }),
      sendWebhook(h.url('/webhooks/nobody'), { body: JOB_DELETED, secret: SECRET }),
      sendWebhook(h.url('/webhooks/quiet'), { body: JOB_DELETED, secret: SECRET }),
      sendWebhook(h.url('/webhooks/..%2Fetc'), { body: JOB_DELETED, secret: SECRET }),
    ]);
    expect(answers.map((a) => [a.status, a.text])).toEqual(
      answers.map(() => [401, 'signature not valid for this endpoint\n']),
    );
    expect(h.calls).toMatchObject({ claims: 0, deletions: [], runs: [] });
    expect(h.log.text()).toContain('"refused":"bad signature"');
    expect(h.log.text()).toContain('"refused":"unknown account"');
    expect(h.log.text()).toContain('"refused":"no webhook secret"');
  });

  it('acknowledges a repeated event id and does nothing more', async () => {
    const h = await start();
    const first = await sendWebhook(h.url('/webhooks/acme'), {
      body: JOB_DELETED,
      secret: SECRET,
      eventId: 'same',
    });
    const again = await sendWebhook(h.url('/webhooks/acme'), {
      body: JOB_DELETED,
      secret: SECRET,
      eventId: 'same',
    });
    expect([first.text, again.text]).toEqual(['queued\n', 'duplicate event: ignored\n']);
    expect(again.status).toBe(200);
    expect(h.calls.deletions).toHaveLength(1);
  });

  it('refuses a body above the bound with 413, before reading it, and keeps nothing', async () => {
    const h = await start({ maxBodyBytes: 1024 });
    const big = Buffer.alloc(64 * 1024, 'x');
    const answer = await sendWebhook(h.url('/webhooks/acme'), { body: big, secret: SECRET });
    expect(answer.status).toBe(413);
    expect(h.calls).toMatchObject({ claims: 0, deletions: [] });
  });

  it('gives the event id back and answers 503 when the work cannot be queued, so a retry acts', async () => {
    let fail = true;
    const h = await start({
      queueDeletion: async () => {
        if (fail) throw new Error('Redis is away');
      },
    });
    const first = await sendWebhook(h.url('/webhooks/acme'), {
      body: JOB_DELETED,
      secret: SECRET,
      eventId: 'e9',
    });
    expect(first.status).toBe(503);
    await expect.poll(() => h.calls.releases).toEqual(['e9']);
    fail = false;
    const retry = await sendWebhook(h.url('/webhooks/acme'), {
      body: JOB_DELETED,
      secret: SECRET,
      eventId: 'e9',
    });
    expect(retry).toMatchObject({ status: 200, text: 'queued\n' });
  });

  it('answers 503 when queueing outlasts its time, and keeps the claim if the work is queued late', async () => {
    let queued!: () => void;
    const h = await start({
      actTimeoutMs: 50,
      queueDeletion: () => new Promise<void>((resolve) => (queued = resolve)),
    });
    const first = await sendWebhook(h.url('/webhooks/acme'), {
      body: JOB_DELETED,
      secret: SECRET,
      eventId: 'slow',
    });
    expect(first.status).toBe(503);
    queued();
    const retry = await sendWebhook(h.url('/webhooks/acme'), {
      body: JOB_DELETED,
      secret: SECRET,
      eventId: 'slow',
    });
    expect(retry.text).toBe('duplicate event: ignored\n');
    expect(h.calls.releases).toEqual([]);
  });

  it('answers 400 to a signed body that is not an event, and 200 to events that ask nothing of the account', async () => {
    const h = await start();
    const notJson = await sendWebhook(h.url('/webhooks/acme'), { body: 'hello', secret: SECRET });
    expect(notJson).toMatchObject({
      status: 400,
      text: 'not a webhook event: the body is not JSON\n',
    });
    const noId = await sendWebhook(h.url('/webhooks/acme'), {
      body: { action: 'job_deleted', payload: { job: {} } },
      secret: SECRET,
    });
    expect(noId.status).toBe(400);
    const ping = await sendWebhook(h.url('/webhooks/acme'), {
      body: { action: 'ping', payload: {} },
      secret: SECRET,
    });
    expect(ping).toMatchObject({
      status: 200,
      text: 'nothing to do: ping names no resource the account syncs\n',
    });
    const candidate = await sendWebhook(h.url('/webhooks/acme'), {
      body: {
        action: 'delete_candidate',
        payload: { person: { id: 1, deleted_application_ids: [2] } },
      },
      secret: SECRET,
    });
    expect(candidate.text).toBe(
      'nothing to do: the account does not sync candidates or applications\n',
    );
    const paused = await sendWebhook(h.url('/webhooks/paused'), {
      body: JOB_UPDATED,
      secret: SECRET,
    });
    expect(paused.text).toBe('nothing to do: the account runs nothing now\n');
    expect(h.calls).toMatchObject({ claims: 0, deletions: [], runs: [] });
  });

  it('takes POST only, and leaves other paths to the next route', async () => {
    const h = await start();
    const get = await fetch(h.url('/webhooks/acme'));
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await fetch(h.url('/healthz'))).status).toBe(404);
  });
});
