/**
 * `npm run build && node dist/bench/webhook-burst.js [N] [C]`: a burst of N
 * signed webhook deliveries (default 2,000), C at once (default 32), against
 * a running `hiresync worker`'s endpoint (`POST /webhooks/default`), as the
 * vendor sends them after a bulk change: about 40% delete events
 * (`job_deleted`, `job_post_deleted`, `delete_candidate` with its
 * applications), 45% updates (`job_updated`, `update_candidate`,
 * `application_updated`), and 15% deliveries repeated with the same event id
 * (the vendor's retries). Prints the endpoint's throughput (answers/s),
 * latency (p50, p95, p99, max, from the request's start to the answer's
 * end), the answers by status, and the time until every delete is applied
 * in Postgres (from the burst's start, and after its last answer), with the
 * incremental runs the updates queued.
 *
 * The worker is the built CLI in a process of its own (HIRESYNC_CONCURRENCY
 * 4, LOG_LEVEL warn); the simulator (its data, and the API the worker's
 * first full runs read) runs in this process, before the burst. Needs
 * Postgres and Redis (DATABASE_URL, REDIS_URL; default the local ones).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { ApiSimulator } from '../src/simulator/api-simulator.js';
import type { Dataset } from '../src/simulator/dataset.js';
import {
  deleteCandidate,
  deleteJob,
  deleteJobPost,
  updateRecord,
} from '../src/simulator/webhook-events.js';
import {
  sendWebhook,
  type WebhookAnswer,
  type WebhookEventBody,
} from '../src/simulator/webhook-sender.js';
import { createDatabase } from '../src/warehouse/database.js';
import { migrateAll } from '../src/warehouse/setup/migrate-all.js';
import { clearPrefix, syncEnv } from './end-to-end.js';
import { freePort } from './ports.js';
import { fmt, freshDatabase } from './support.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const SECRET = 'bench-webhook-secret-0123456789';
const RESOURCES = ['jobs', 'job_posts', 'candidates', 'applications'];

/** One delivery of the burst, and what it deletes (table and ids) if it is a delete event. */
interface Delivery {
  event: WebhookEventBody;
  eventId: string;
  deletes: Array<[table: string, id: number]>;
}

/** The burst: deletes, updates and repeats, interleaved as a bulk change sends them. */
function burstOf(dataset: Dataset, n: number): Delivery[] {
  const out: Delivery[] = [];
  const next = { jobs: 0, job_posts: 0, candidates: 0, updates: 0 };
  for (let i = 0; out.length < n; i += 1) {
    const kind = i % 20;
    const eventId = `burst-${i}`;
    let delivery: Delivery;
    if (kind < 3) {
      const event = deleteJob(dataset, next.jobs++);
      const id = (event.payload as { job: { id: number } }).job.id;
      delivery = { event, eventId, deletes: [['jobs', id]] };
    } else if (kind < 6) {
      const event = deleteJobPost(dataset, next.job_posts++);
      const id = (event.payload as { job_post: { id: number } }).job_post.id;
      delivery = { event, eventId, deletes: [['job_posts', id]] };
    } else if (kind < 9) {
      const event = deleteCandidate(dataset, next.candidates++);
      const person = (
        event.payload as { person: { id: number; deleted_application_ids: number[] } }
      ).person;
      delivery = {
        event,
        eventId,
        deletes: [
          ['candidates_data', person.id],
          ...person.deleted_application_ids.map((id): [string, number] => [
            'applications_data',
            id,
          ]),
        ],
      };
    } else {
      const resource = ['jobs', 'candidates', 'applications'][kind % 3] as string;
      // Updates touch records the deletes do not reach (the top quarter of each list).
      const size = dataset.size(resource);
      const index = size - 1 - (next.updates++ % Math.floor(size / 4));
      delivery = { event: updateRecord(dataset, resource, index), eventId, deletes: [] };
    }
    out.push(delivery);
    // Every seventh one again a little later, as the vendor's retry would come.
    if (i % 7 === 3 && out.length < n) out.push({ ...delivery, deletes: [] });
  }
  return out;
}

function percentile(sorted: readonly number[], p: number): number {
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

async function waitForWorker(child: ChildProcess, port: number): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the worker exited (${child.exitCode})`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return;
    await sleep(100);
  }
}

const n = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 32);
const records = Math.max(100, Math.ceil(n / 2));
const sim = await ApiSimulator.start({
  clientSecrets: ['demo-secret'],
  dataset: {
    counts: { jobs: records, job_posts: records, candidates: records, applications: records },
  },
});
const target = await freshDatabase('webhooks', { migrate: false });
const db = createDatabase(target.url);
await migrateAll(db);
const port = await freePort();
const env = syncEnv(sim.url, target.url, {
  HIRESYNC_RESOURCES: RESOURCES.join(','),
  HIRESYNC_PER_PAGE: '500',
  HIRESYNC_WEBHOOK_SECRET: SECRET,
  HIRESYNC_UPDATED_FILTER: 'updated_at=gte|{since}',
  HIRESYNC_INCREMENTAL_EVERY: '20d',
  HIRESYNC_FULL_CRON: '0 3 1 1 *',
  HIRESYNC_HTTP_PORT: String(port),
  LOG_LEVEL: 'warn',
});
const worker = spawn(process.execPath, [CLI, 'worker'], {
  env: { PATH: process.env.PATH, ...env },
  stdio: ['ignore', 'ignore', 'inherit'],
});
try {
  await waitForWorker(worker, port);
  // The schedules' first runs: a full sync of each resource, before the burst.
  for (;;) {
    const { rows } = await sql<{ done: string; open: string }>`
      select count(*) filter (where outcome = 'succeeded') as done,
        count(*) filter (where outcome = 'running') as open from sync_runs`.execute(db);
    if (Number(rows[0]?.done) >= RESOURCES.length && Number(rows[0]?.open) === 0) break;
    await sleep(100);
  }
  const { rows: before } = await sql<{
    runs: string;
  }>`select count(*) as runs from sync_runs`.execute(db);
  const burst = burstOf(sim.dataset, n);
  const deletes = burst.flatMap((d) => d.deletes);
  const url = `http://127.0.0.1:${port}/webhooks/default`;
  const answers: WebhookAnswer[] = [];
  const started = performance.now();
  let at = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = at++; i < burst.length; i = at++) {
        const { event, eventId } = burst[i] as Delivery;
        answers.push(await sendWebhook(url, { body: event, secret: SECRET, eventId }));
      }
    }),
  );
  const answered = performance.now();
  const byTable = new Map<string, number[]>();
  for (const [table, id] of deletes) byTable.set(table, [...(byTable.get(table) ?? []), id]);
  for (;;) {
    let left = 0;
    for (const [table, ids] of byTable) {
      const { rows } = await sql<{ left: string }>`
        select count(*) as left from ${sql.table(table)}
        where id = any(${ids.map(String)}::bigint[]) and deleted_at is null`.execute(db);
      left += Number(rows[0]?.left);
    }
    if (left === 0) break;
    await sleep(20);
  }
  const applied = performance.now();
  // The runs the updates queued (one at a time per resource), once they are done.
  for (;;) {
    const { rows } = await sql<{ open: string }>`
      select count(*) as open from sync_runs where outcome = 'running'`.execute(db);
    if (Number(rows[0]?.open) === 0) break;
    await sleep(100);
  }
  const { rows: after } = await sql<{
    runs: string;
  }>`select count(*) as runs from sync_runs`.execute(db);
  const latencies = answers.map((a) => a.ms).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const seconds = (answered - started) / 1000;
  const result = {
    deliveries: burst.length,
    concurrency,
    answersPerS: Math.round(burst.length / seconds),
    latencyMs: {
      p50: +percentile(latencies, 50).toFixed(1),
      p95: +percentile(latencies, 95).toFixed(1),
      p99: +percentile(latencies, 99).toFixed(1),
      max: +(latencies.at(-1) ?? Number.NaN).toFixed(1),
    },
    statuses,
    duplicates: answers.filter((a) => a.text.startsWith('duplicate')).length,
    rowsDeleted: deletes.length,
    allDeletesAppliedS: +((applied - started) / 1000).toFixed(2),
    afterLastAnswerS: +((applied - answered) / 1000).toFixed(2),
    runsQueuedByUpdates: Number(after[0]?.runs) - Number(before[0]?.runs),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.stderr.write(
    `webhook burst: ${fmt(result.deliveries)} deliveries, ${concurrency} at once: ${fmt(result.answersPerS)} answers/s; latency p50 ${result.latencyMs.p50} ms, p95 ${result.latencyMs.p95} ms, p99 ${result.latencyMs.p99} ms, max ${result.latencyMs.max} ms; ${JSON.stringify(statuses)}, ${result.duplicates} duplicates acknowledged; all ${fmt(deletes.length)} deletes applied ${result.allDeletesAppliedS} s after the burst began (${result.afterLastAnswerS} s after its last answer); ${result.runsQueuedByUpdates} incremental runs queued by the updates\n`,
  );
} finally {
  worker.kill('SIGTERM');
  await new Promise((resolve) =>
    worker.exitCode !== null ? resolve(null) : worker.once('exit', resolve),
  );
  await db.destroy();
  await sim.close();
  await target.drop();
  await clearPrefix(env.HIRESYNC_REDIS_PREFIX as string);
}
