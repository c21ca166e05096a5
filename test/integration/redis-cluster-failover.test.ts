import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { freePort } from '../support/free-port.js';
import { waitFor } from '../support/lifecycle.js';
import { PrivateRedisCluster } from '../support/redis-cluster.js';
import { spawnCli } from '../support/run-cli.js';
import {
  DEFAULT_CLIENT_SECRET,
  newRedisPrefix,
  newSecretKey,
  simulatorEnv,
} from '../support/test-env.js';

let cluster: PrivateRedisCluster;
let sim: ApiSimulator;
let database: TestDatabase;

beforeAll(async () => {
  cluster = await PrivateRedisCluster.start({ masters: 3, replicas: 1 });
  sim = await ApiSimulator.start({
    clientSecrets: [DEFAULT_CLIENT_SECRET],
    dataset: { counts: { jobs: 20, job_posts: 20 } },
  });
  database = await createTestDatabase(inject('databaseUrl'));
}, 120_000);

afterAll(async () => {
  await database?.drop();
  await sim?.close();
  await cluster?.close();
});

async function succeededRuns(): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from hiresync.data_sync_runs where outcome = 'succeeded'`.execute(
    database.db,
  );
  return Number(rows[0]?.n);
}

describe('a worker on a Redis Cluster with replicas', () => {
  it('rides out the crash of the master holding its keys: a replica takes over, the scheduled runs go on, /healthz answers 200 and it stops cleanly', async () => {
    const port = await freePort();
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: cluster.url,
      HIRESYNC_REDIS_PREFIX: newRedisPrefix(),
      HIRESYNC_SECRET_KEY: newSecretKey(),
      ...simulatorEnv(sim),
      HIRESYNC_RESOURCES: 'jobs,job_posts',
      HIRESYNC_PER_PAGE: '10',
      HIRESYNC_INCREMENTAL_EVERY: '5s',
      HIRESYNC_HTTP_PORT: String(port),
      LOG_LEVEL: 'info',
    };
    const prefix = loadConfig(env, RESOURCE_NAMES).redisPrefix;
    const worker = spawnCli(['worker'], env);
    try {
      await waitFor(async () => (await succeededRuns()) >= 4, 60_000, 200);
      const before = await cluster.masterOf(`${prefix}:sync:meta`);
      expect(before).toBeDefined();
      await cluster.kill(before as number);
      // Redis's own election (cluster-node-timeout 2 s) takes seconds; on a busy machine
      // longer. Should none take over, the nodes' logs say why.
      await waitFor(
        async () => {
          const now = await cluster.masterOf(`${prefix}:sync:meta`);
          return now !== undefined && now !== before;
        },
        120_000,
        200,
      ).catch((error: Error) => {
        throw new Error(`${error.message}: no replica took over\n${cluster.failoverLog()}`);
      });
      const atFailover = await succeededRuns();
      // Two more rounds of both schedules, on the promoted replica.
      await waitFor(async () => (await succeededRuns()) >= atFailover + 4, 90_000, 200);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ redis: 'ok', schedules: 'ok' });
    } finally {
      worker.child.kill('SIGTERM');
      const code = await worker.exit;
      expect(code, worker.stderr()).toBe(0);
    }
    expect(worker.stdout()).toContain('"msg":"worker stopped"');
    expect(worker.stdout()).not.toContain('"level":50');
    // No run failed. A run in hand at the SIGTERM (a schedule fires every 5 s)
    // stops after its page and keeps its checkpoint: it stays `running`, to
    // resume, and the worker says so at shutdown.
    const lines = worker.stdout().split('\n');
    const shutdown = lines.findIndex((line) => line.includes('shutting down'));
    const interrupted = lines
      .slice(shutdown)
      .filter((line) => line.includes('run interrupted; checkpoint kept'))
      .map((line) => (JSON.parse(line) as { resource: string }).resource);
    const { rows } = await sql<{ resource: string; outcome: string }>`
      select resource, outcome from hiresync.data_sync_runs where outcome <> 'succeeded'`.execute(
      database.db,
    );
    for (const row of rows) {
      expect(row, JSON.stringify({ rows, interrupted })).toEqual({
        resource: expect.toBeOneOf(interrupted),
        outcome: 'running',
      });
    }
    expect(rows.length).toBeLessThanOrEqual(interrupted.length);
  }, 300_000);
});
