/**
 * Fault-injection soak: many full syncs against the simulator while it injects
 * 429s, 5xx, slow pages, dropped connections, token revocation, malformed
 * records and records holding a \u0000, pages past the size limit and 429s
 * with an epoch Retry-After, and while this harness SIGKILLs worker processes
 * at random moments, restarts Redis and Postgres, and deletes every Redis key
 * of a deployment (a failover to an empty replica). A second
 * deployment on another Redis prefix runs full syncs of the same tables at the
 * same time (only Postgres can keep the two apart). Besides `default`, each
 * cycle syncs registered accounts (--accounts, default 2: acct001.., each with
 * its own credentials, data and schema; their full runs are queued on the main
 * deployment) through the same faults, and some faults hit one account only
 * (its tokens revoked, a 5xx, 429 or oversized page of its own). Partner
 * accounts (--partner-accounts, default 1: partner01..) are synced the same
 * way through the authorization code grant, with 12-second access tokens, so
 * their refresh tokens rotate every few seconds, under the same kills and
 * restarts; now and then the customer revokes one, which must put it in
 * needs_reauthorization, after which the soak authorizes it again. Any other
 * account left needing re-authorization is a failure, unless its reason says
 * a refresh was interrupted (a worker killed with the grant in flight: the
 * account is then marked, never stuck; counted, and authorized again).
 * After every cycle each account's tables are compared with
 * that account's simulated data: no row missing, none extra or duplicated,
 * none stale, every rejected record in its rejected_records; and no schema
 * holds a row of another account.
 *
 *   npm run soak                       # 180 s
 *   npm run soak -- --seconds 45       # the short form CI runs
 *   npm run soak -- --redis sentinel   # through Sentinels: a master, a replica, three Sentinels
 *
 * With `--redis sentinel` every process reaches Redis through
 * `redis+sentinel://` and the Redis restart becomes a SIGKILL of the master
 * and a Sentinel failover to the replica (the killed server then rejoins as
 * a replica, so the next fault can fail over again).
 *
 * Prints cycles, faults by kind and mismatches; exits 1 on any mismatch.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT, schemaOf } from '../src/account-name.js';
import { AccountStore } from '../src/accounts/account-store.js';
import { loadConfig, type ResourceName } from '../src/config/load-config.js';
import { deletePrefix } from '../src/queue/redis.js';
import { createSyncQueue, enqueueRun } from '../src/queue/sync-job.js';
import type { ScheduleTarget } from '../src/queue/upsert-schedules.js';
import { connectRedis } from '../src/redis/connect.js';
import { parseRedisUrl } from '../src/redis/redis-target.js';
import { RESOURCE_NAMES, validateRecord } from '../src/resources/index.js';
import { Secret } from '../src/secret.js';
import { ApiSimulator } from '../src/simulator/api-simulator.js';
import { mix } from '../src/simulator/dataset-values.js';
import type { Fault } from '../src/simulator/faults.js';
import { grantRefreshToken } from '../src/simulator/partner-browser.js';
import { simulatedAccounts } from '../src/simulator/simulated-accounts.js';
import { PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET } from '../src/simulator/simulator-options.js';
import { createDatabase } from '../src/warehouse/database.js';
import { migrateAll } from '../src/warehouse/setup/migrate-all.js';
import type { Database } from '../src/warehouse/tables.js';
import { PrivateSentinel } from './private-sentinel.js';
import { PrivatePostgres, PrivateRedis } from './private-servers.js';
import { POSTGRES_SERVER, presentUnlessCi, REDIS_SERVER } from './required-binaries.js';
import { freshDatabase, REDIS_URL } from './support.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const { values } = parseArgs({
  options: {
    seconds: { type: 'string' },
    workers: { type: 'string' },
    seed: { type: 'string' },
    accounts: { type: 'string' },
    'partner-accounts': { type: 'string' },
    redis: { type: 'string' },
  },
});
const seconds = Number(values.seconds ?? 180);
const workerCount = Number(values.workers ?? 2);
const accountCount = Number(values.accounts ?? 2);
const partnerCount = Number(values['partner-accounts'] ?? 1);
/** Lifetime of the partner accounts' access tokens: short, so refresh tokens rotate often. */
const PARTNER_TOKEN_TTL_S = 12;
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
// they can be restarted; else the shared ones, without restarts (under CI a
// missing binary is an error instead: the soak must restart both).
// With `--redis sentinel`, a Sentinel setup of its own (which needs the binaries).
if (values.redis !== undefined && values.redis !== 'sentinel') {
  throw new Error(`--redis ${values.redis}: the one form is --redis sentinel`);
}
const sentinel = values.redis === 'sentinel' ? await PrivateSentinel.start() : undefined;
const redis =
  !sentinel && presentUnlessCi(PrivateRedis.available(), REDIS_SERVER)
    ? await PrivateRedis.start()
    : undefined;
const postgres = presentUnlessCi(PrivatePostgres.available(), POSTGRES_SERVER)
  ? await PrivatePostgres.start()
  : undefined;
const shared = postgres ? undefined : await freshDatabase('soak');
const databaseUrl = postgres?.url ?? (shared?.url as string);
const redisUrl = sentinel?.url ?? redis?.url ?? REDIS_URL;

// Registered accounts: acct001.. with data of their own (ids a million apart
// from default's and from each other's), smaller than default's.
const simulated = simulatedAccounts(accountCount, {
  counts: { jobs: 60, job_posts: 60, tracking_links: 150 },
  dataset: { malformedEvery: 53, nulEvery: 97 },
});
const accounts = simulated.map((a) => a.name);
// Partner accounts: customers reached only through the partner app (no
// client credentials of their own), with data of their own.
const partners = Array.from({ length: partnerCount }, (_, k) => ({
  name: `partner${String(k + 1).padStart(2, '0')}`,
  dataset: {
    counts: { jobs: 60, job_posts: 60, tracking_links: 150 },
    malformedEvery: 53,
    nulEvery: 97,
    seed: 500 + k,
    idOffset: (500 + k) * 1_000_000,
  },
}));
const partnerNames = partners.map((p) => p.name);
/** Every account a cycle syncs: default (schema public) first. */
const everyAccount = [DEFAULT_ACCOUNT, ...accounts, ...partnerNames];
const sim = await ApiSimulator.start({
  dataset: {
    counts: { jobs: 400, job_posts: 400, tracking_links: 1200 },
    malformedEvery: 53,
    nulEvery: 97,
  },
  accounts: [...simulated, ...partners],
  revokePreviousToken: true,
  tokenTtlSeconds: 30,
  partnerAccessTokenTtlSeconds: PARTNER_TOKEN_TTL_S,
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
  HIRESYNC_SECRET_KEY: randomBytes(32).toString('base64'),
  HIRESYNC_PARTNER_CLIENT_ID: PARTNER_CLIENT_ID,
  HIRESYNC_PARTNER_CLIENT_SECRET: PARTNER_CLIENT_SECRET,
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
const config = loadConfig(env, RESOURCE_NAMES);
const otherConfig = loadConfig(otherEnv, RESOURCE_NAMES);
const db: Kysely<Database> = createDatabase(databaseUrl, { max: 2 });
await migrateAll(db);
const store = new AccountStore(db, config.secretKeys, { partner: config.partner });
for (const name of partnerNames) {
  // As a partner's own web app connects a customer: `accounts add NAME --partner`.
  await store.addPartner(
    name,
    sim.url,
    sim.authUrl,
    new Secret(await grantRefreshToken(sim, name)),
  );
}
for (const account of simulated) {
  await store.add({
    name: account.name,
    baseUrl: sim.url,
    auth: {
      mode: 'client_credentials',
      authUrl: sim.authUrl,
      clientId: account.clientId as string,
      clientSecret: new Secret(account.clientSecrets?.[0] as string),
    },
  });
}
await migrateAll(db);
/** Every (account, resource) a cycle runs. */
const targets: ScheduleTarget[] = everyAccount.flatMap((account) =>
  RESOURCE_NAMES.map((resource) => ({ account, resource })),
);
const keyOf = ({ account, resource }: ScheduleTarget) => `${account}/${resource}`;
const queueRedis = connectRedis(parseRedisUrl(redisUrl), { maxRetriesPerRequest: null });
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

/** The simulator's truth for an account's resource: live ids with their records, and the records to reject. */
function truth(account: string, resource: ResourceName) {
  const ds = sim.datasetOf(account);
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

/** Which account's data holds each id the simulator ever served, by resource. */
function owners(): Map<ResourceName, Map<string, string>> {
  const byResource = new Map<ResourceName, Map<string, string>>();
  for (const resource of RESOURCE_NAMES) {
    const owner = new Map<string, string>();
    for (const account of everyAccount) {
      const ds = sim.datasetOf(account);
      for (let index = 0; index < ds.size(resource); index += 1) {
        const id = String(ds.idOf(resource, index));
        const other = owner.get(id);
        if (other !== undefined && other !== account)
          throw new Error(`${resource} ${id} is in the data of ${other} and of ${account}`);
        owner.set(id, account);
      }
    }
    byResource.set(resource, owner);
  }
  return byResource;
}

/**
 * Mismatches between an account's tables (its schema) and its simulated
 * data, after the given full runs; and rows of another account's data in
 * its schema.
 */
/** The reference lists, whose tables the nested objects of tracking links fill too. */
const REFERENCE_LISTS = new Set<ResourceName>(['job_boards', 'sources', 'referrers']);

async function compare(
  account: string,
  runs: Map<ResourceName, string>,
  owner: Map<ResourceName, Map<string, string>>,
): Promise<string[]> {
  const problems: string[] = [];
  const schema = schemaOf(account);
  for (const resource of RESOURCE_NAMES) {
    const expected = truth(account, resource);
    const reference = REFERENCE_LISTS.has(resource);
    const column = resource === 'tracking_links' || reference ? 'raw' : 'data';
    const what = `${account} ${resource}`;
    const rows = await sql<{ id: string; record: unknown; deleted: boolean }>`
      select id::text as id, ${sql.ref(column)} as record, deleted_at is not null as deleted
      from ${sql.id(schema, resource)}`.execute(db);
    if (reference) {
      // A reference row holds the newest copy served, from its own list or
      // nested in a tracking link, so its record is not compared: every id
      // the list serves must be there, live.
      const live = new Set(rows.rows.filter((r) => !r.deleted).map((r) => r.id));
      for (const id of expected.live.keys())
        if (!live.has(id)) problems.push(`${what} ${id}: missing`);
      continue;
    }
    const foreign = rows.rows.filter((r) => {
      const of = owner.get(resource)?.get(r.id);
      return of !== undefined && of !== account;
    });
    for (const row of foreign.slice(0, 3))
      problems.push(`${what} ${row.id}: a row of account ${owner.get(resource)?.get(row.id)}`);
    if (foreign.length > 3) problems.push(`${what}: ${foreign.length} rows of other accounts`);
    const live = rows.rows.filter((r) => !r.deleted);
    for (const row of live) {
      const want = expected.live.get(row.id);
      if (want === undefined) problems.push(`${what} ${row.id}: in the table, not in the API`);
      else if (!isDeepStrictEqual(row.record, want)) problems.push(`${what} ${row.id}: stale`);
    }
    const seen = new Set(live.map((r) => r.id));
    for (const id of expected.live.keys())
      if (!seen.has(id)) problems.push(`${what} ${id}: missing`);
    const deleted = rows.rows.filter((r) => r.deleted && expected.live.has(r.id));
    for (const row of deleted.slice(0, 3))
      problems.push(`${what} ${row.id}: live in the API, soft-deleted in the table`);
    const runId = runs.get(resource) as string;
    const rejected = await sql<{ n: string }>`
      select count(*)::text as n from ${sql.id(schema, 'rejected_records')}
      where resource = ${resource} and run_id = ${runId}`.execute(db);
    const n = rejected.rows[0]?.n;
    if (Number(n) !== expected.rejected) {
      problems.push(
        `${what}: ${n} rejected records for run ${runId}, ${expected.rejected} malformed in the API`,
      );
    }
  }
  return problems;
}

/** Full runs of every (account, resource) that started at or after `since` and succeeded, by target. */
async function succeededSince(since: string): Promise<Map<string, string>> {
  const done = new Map<string, string>();
  for (const account of everyAccount) {
    const rows = await sql<{ resource: ResourceName; id: string }>`
      select resource, id::text as id from ${sql.id(schemaOf(account), 'sync_runs')}
      where mode = 'full' and outcome = 'succeeded' and started_at >= ${since}
      order by id`.execute(db);
    for (const r of rows.rows) done.set(keyOf({ account, resource: r.resource }), r.id);
  }
  return done;
}

/** Why each target's latest full run since `since` failed, if one did: what a stuck target's runs say. */
async function lastFailures(missing: readonly ScheduleTarget[], since: string): Promise<string[]> {
  const lines: string[] = [];
  for (const target of missing) {
    const { rows } = await sql<{ error: string | null; failed: string }>`
      select (array_agg(error order by id desc))[1] as error, count(*)::text as failed
      from ${sql.id(schemaOf(target.account), 'sync_runs')}
      where resource = ${target.resource} and mode = 'full' and outcome = 'failed'
        and started_at >= ${since}`.execute(db);
    const row = rows[0];
    if (row && Number(row.failed) > 0)
      lines.push(`${keyOf(target)}: ${row.failed} full runs failed, the last: ${row.error}`);
  }
  return lines;
}

/** Partner accounts whose authorization this soak revoked on purpose (the customer did). */
const revoked = new Set<string>();
/** Partner accounts authorized again, by why they needed it. */
const reauthorized: Record<string, number> = {};
const unexpected: string[] = [];

/**
 * Looks at every partner account's state: one that needs re-authorizing
 * because the soak revoked it, or because a refresh was interrupted (a worker
 * killed with the grant in flight), is authorized again, as a customer's
 * administrator would; any other reason is a failure.
 */
async function tendPartners(): Promise<void> {
  for (const name of partnerNames) {
    const account = await store.get(name).catch(() => undefined);
    if (account?.state !== 'needs_reauthorization') continue;
    const reason = account.partner?.reauthorizationReason ?? '';
    const cause = revoked.has(name)
      ? 'revoked by the customer'
      : /interrupted/.test(reason)
        ? 'a refresh interrupted by a kill'
        : undefined;
    if (cause === undefined) {
      unexpected.push(`${name} needs re-authorizing: ${reason}`);
    }
    revoked.delete(name);
    reauthorized[cause ?? 'unexpected'] = (reauthorized[cause ?? 'unexpected'] ?? 0) + 1;
    await store.authorize(name, new Secret(await grantRefreshToken(sim, name)));
  }
}

async function enqueueFull(runs: readonly ScheduleTarget[]): Promise<void> {
  for (const { account, resource } of runs) {
    const data = {
      ...(account === DEFAULT_ACCOUNT ? {} : { account }),
      resource,
      requested: 'full' as const,
      origin: 'cli' as const,
    };
    // The second deployment's full runs are default's only, as before (its
    // worker still runs the accounts' scheduled runs): the accounts' full runs
    // on both deployments made the 45 s soak of CI last a third longer.
    for (const q of account === DEFAULT_ACCOUNT ? [queue, otherQueue] : [queue]) {
      await enqueueRun(q, data, config).catch(() => undefined);
    }
  }
}

/** A fault for the next list request of anyone (undefined) or of one registered account. */
function injectSomewhere(kind: string, fault: Fault): void {
  const account = rand() < 0.5 ? undefined : accounts[Math.floor(rand() * accounts.length)];
  count(account === undefined ? kind : `${kind}, one account's`);
  sim.inject(fault, 1, account);
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
      injectSomewhere('oversized page (8 MiB, gzip)', {
        kind: 'oversized-body',
        bytes: 8 * 1024 ** 2,
        gzip: true,
      });
    } else if (roll < 0.2) {
      injectSomewhere('429 with an epoch Retry-After', {
        kind: 'rate-limit',
        retryAfterS: 1,
        format: 'epoch',
      });
    } else if (roll < 0.5) {
      const slot = Math.floor(rand() * (workerCount + 1));
      workers[slot]?.kill('SIGKILL');
      count('worker SIGKILL');
      await sleep(100 + rand() * 400);
      startWorker(slot);
    } else if (roll < 0.64 && sentinel) {
      count('redis master SIGKILL, Sentinel failover');
      await sentinel.failover();
    } else if (roll < 0.64 && redis) {
      count('redis restart');
      await redis.restart(200 + rand() * 300);
    } else if (roll < 0.78 && postgres) {
      count('postgres restart');
      postgres.restart();
    } else if (roll < 0.84 && accounts.length > 0) {
      // One account's tokens refused (401): only its runs renew theirs.
      count("one account's tokens revoked");
      sim.revokeTokens(accounts[Math.floor(rand() * accounts.length)]);
    } else if (roll < 0.88 && accounts.length > 0) {
      injectSomewhere('503', { kind: 'status', status: 503 });
    } else if (roll < 0.92 && partnerNames.length > 0) {
      // The customer revokes the partner app: that account alone must stop, marked.
      const name = partnerNames[Math.floor(rand() * partnerNames.length)] as string;
      count("one partner account's authorization revoked");
      revoked.add(name);
      sim.revokeAuthorization(name);
    }
  }
}

/** How long a cycle may take for every target to have a successful full run. */
const CYCLE_BOUND_S = 120;
const deadline = Date.now() + seconds * 1000;
let cycles = 0;
let mismatches = 0;
const examples: string[] = [];
while (Date.now() < deadline) {
  cycles += 1;
  const cycleStarted = Date.now();
  // The API changes between cycles: new records, deletions and updates, in every account's data.
  for (const account of everyAccount) {
    const ds = sim.datasetOf(account);
    for (const resource of RESOURCE_NAMES) {
      ds.grow(resource, Math.floor(rand() * (account === DEFAULT_ACCOUNT ? 40 : 10)));
      for (let i = 0; i < 3; i += 1) ds.remove(resource, Math.floor(rand() * ds.size(resource)));
      for (let i = 0; i < 5; i += 1) ds.touch(resource, Math.floor(rand() * ds.size(resource)));
    }
  }
  const since = (await sql<{ now: string }>`select now()::text as now`.execute(db)).rows[0]
    ?.now as string;
  await enqueueFull(targets);
  let done: Map<string, string> = new Map();
  let finished = false;
  const chaosDone = chaos(() => finished);
  // Every few seconds the chaos restarts Redis or wipes its keys, which fails
  // every run in flight with its checkpoint: a 12-page full run may start
  // over several times. Cycles measured 8–84 s; a target that cannot succeed
  // (a run that fails the same way each time) shows within the bound, named
  // with its last error.
  const cycleDeadline = Date.now() + CYCLE_BOUND_S * 1000;
  let nudged = Date.now();
  while (Date.now() < cycleDeadline) {
    done = await succeededSince(since).catch(() => done);
    if (done.size === targets.length) break;
    await tendPartners().catch(() => undefined);
    // A killed worker's job waits for BullMQ's stalled-job check; queue the missing runs again.
    if (Date.now() - nudged > 4000) {
      await enqueueFull(targets.filter((t) => !done.has(keyOf(t))));
      nudged = Date.now();
    }
    await sleep(200);
  }
  finished = true;
  await chaosDone;
  let problems: string[] = [];
  if (done.size < targets.length) {
    const missing = targets.filter((t) => !done.has(keyOf(t)));
    const why = await lastFailures(missing, since).catch(() => []);
    problems = [
      `cycle ${cycles}: no successful full run of ${missing.map(keyOf).join(', ')} within ${CYCLE_BOUND_S} s${why.map((line) => `\n  ${line}`).join('')}`,
    ];
  } else {
    const owner = owners();
    for (const account of everyAccount) {
      const runs = new Map(
        RESOURCE_NAMES.map((resource) => [
          resource,
          done.get(keyOf({ account, resource })) as string,
        ]),
      );
      problems.push(...(await compare(account, runs, owner)));
    }
  }
  problems.push(...unexpected.splice(0));
  mismatches += problems.length;
  examples.push(...problems.slice(0, 3));
  process.stdout.write(
    `cycle ${cycles}: ${problems.length === 0 ? 'tables match the API' : `${problems.length} mismatches`} (${((Date.now() - cycleStarted) / 1000).toFixed(1)} s)\n`,
  );
}

for (const [kind, n] of Object.entries(sim.stats.faultsInjected)) faults[`api ${kind}`] = n;
faults['api 401 (token revoked or expired)'] = sim.stats.byStatus['401'] ?? 0;
faults['malformed records served'] = everyAccount.reduce(
  (n, account) => RESOURCE_NAMES.reduce((m, r) => m + truth(account, r).rejected, n),
  0,
);
for (const account of accounts)
  faults[`api 401 of ${account} (its tokens revoked or expired)`] =
    sim.statsOf(account).byStatus['401'] ?? 0;
const partnerTotals = sim.partnerStats();
faults['partner refresh grants answered (each rotating a refresh token)'] = partnerTotals.refreshes;
faults['partner refresh grants refused (invalid_grant)'] = partnerTotals.invalidGrants;
for (const [cause, n] of Object.entries(reauthorized))
  faults[`partner accounts authorized again: ${cause}`] = n;
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
await sentinel?.close();
postgres?.close();
await shared?.drop();

process.stdout.write(
  `\nsoak: ${seconds} s, seed ${seed}, ${sentinel ? 'Redis through Sentinels, ' : ''}${workerCount} worker processes + 1 of a second deployment (another Redis prefix); ` +
    `accounts ${everyAccount.join(', ')} (${partnerNames.join(', ') || 'none'} through the authorization code grant, ${PARTNER_TOKEN_TTL_S} s access tokens), each compared with its own data after every cycle\n`,
);
process.stdout.write(`cycles run: ${cycles}\nfaults injected:\n`);
for (const [kind, n] of Object.entries(faults).sort()) process.stdout.write(`  ${kind}: ${n}\n`);
process.stdout.write(`mismatches: ${mismatches}\n`);
for (const example of examples.slice(0, 10)) process.stdout.write(`  ${example}\n`);
process.exit(mismatches === 0 ? 0 : 1);
