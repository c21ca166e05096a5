import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKey } from '../../src/account-name.js';
import { main } from '../../src/main.js';
import {
  deleteCandidate,
  deleteJob,
  deleteJobPost,
  updateRecord,
} from '../../src/simulator/webhook-events.js';
import {
  sendWebhook,
  type WebhookDelivery,
  type WebhookEventBody,
} from '../../src/simulator/webhook-sender.js';
import { runLockKey } from '../../src/warehouse/lock-keys.js';
import { type AccountsHarness, startAccountsHarness } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { freePort } from '../support/free-port.js';
import { waitFor } from '../support/lifecycle.js';
import { type CliProcess, spawnCli } from '../support/run-cli.js';

const RESOURCES = ['jobs', 'job_posts', 'candidates', 'applications'] as const;
const ACCOUNTS = ['default', 'acme', 'beta'] as const;
const DEFAULT_SECRET = 'default-webhook-secret-0123456789';
const ACME_SECRET = 'acme-webhook-secret-0123456789';

let h: AccountsHarness;
let worker: CliProcess;
let redis: Redis;
let webhookQueue: Queue;
let syncQueue: Queue;
let base: string;

/** The shared table of an account's relation (`jobs`, `applications_data`, …). */
const shared = (table: string) => sql.table(`hiresync.data_${table}`);

/** The table of a resource's rows: `NAME_data` for a list resource. */
const tableOf = (resource: string) =>
  resource === 'jobs' || resource === 'job_posts' ? resource : `${resource}_data`;

interface Run {
  account: string;
  id: string;
  resource: string;
  mode: string;
  outcome: string;
}

/** Every run of every account, finished or not. */
async function runs(): Promise<Run[]> {
  const all: Run[] = [];
  for (const account of ACCOUNTS) {
    const { rows } = await sql<Omit<Run, 'account'>>`
      select id, resource, mode, outcome from hiresync.data_sync_runs
      where account = ${account} order by id`.execute(h.database.db);
    all.push(...rows.map((r) => ({ account, ...r })));
  }
  return all;
}

/** When the row `id` of `resource` was deleted (null: live; undefined: no row). */
async function deletedAt(
  account: string,
  resource: string,
  id: number,
): Promise<string | null | undefined> {
  const { rows } = await sql<{ deleted_at: string | null }>`
    select deleted_at from ${shared(tableOf(resource))} where account = ${account} and id = ${id}`.execute(
    h.database.db,
  );
  return rows[0]?.deleted_at;
}

/** Whether the row `id` of `resource` is there and soft-deleted: a missing row is not. */
async function isDeleted(account: string, resource: string, id: number): Promise<boolean> {
  const at = await deletedAt(account, resource, id);
  return at !== null && at !== undefined;
}

/** Every history version of `id`, oldest first. */
async function versionsOf(account: string, resource: string, id: number) {
  const { rows } = await sql<{ valid_to: string | null; deleted: boolean; run_id: string | null }>`
    select valid_to, deleted, run_id from ${shared(`${resource}_history`)}
    where account = ${account} and id = ${id} order by valid_from`.execute(h.database.db);
  return rows;
}

/** Delivers `event` to `account`'s endpoint, signed with `secret` unless `delivery` says otherwise. */
function deliver(
  account: string,
  event: WebhookEventBody | Buffer,
  delivery: Partial<WebhookDelivery> = {},
) {
  const secret = account === 'default' ? DEFAULT_SECRET : ACME_SECRET;
  return sendWebhook(`${base}/webhooks/${account}`, { body: event, secret, ...delivery });
}

/** The event-id keys the deployment holds in Redis. */
const eventKeys = () => redis.keys(`${h.env.HIRESYNC_REDIS_PREFIX}:webhook-event:*`);

/** Jobs of the webhook queue, in any state. */
const webhookJobs = async () =>
  Object.values(await webhookQueue.getJobCounts()).reduce((a, b) => a + b, 0);

/** Waits until no run is queued or running (the schedulers' next runs wait delayed, days away). */
async function settled(): Promise<void> {
  await waitFor(async () => {
    const counts = await syncQueue.getJobCounts('waiting', 'active', 'prioritized');
    const pending = Object.values(counts).reduce((a, b) => a + b, 0);
    const open = (await runs()).filter((r) => r.outcome === 'running');
    return pending === 0 && open.length === 0;
  }, 60_000);
}

beforeAll(async () => {
  h = await startAccountsHarness({
    accounts: ['acme', 'beta'],
    records: 60,
    env: {
      HIRESYNC_RESOURCES: RESOURCES.join(','),
      HIRESYNC_PER_PAGE: '500',
      HIRESYNC_WEBHOOK_SECRET: DEFAULT_SECRET,
      HIRESYNC_UPDATED_FILTER: 'updated_at=gte|{since}',
      // The schedules' first runs sync everything once; the next are days away.
      HIRESYNC_INCREMENTAL_EVERY: '20d',
      HIRESYNC_FULL_CRON: '0 3 1 1 *',
    },
  });
  const io = captureIo(`${ACME_SECRET}\n`);
  expect(await main(['accounts', 'update', 'acme', '--webhook-secret'], h.env, io), io.err()).toBe(
    0,
  );
  redis = new Redis(h.env.REDIS_URL as string, { maxRetriesPerRequest: null });
  const prefix = h.env.HIRESYNC_REDIS_PREFIX;
  webhookQueue = new Queue('webhooks', { connection: redis, prefix });
  syncQueue = new Queue('sync', { connection: redis, prefix });
  const port = await freePort();
  base = `http://127.0.0.1:${port}/hiresync`;
  worker = spawnCli(['worker'], {
    ...h.env,
    HIRESYNC_HTTP_PORT: String(port),
    HIRESYNC_PUBLIC_URL: base,
    LOG_LEVEL: 'info',
  });
  await waitFor(async () => worker.stdout().includes('worker started'), 30_000, 50);
  await waitFor(
    async () => (await runs()).filter((r) => r.outcome === 'succeeded').length >= 12,
    90_000,
    200,
  );
  await settled();
}, 120_000);

afterAll(async () => {
  worker?.child.kill('SIGTERM');
  await worker?.exit;
  await webhookQueue?.close();
  await syncQueue?.close();
  redis?.disconnect();
  await h?.close();
});

describe('webhooks delivered to a running worker', () => {
  it('a delete event signed with the secret soft-deletes the record at once, with its deletion version, and no run', async () => {
    const before = await runs();
    const event = deleteJob(h.sim.dataset, 5);
    const id = (event.payload as { job: { id: number } }).job.id;
    expect(await deletedAt('default', 'jobs', id)).toBeNull();
    const answer = await deliver('default', event);
    expect(answer).toMatchObject({ status: 200, text: 'queued\n' });
    await waitFor(() => isDeleted('default', 'jobs', id));
    const versions = await versionsOf('default', 'jobs', id);
    expect(versions.at(-1)).toMatchObject({ deleted: true, valid_to: null, run_id: null });
    expect(versions.slice(0, -1).every((v) => v.valid_to !== null && !v.deleted)).toBe(true);
    expect(await runs()).toEqual(before);
  });

  it('a bad signature is refused (401) and nothing kept: the same event id delivered right is then applied', async () => {
    const event = deleteJobPost(h.sim.dataset, 7);
    const id = (event.payload as { job_post: { id: number } }).job_post.id;
    const jobsBefore = await webhookJobs();
    const refused = await Promise.all([
      deliver('default', event, { eventId: 'bad-then-good', secret: 'not the secret at all' }),
      deliver('default', event, { eventId: 'bad-then-good', secret: undefined, signature: null }),
    ]);
    expect(refused.map((a) => [a.status, a.text])).toEqual([
      [401, 'signature not valid for this endpoint\n'],
      [401, 'signature not valid for this endpoint\n'],
    ]);
    expect((await eventKeys()).filter((k) => k.endsWith('bad-then-good'))).toEqual([]);
    expect(await webhookJobs()).toBe(jobsBefore);
    expect(await deletedAt('default', 'job_posts', id)).toBeNull();

    expect((await deliver('default', event, { eventId: 'bad-then-good' })).status).toBe(200);
    await waitFor(() => isDeleted('default', 'job_posts', id));
  });

  it('a repeated event id is acknowledged (200) and ignored', async () => {
    const first = deleteJob(h.sim.dataset, 9);
    const second = deleteJob(h.sim.dataset, 10);
    const secondId = (second.payload as { job: { id: number } }).job.id;
    expect((await deliver('default', first, { eventId: 'once' })).text).toBe('queued\n');
    const jobsBefore = await webhookJobs();
    const again = await deliver('default', second, { eventId: 'once' });
    expect(again).toMatchObject({ status: 200, text: 'duplicate event: ignored\n' });
    expect(await webhookJobs()).toBe(jobsBefore);
    const firstId = (first.payload as { job: { id: number } }).job.id;
    await waitFor(() => isDeleted('default', 'jobs', firstId));
    expect(await deletedAt('default', 'jobs', secondId)).toBeNull();
    // The worker's log line travels through its stdout pipe, after its answer.
    const logged = '"eventId":"once","outcome":"duplicate"';
    await waitFor(async () => worker.stdout().includes(logged)).catch(() => undefined);
    expect(worker.stdout()).toContain(logged);
  });

  it('delete_candidate soft-deletes the candidate and the applications it lists, and no other', async () => {
    const event = deleteCandidate(h.sim.dataset, 12);
    const person = (event.payload as { person: { id: number; deleted_application_ids: number[] } })
      .person;
    expect(person.deleted_application_ids.length).toBeGreaterThan(0);
    const liveApplications = async () =>
      (
        await sql`select id from hiresync.data_applications_data
          where account = 'default' and deleted_at is null`.execute(h.database.db)
      ).rows.length;
    const before = await liveApplications();
    expect((await deliver('default', event)).status).toBe(200);
    // The candidate and its applications are two resources, each deleted under
    // its own run lock by a job of its own: either may land first.
    const applied = async () =>
      (await isDeleted('default', 'candidates', person.id)) &&
      (
        await Promise.all(
          person.deleted_application_ids.map((id) => deletedAt('default', 'applications', id)),
        )
      ).every((at) => at !== null && at !== undefined);
    await waitFor(applied);
    for (const id of person.deleted_application_ids) {
      expect(await deletedAt('default', 'applications', id)).not.toBeNull();
      expect(await deletedAt('default', 'applications', id)).toBeDefined();
      expect((await versionsOf('default', 'applications', id)).at(-1)).toMatchObject({
        deleted: true,
      });
    }
    expect(await liveApplications()).toBe(before - person.deleted_application_ids.length);
  });

  it("a registered account's deliveries are checked with its own secret and applied in its schema", async () => {
    const event = deleteJob(h.sim.datasetOf('acme'), 3);
    const id = (event.payload as { job: { id: number } }).job.id;
    const wrong = await deliver('acme', event, { secret: DEFAULT_SECRET });
    expect(wrong.status).toBe(401);
    expect((await deliver('acme', event)).status).toBe(200);
    await waitFor(() => isDeleted('acme', 'jobs', id));
  });

  it('an unknown account, and an account without a webhook secret, are refused alike (401)', async () => {
    const event = deleteJob(h.sim.datasetOf('beta'), 3);
    const answers = await Promise.all([
      deliver('nobody', event),
      deliver('beta', event),
      deliver('beta', event, { secret: DEFAULT_SECRET }),
    ]);
    expect(answers.map((a) => [a.status, a.text])).toEqual(
      answers.map(() => [401, 'signature not valid for this endpoint\n']),
    );
  });

  it('an update event queues exactly one incremental run of its resource, which stores the change', async () => {
    await settled();
    const before = await runs();
    const event = updateRecord(h.sim.dataset, 'jobs', 20);
    const job = (event.payload as { job: { id: number; name: string } }).job;
    expect(job.name).toContain('(rev 1)');
    expect((await deliver('default', event)).text).toBe('queued\n');
    const seen = new Set(before.map((r) => `${r.account}/${r.id}`));
    const added = async () => (await runs()).filter((r) => !seen.has(`${r.account}/${r.id}`));
    await waitFor(async () => (await added()).length > 0);
    await settled();
    expect((await added()).map(({ id: _, ...run }) => run)).toEqual([
      { account: 'default', resource: 'jobs', mode: 'incremental', outcome: 'succeeded' },
    ]);
    const { rows } = await sql<{ name: string }>`
      select data->>'name' as name from hiresync.data_jobs
      where account = 'default' and id = ${job.id}`.execute(h.database.db);
    expect(rows[0]?.name).toBe(job.name);
  });

  it('a body above 1 MiB is refused (413) and nothing is kept', async () => {
    const keys = (await eventKeys()).length;
    const jobs = await webhookJobs();
    const big = Buffer.from(
      JSON.stringify({
        action: 'job_deleted',
        payload: { job: { id: 1, pad: 'x'.repeat(2 ** 21) } },
      }),
    );
    const answer = await deliver('default', big, { eventId: 'too-big' });
    expect(answer.status).toBe(413);
    expect((await eventKeys()).length).toBe(keys);
    expect(await webhookJobs()).toBe(jobs);
  });

  it('a delete arriving while a run of its resource holds the lock is applied once the run ends', async () => {
    const lock = await h.database.db.connection().execute(async (conn) => {
      const key = runLockKey(runKey('default', 'job_posts')).toString();
      await sql`select pg_advisory_lock(${key}::bigint)`.execute(conn);
      const event = deleteJobPost(h.sim.dataset, 15);
      const id = (event.payload as { job_post: { id: number } }).job_post.id;
      expect((await deliver('default', event)).status).toBe(200);
      await waitFor(async () => worker.stdout().includes('waiting for it to end'));
      expect(await deletedAt('default', 'job_posts', id)).toBeNull();
      await sql`select pg_advisory_unlock(${key}::bigint)`.execute(conn);
      return id;
    });
    await waitFor(() => isDeleted('default', 'job_posts', lock), 30_000);
  });

  it('a burst of deliveries (deletes, updates, repeats) is all answered 2xx and every delete applied', async () => {
    const dataset = h.sim.dataset;
    const deliveries: Array<{ event: WebhookEventBody; eventId: string }> = [];
    const deleted: Array<[string, number]> = [];
    for (let i = 0; i < 10; i += 1) {
      const job = deleteJob(dataset, 30 + i);
      const post = deleteJobPost(dataset, 30 + i);
      deleted.push(['jobs', (job.payload as { job: { id: number } }).job.id]);
      deleted.push(['job_posts', (post.payload as { job_post: { id: number } }).job_post.id]);
      deliveries.push({ event: job, eventId: `burst-job-${i}` });
      deliveries.push({ event: post, eventId: `burst-post-${i}` });
      deliveries.push({
        event: updateRecord(dataset, 'candidates', 40 + i),
        eventId: `burst-up-${i}`,
      });
    }
    // Every fifth delivered twice, as the vendor's retries would.
    const all = [...deliveries, ...deliveries.filter((_, i) => i % 5 === 0)];
    const answers = [];
    for (let at = 0; at < all.length; at += 8) {
      answers.push(
        ...(await Promise.all(
          all.slice(at, at + 8).map(({ event, eventId }) => deliver('default', event, { eventId })),
        )),
      );
    }
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(answers.filter((a) => a.text === 'duplicate event: ignored\n')).toHaveLength(
      all.length - deliveries.length,
    );
    await waitFor(async () => {
      for (const [resource, id] of deleted) {
        if (!(await isDeleted('default', resource, id))) return false;
      }
      return true;
    }, 30_000);
    await settled();
    expect(worker.stdout()).not.toContain(DEFAULT_SECRET);
    expect(worker.stdout()).not.toContain(ACME_SECRET);
  });
});
