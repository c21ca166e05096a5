/**
 * Fault-injection soak: many full syncs against the simulator while it injects
 * 429s, 5xx, slow pages, dropped connections, token revocation, malformed
 * records and records holding a \u0000, pages past the size limit and 429s
 * with an epoch Retry-After, and while this harness SIGKILLs worker processes
 * at random moments, restarts Redis and Postgres, and deletes every Redis key
 * of a deployment (a failover to an empty replica). A second
 * deployment on another Redis prefix runs full syncs of the same tables at the
 * same time (only Postgres can keep the two apart). After every cycle the
 * tables are compared with the simulator's data: no row missing, none extra or
 * duplicated, none stale, every rejected record in rejected_records.
 *
 *   npm run soak                       # 180 s
 *   npm run soak -- --seconds 40       # the short form CI runs
 *
 * Prints cycles, faults by kind and mismatches; exits 1 on any mismatch.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import { loadConfig, RESOURCE_NAMES, type ResourceName } from '../src/config.js';
import { deletePrefix } from '../src/queue/redis.js';
import { createSyncQueue, enqueueRun } from '../src/queue/sync-queue.js';
import { validateRecord } from '../src/resources/index.js';
import { ApiSimulator } from '../src/simulator/api-simulator.js';
import { mix } from '../src/simulator/dataset.js';
import { createDatabase } from '../src/warehouse/database.js';
import { migrateToLatest } from '../src/warehouse/migrate.js';
import type { Database } from '../src/warehouse/schema.js';
import { PrivatePostgres, PrivateRedis } from './private-servers.js';
import { freshDatabase, REDIS_URL } from './support.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const { values } = parseArgs({
  options: { seconds: { type: 'string' }, workers: { type: 'string' }, seed: { type: 'string' } },
});
const seconds = Number(values.seconds ?? 180);
const workerCount = Number(values.workers ?? 2);
let random = Number(values.seed ?? Date.now() % 100_000);
const seed = random;

/** A deterministic random number in [0, 1). */
function rand(): number {
  random = mix(random, 0x9e37);
  return random / 0x1_0000_0000;
}

const faults: Record<string, number> = {};
const count = (kind: string) => {
  faults[kind] = (faults[kind] ?? 0) + 1;
};

// Postgres and Redis of the soak's own when the machine has the binaries, so
// they can be restarted; else the shared ones, without restarts.
const redis = PrivateRedis.available() ? await PrivateRedis.start() : undefined;
const postgres = PrivatePostgres.available() ? await PrivatePostgres.start() : undefined;
const shared = postgres ? undefined : await freshDatabase('soak');
const databaseUrl = postgres?.url ?? (shared?.url as string);
const redisUrl = redis?.url ?? REDIS_URL;

const sim = await ApiSimulator.start({
  dataset: {
    counts: { jobs: 400, job_posts: 400, tracking_links: 1200 },
    malformedEvery: 53,
    nulEvery: 97,
  },
  revokePreviousToken: true,
  tokenTtlSeconds: 30,
  randomFaults: {
    serverError: 0.03,
    rateLimit: 0.03,
    slow: 0.02,
    slowMs: 300,
    dropConnection: 0.01,
    revokeTokens: 0.01,
    seed,
  },
});

const env: Record<string, string> = {
  HIRESYNC_BASE_URL: sim.url,
  HIRESYNC_AUTH_URL: sim.authUrl,
  HIRESYNC_CLIENT_ID: 'demo-client',
  HIRESYNC_CLIENT_SECRET: 'demo-secret',
  DATABASE_URL: databaseUrl,
  REDIS_URL: redisUrl,
  HIRESYNC_REDIS_PREFIX: `soak-${randomUUID().slice(0, 8)}`,
  HIRESYNC_PER_PAGE: '100',
  HIRESYNC_RATE_LIMIT_WINDOW: '1s',
  HIRESYNC_RUN_ATTEMPTS: '20',
  HIRESYNC_RUN_BACKOFF: '200ms',
  HIRESYNC_RUN_LOCK_TTL: '1s',
  HIRESYNC_MAX_RETRIES: '8',
  HIRESYNC_INCREMENTAL_EVERY: '1h',
  HIRESYNC_FULL_CRON: '0 0 1 1 *',
  HIRESYNC_HTTP_PORT: '0',
  LOG_LEVEL: 'silent',
};
// A second deployment of the same tables on another Redis prefix (as a
// `sync --full` run from a host next to a compose stack would be).
const otherEnv: Record<string, string> = {
  ...env,
  HIRESYNC_REDIS_PREFIX: `${env.HIRESYNC_REDIS_PREFIX}-other`,
};
const config = loadConfig(env);
const otherConfig = loadConfig(otherEnv);
const db: Kysely<Database> = createDatabase(databaseUrl, { max: 2 });
await migrateToLatest(db);
const queueRedis = new Redis(redisUrl, { maxRetriesPerRequest: null });
queueRedis.on('error', () => {});
const queue = createSyncQueue(queueRedis, config.redisPrefix);
queue.on('error', () => {});
const otherQueue = createSyncQueue(queueRedis, otherConfig.redisPrefix);
otherQueue.on('error', () => {});

const workers: Array<ChildProcess | undefined> = [];
/** Slots 0..workerCount-1 are the main deployment's workers; the last slot is the other deployment's. */
function startWorker(slot: number): void {
  const child = spawn(process.execPath, [CLI, 'worker'], {
    env: { PATH: process.env.PATH, ...(slot === workerCount ? otherEnv : env) },
    stdio: 'ignore',
  });
  workers[slot] = child;
}
for (let i = 0; i <= workerCount; i += 1) startWorker(i);

/** The simulator's truth for a resource: live ids with their records, and the records to reject. */
function truth(resource: ResourceName) {
  const ds = sim.dataset;
  const live = new Map<string, unknown>();
  let rejected = 0;
  for (const index of ds.presentIndexes(resource)) {
    const record = ds.record(resource, index);
    // A \u0000 passes validation but not Postgres: rejected all the same.
    if (validateRecord(resource, record) === undefined && !ds.hasNul(index))
      live.set(String(ds.idOf(resource, index)), record);
    else rejected += 1;
  }
  return { live, rejected };
}

/** Mismatches between the tables and the simulator, after the given full runs. */
async function compare(runs: Map<ResourceName, string>): Promise<string[]> {
  const problems: string[] = [];
  for (const resource of RESOURCE_NAMES) {
    const expected = truth(resource);
    const column = resource === 'tracking_links' ? 'raw' : 'data';
    const rows = await sql<{ id: string; record: unknown; deleted: boolean }>`
      select id::text as id, ${sql.ref(column)} as record, deleted_at is not null as deleted
      from ${sql.table(resource)}`.execute(db);
    const live = rows.rows.filter((r) => !r.deleted);
    for (const row of live) {
      const want = expected.live.get(row.id);
      if (want === undefined) problems.push(`${resource} ${row.id}: in the table, not in the API`);
      else if (!isDeepStrictEqual(row.record, want)) problems.push(`${resource} ${row.id}: stale`);
    }
    const seen = new Set(live.map((r) => r.id));
    for (const id of expected.live.keys())
      if (!seen.has(id)) problems.push(`${resource} ${id}: missing`);
    const deleted = rows.rows.filter((r) => r.deleted && expected.live.has(r.id));
    for (const row of deleted.slice(0, 3))
      problems.push(`${resource} ${row.id}: live in the API, soft-deleted in the table`);
    const runId = runs.get(resource) as string;
    const rejected = await db
      .selectFrom('rejected_records')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('resource', '=', resource)
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    if (Number(rejected.n) !== expected.rejected) {
      problems.push(
        `${resource}: ${rejected.n} rejected records for run ${runId}, ${expected.rejected} malformed in the API`,
      );
    }
  }
  return problems;
}

/** Full runs of every resource that started at or after `since` and succeeded. */
async function succeededSince(since: string): Promise<Map<ResourceName, string>> {
  const rows = await db
    .selectFrom('sync_runs')
    .select(['resource', 'id'])
    .where('mode', '=', 'full')
    .where('outcome', '=', 'succeeded')
    .where('started_at', '>=', since)
    .orderBy('id')
    .execute();
  return new Map(rows.map((r) => [r.resource as ResourceName, r.id]));
}

async function enqueueFull(resources: readonly ResourceName[]): Promise<void> {
  for (const resource of resources) {
    for (const q of [queue, otherQueue]) {
      await enqueueRun(q, { resource, requested: 'full', origin: 'cli' }, config).catch(
        () => undefined,
      );
    }
  }
}

/**
 * Random chaos while a cycle runs: kill -9 a worker, restart Redis or
 * Postgres, or lose every Redis key of the main deployment.
 */
async function chaos(until: () => boolean): Promise<void> {
  while (!until()) {
    await sleep(200 + rand() * 1200);
    if (until()) return;
    const roll = rand();
    if (roll < 0.08) {
      count('redis keys lost');
      await deletePrefix(queueRedis, config.redisPrefix).catch(() => undefined);
    } else if (roll < 0.14) {
      // A page past HIRESYNC_MAX_PAGE_BYTES (4 MiB): that run fails, the next one completes.
      count('oversized page (8 MiB, gzip)');
      sim.inject({ kind: 'oversized-body', bytes: 8 * 1024 ** 2, gzip: true });
    } else if (roll < 0.2) {
      count('429 with an epoch Retry-After');
      sim.inject({ kind: 'rate-limit', retryAfterS: 1, format: 'epoch' });
    } else if (roll < 0.5) {
      const slot = Math.floor(rand() * (workerCount + 1));
      workers[slot]?.kill('SIGKILL');
      count('worker SIGKILL');
      await sleep(100 + rand() * 400);
      startWorker(slot);
    } else if (roll < 0.64 && redis) {
      count('redis restart');
      await redis.restart(200 + rand() * 300);
    } else if (roll < 0.78 && postgres) {
      count('postgres restart');
      postgres.restart();
    }
  }
}

const deadline = Date.now() + seconds * 1000;
let cycles = 0;
let mismatches = 0;
const examples: string[] = [];
while (Date.now() < deadline) {
  cycles += 1;
  const cycleStarted = Date.now();
  // The API changes between cycles: new records, deletions and updates.
  for (const resource of RESOURCE_NAMES) {
    const ds = sim.dataset;
    ds.grow(resource, Math.floor(rand() * 40));
    for (let i = 0; i < 3; i += 1) ds.remove(resource, Math.floor(rand() * ds.size(resource)));
    for (let i = 0; i < 5; i += 1) ds.touch(resource, Math.floor(rand() * ds.size(resource)));
  }
  const since = (await sql<{ now: string }>`select now()::text as now`.execute(db)).rows[0]
    ?.now as string;
  await enqueueFull(RESOURCE_NAMES);
  let done: Map<ResourceName, string> = new Map();
  let finished = false;
  const chaosDone = chaos(() => finished);
  const cycleDeadline = Date.now() + 90_000;
  let nudged = Date.now();
  while (Date.now() < cycleDeadline) {
    done = await succeededSince(since).catch(() => done);
    if (done.size === RESOURCE_NAMES.length) break;
    // A killed worker's job waits for BullMQ's stalled-job check; queue the missing runs again.
    if (Date.now() - nudged > 4000) {
      await enqueueFull(RESOURCE_NAMES.filter((r) => !done.has(r)));
      nudged = Date.now();
    }
    await sleep(200);
  }
  finished = true;
  await chaosDone;
  let problems: string[];
  if (done.size < RESOURCE_NAMES.length) {
    problems = [
      `cycle ${cycles}: no successful full run of ${RESOURCE_NAMES.filter((r) => !done.has(r)).join(', ')} within 90 s`,
    ];
  } else {
    problems = await compare(done);
  }
  mismatches += problems.length;
  examples.push(...problems.slice(0, 3));
  process.stdout.write(
    `cycle ${cycles}: ${problems.length === 0 ? 'tables match the API' : `${problems.length} mismatches`} (${((Date.now() - cycleStarted) / 1000).toFixed(1)} s)\n`,
  );
}

for (const [kind, n] of Object.entries(sim.stats.faultsInjected)) faults[`api ${kind}`] = n;
faults['api 401 (token revoked or expired)'] = sim.stats.byStatus['401'] ?? 0;
faults['malformed records served'] = [...RESOURCE_NAMES].reduce((n, r) => n + truth(r).rejected, 0);
for (const w of workers) w?.kill('SIGTERM');
await sleep(500);
for (const w of workers) w?.kill('SIGKILL');
for (const q of [queue, otherQueue]) {
  await q.obliterate({ force: true }).catch(() => undefined);
  await q.close();
}
for (const prefix of [config.redisPrefix, otherConfig.redisPrefix])
  await deletePrefix(queueRedis, prefix).catch(() => undefined);
queueRedis.disconnect();
await db.destroy();
await sim.close();
await redis?.close();
postgres?.close();
await shared?.drop();

process.stdout.write(
  `\nsoak: ${seconds} s, seed ${seed}, ${workerCount} worker processes + 1 of a second deployment (another Redis prefix)\n`,
);
process.stdout.write(`cycles run: ${cycles}\nfaults injected:\n`);
for (const [kind, n] of Object.entries(faults).sort()) process.stdout.write(`  ${kind}: ${n}\n`);
process.stdout.write(`mismatches: ${mismatches}\n`);
for (const example of examples.slice(0, 10)) process.stdout.write(`  ${example}\n`);
process.exit(mismatches === 0 ? 0 : 1);
