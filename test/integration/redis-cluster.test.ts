import { randomBytes } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { formTokenSpender } from '../../src/commands/console-operations.js';
import { loadConfig, type ResourceName } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/types.js';
import {
  connectRedis,
  deleteMatching,
  type RedisConnection,
  scanKeys,
} from '../../src/redis/connect.js';
import { RESOURCE_NAMES, validateRecord } from '../../src/resources/index.js';
import { Secret } from '../../src/secret.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { deleteJob } from '../../src/simulator/webhook-events.js';
import { sendWebhook } from '../../src/simulator/webhook-sender.js';
import { createDatabase } from '../../src/warehouse/database.js';
import type { Database } from '../../src/warehouse/tables.js';
import { adminQuery, databaseUrl, TEST_DATABASE_PREFIX } from '../support/databases.js';
import { freePort } from '../support/free-port.js';
import { waitFor } from '../support/lifecycle.js';
import { PrivateRedisCluster } from '../support/redis-cluster.js';
import { type CliResult, runCli, spawnCli } from '../support/run-cli.js';
import {
  DEFAULT_CLIENT_SECRET,
  newRedisPrefix,
  newSecretKey,
  simulatorEnv,
} from '../support/test-env.js';

const RESOURCES: readonly ResourceName[] = ['jobs', 'job_posts', 'tracking_links'];
const ACCOUNTS = ['default', 'acme'] as const;
const WEBHOOK_SECRET = 'cluster-webhook-secret-0123456789';

let cluster: PrivateRedisCluster;
let sim: ApiSimulator;
let redis: RedisConnection;
let db: Kysely<Database>;
let dbName: string;
let env: Record<string, string>;
let config: Config;
/** Everything every hiresync process of the test wrote, to search for Cluster errors. */
const output: string[] = [];

async function cli(args: string[], timeoutMs = 90_000): Promise<CliResult> {
  const result = await runCli(args, env, timeoutMs);
  output.push(result.stdout, result.stderr);
  return result;
}

/** Every key of the Cluster, from every master. */
async function allKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of scanKeys(redis, '*')) keys.push(...batch);
  return keys.sort();
}

/** Ids (as text) of an account's live rows of `resource`. */
async function liveIds(account: string, resource: ResourceName): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from ${sql.table(`hiresync.data_${resource}`)}
    where account = ${account} and deleted_at is null order by id`.execute(db);
  return rows.map((row) => String(row.id));
}

/** What the simulator serves `account` of `resource`, valid records only. */
function servedIds(account: string, resource: ResourceName): string[] {
  const dataset = sim.datasetOf(account);
  return [...dataset.presentIndexes(resource)]
    .filter((i) => validateRecord(resource, dataset.record(resource, i)) === undefined)
    .map((i) => String(dataset.idOf(resource, i)))
    .sort();
}

async function succeededRuns(): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from hiresync.data_sync_runs where outcome = 'succeeded'`.execute(db);
  return Number(rows[0]?.n);
}

beforeAll(async () => {
  cluster = await PrivateRedisCluster.start();
  sim = await ApiSimulator.start({
    clientSecrets: [DEFAULT_CLIENT_SECRET],
    dataset: { counts: { jobs: 45, job_posts: 35, tracking_links: 25 } },
    accounts: [
      {
        name: 'acme',
        clientId: 'acme-client',
        clientSecrets: ['acme-secret'],
        dataset: {
          seed: 11,
          idOffset: 1_000_000,
          counts: { jobs: 38, job_posts: 28, tracking_links: 18 },
        },
      },
    ],
    // A window small enough that the sync's pages are paced across several.
    rateLimit: { limit: 8, windowMs: 1000 },
    rateLimitHeaders: true,
  });
  // An empty database: `migrate` makes every table of hiresync.
  dbName = `${TEST_DATABASE_PREFIX}cluster${randomBytes(4).toString('hex')}`;
  await adminQuery(inject('databaseUrl'), [`create database ${dbName}`]);
  const url = databaseUrl(inject('databaseUrl'), dbName);
  db = createDatabase(url);
  env = {
    DATABASE_URL: url,
    REDIS_URL: cluster.url,
    HIRESYNC_REDIS_PREFIX: newRedisPrefix(),
    HIRESYNC_SECRET_KEY: newSecretKey(),
    ...simulatorEnv(sim),
    HIRESYNC_RESOURCES: RESOURCES.join(','),
    HIRESYNC_PER_PAGE: '5',
    HIRESYNC_WEBHOOK_SECRET: WEBHOOK_SECRET,
    HIRESYNC_RUN_BACKOFF: '200ms',
  };
  config = loadConfig(env, RESOURCE_NAMES);
  redis = connectRedis(config.redis, { maxRetriesPerRequest: 3 });
}, 120_000);

afterAll(async () => {
  redis?.disconnect();
  await db?.destroy();
  if (dbName) {
    await adminQuery(inject('databaseUrl'), [`drop database if exists ${dbName} with (force)`]);
  }
  await sim?.close();
  await cluster?.close();
});

describe('hiresync on a three-master Redis Cluster (redis+cluster://)', () => {
  it('migrate makes the tables of an empty database, and the prefix of every key is hash-tagged', async () => {
    const migrated = await cli(['migrate']);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('applied');
    expect(config.redisPrefix).toBe(`{${env.HIRESYNC_REDIS_PREFIX}}`);
    const store = new AccountStore(db, config.secretKeys);
    await store.add({
      name: 'acme',
      baseUrl: sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: sim.authUrl,
        clientId: 'acme-client',
        clientSecret: new Secret('acme-secret'),
      },
    });
    // A second migrate makes the schema of the account registered since.
    expect((await cli(['migrate'])).code).toBe(0);
  });

  it('sync walks every resource of both accounts, many pages each, paced by the shared rate limit, and stores what the simulator serves', async () => {
    const synced = await runCli(['sync'], { ...env, LOG_LEVEL: 'debug' }, 180_000);
    output.push(synced.stdout, synced.stderr);
    expect(synced.code, synced.stderr).toBe(0);
    for (const account of ACCOUNTS) {
      for (const resource of RESOURCES) {
        expect(await liveIds(account, resource), `${account} ${resource}`).toEqual(
          servedIds(account, resource),
        );
      }
    }
    // Several pages a resource (5 a page), and the pacer waited for windows.
    expect(sim.stats.listRequests).toBeGreaterThan(8 * 4);
    expect(`${synced.stdout}${synced.stderr}`).toContain('paced by rate limit');
    const rateKeys = (await allKeys()).filter((key) => key.includes(':rate:'));
    expect(rateKeys.length).toBeGreaterThanOrEqual(2);
  });

  it('a worker upserts the schedules, runs a scheduled run, answers /healthz 200 and /metrics, claims a webhook event once, and status sees it alive', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/hiresync`;
    const before = await succeededRuns();
    const worker = spawnCli(['worker'], {
      ...env,
      HIRESYNC_HTTP_PORT: String(port),
      HIRESYNC_PUBLIC_URL: base,
      HIRESYNC_INCREMENTAL_EVERY: '20d',
      HIRESYNC_FULL_CRON: '0 3 1 1 *',
      LOG_LEVEL: 'info',
    });
    try {
      await waitFor(async () => worker.stdout().includes('worker started'), 60_000, 50);
      // The schedules' first runs: one a (account, resource), from the scheduler.
      await waitFor(
        async () => (await succeededRuns()) >= before + ACCOUNTS.length * RESOURCES.length,
        120_000,
        200,
      );
      const schedulers = (await allKeys()).filter((key) => key.includes(':repeat:'));
      expect(schedulers.length).toBeGreaterThan(0);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ redis: 'ok', schedules: 'ok' });
      // /metrics reads the workers' heartbeats from the Cluster.
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^hiresync_workers_alive 1$/m);

      const event = deleteJob(sim.dataset, 4);
      const id = (event.payload as { job: { id: number } }).job.id;
      const deliver = () =>
        sendWebhook(`${base}/webhooks/default`, {
          body: event,
          secret: WEBHOOK_SECRET,
          eventId: 'cluster-event-1',
        });
      expect(await deliver()).toMatchObject({ status: 200, text: 'queued\n' });
      await waitFor(async () => !(await liveIds('default', 'jobs')).includes(String(id)), 60_000);
      expect(await deliver()).toMatchObject({ status: 200, text: 'duplicate event: ignored\n' });
      expect((await allKeys()).filter((key) => key.includes(':webhook-event:'))).toEqual([
        `${config.redisPrefix}:webhook-event:default:cluster-event-1`,
      ]);

      // A console form's token is spent once, for every worker.
      const spend = formTokenSpender(redis, config.redisPrefix);
      expect([await spend('form-token'), await spend('form-token')]).toEqual([true, false]);

      const status = await cli(['status']);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain('workers: 1 alive');
      expect(status.stdout).toMatch(/queue: \d+ waiting, \d+ active, \d+ delayed, 0 failed/);
    } finally {
      worker.child.kill('SIGTERM');
      const code = await worker.exit;
      output.push(worker.stdout(), worker.stderr());
      expect(code, worker.stderr()).toBe(0);
    }
  });

  it('a connection that has not yet connected scans and deletes matching keys on every master', async () => {
    // Keys without a hash tag: spread over the three masters by their own slots.
    const spread = Array.from({ length: 30 }, (_, i) => `cluster-scan-probe:${i}`);
    for (const key of spread) await redis.set(key, '1');
    const holders = new Set<string>();
    for (const key of spread) {
      const slot = Number(await redis.call('CLUSTER', 'KEYSLOT', key));
      const owner = (redis as Cluster).slots[slot]?.[0];
      if (owner) holders.add(owner);
    }
    expect(holders.size).toBe(3);
    const fresh = () => connectRedis(config.redis, { maxRetriesPerRequest: 3 });
    const scanning = fresh();
    const found: string[] = [];
    for await (const keys of scanKeys(scanning, 'cluster-scan-probe:*')) found.push(...keys);
    scanning.disconnect();
    expect(found.sort()).toEqual([...spread].sort());
    const deleting = fresh();
    expect(await deleteMatching(deleting, 'cluster-scan-probe:*')).toBe(spread.length);
    deleting.disconnect();
    expect((await allKeys()).filter((key) => key.startsWith('cluster-scan-probe:'))).toEqual([]);
  });

  it("accounts remove deletes the account's schedules and its keys on every master", async () => {
    const { rows } = await sql<{ ns: string }>`
      select credential_namespace as ns from hiresync.accounts where name = 'acme'`.execute(db);
    const namespace = rows[0]?.ns;
    expect(namespace).toBeTruthy();
    const ofAcme = (keys: string[]) =>
      keys.filter(
        (key) =>
          key.includes(`:rate:${namespace}`) ||
          key.includes(`:token:${namespace}`) ||
          key.includes(':checkpoint:acme:'),
      );
    expect(ofAcme(await allKeys()).length).toBeGreaterThan(0);
    const removed = await cli(['accounts', 'remove', 'acme']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(ofAcme(await allKeys())).toEqual([]);
  });

  it('every key is under the hash-tagged prefix, all in one hash slot, and no process met CROSSSLOT or MOVED', async () => {
    const keys = await allKeys();
    expect(keys.length).toBeGreaterThan(10);
    for (const key of keys) expect(key.startsWith(`${config.redisPrefix}:`), key).toBe(true);
    const slots = new Set<number>();
    for (const key of keys) slots.add(Number(await redis.call('CLUSTER', 'KEYSLOT', key)));
    expect(slots.size).toBe(1);
    const text = output.join('\n');
    expect(text).not.toMatch(/CROSSSLOT|MOVED|ASK /);
    expect(text).not.toContain('"level":50');
  });
});
