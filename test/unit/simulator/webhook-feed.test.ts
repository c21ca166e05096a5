import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { verifySignature } from '../../../src/http/webhook-signature.js';
import { Dataset } from '../../../src/simulator/dataset.js';
import { deleteCandidate } from '../../../src/simulator/webhook-events.js';
import { startWebhookFeed } from '../../../src/simulator/webhook-feed.js';
import { waitFor } from '../../support/lifecycle.js';

const SECRET = 'simulated webhook secret';

let server: Server | undefined;
let stop: (() => void) | undefined;
afterEach(async () => {
  stop?.();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
});

describe("the simulator's webhooks", () => {
  it('delete_candidate removes the candidate and its applications and lists them, or none after a merge', () => {
    const dataset = new Dataset({ counts: { candidates: 10, applications: 15 } });
    const event = deleteCandidate(dataset, 4);
    const person = (event.payload as { person: { id: number; deleted_application_ids: number[] } })
      .person;
    expect(person.id).toBe(dataset.idOf('candidates', 4));
    expect(dataset.isPresent('candidates', 4)).toBe(false);
    expect(person.deleted_application_ids).toEqual([
      dataset.idOf('applications', 6),
      dataset.idOf('applications', 7),
    ]);
    expect(dataset.isPresent('applications', 6)).toBe(false);
    const merged = deleteCandidate(dataset, 5, { merged: true });
    expect(merged.payload).toMatchObject({ person: { deleted_application_ids: [] } });
    expect(dataset.isPresent('applications', 8)).toBe(true);
  });

  it('a feed changes the data and delivers each change, signed, in turn: deletes and updates', async () => {
    const received: Array<{ action: string; signed: boolean; eventId: unknown }> = [];
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        received.push({
          action: (JSON.parse(body.toString()) as { action: string }).action,
          signed: verifySignature(body, req.headers.signature, SECRET),
          eventId: req.headers['greenhouse-event-id'],
        });
        res.end('queued\n');
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const dataset = new Dataset({
      counts: { jobs: 5, job_posts: 5, candidates: 5, applications: 8 },
    });
    const lines: string[] = [];
    stop = startWebhookFeed({
      dataset,
      url: `http://127.0.0.1:${port}/webhooks/default`,
      secret: SECRET,
      everyMs: 5,
      onDelivery: (line) => lines.push(line),
    }).stop;
    await waitFor(async () => received.length >= 6);
    expect(received.slice(0, 6).map((r) => r.action)).toEqual([
      'delete_candidate',
      'job_updated',
      'job_post_deleted',
      'update_candidate',
      'job_deleted',
      'application_updated',
    ]);
    expect(received.every((r) => r.signed && typeof r.eventId === 'string')).toBe(true);
    expect(dataset.isPresent('candidates', 4)).toBe(false);
    expect(dataset.isPresent('job_posts', 4)).toBe(false);
    expect(dataset.isPresent('jobs', 4)).toBe(false);
    expect(lines[0]).toBe('webhook delete_candidate (candidates index 4) -> 200 queued');
  });
});
