/**
 * Benchmark: all three resources synced by 1 and by 2 `hiresync worker`
 * processes on one Redis, from a simulator in its own process.
 *
 *   node dist/bench/worker-scaling.js [recordsPerResource]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config/load-config.js';
import { createSyncQueue, enqueueRun } from '../src/queue/sync-job.js';
import { RESOURCE_NAMES } from '../src/resources/index.js';
import { createDatabase } from '../src/warehouse/database.js';
import { clearPrefix, HEAP_FLAGS, startSimulatorProcess, syncEnv } from './end-to-end.js';
import { freshDatabase, REDIS_URL } from './support.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

export async function workerScaling(
  records = 30_000,
): Promise<Array<{ workers: number; seconds: number; recordsPerS: number }>> {
  const sim = await startSimulatorProcess(['--records', String(records)]);
  const results: Array<{ workers: number; seconds: number; recordsPerS: number }> = [];
  try {
    for (const count of [1, 2]) {
      const target = await freshDatabase('scale');
      const env = syncEnv(sim.url, target.url, {
        HIRESYNC_HTTP_PORT: '0',
        HIRESYNC_INCREMENTAL_EVERY: '1h',
        LOG_LEVEL: 'silent',
      });
      const config = loadConfig(env, RESOURCE_NAMES);
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
      const queue = createSyncQueue(redis, config.redisPrefix);
      const db = createDatabase(target.url, { max: 1 });
      const workers: ChildProcess[] = [];
      try {
        for (let i = 0; i < count; i += 1) {
          workers.push(
            spawn(process.execPath, [...HEAP_FLAGS, CLI, 'worker'], {
              env: { PATH: process.env.PATH, ...env },
              stdio: 'ignore',
            }),
          );
        }
        await sleep(1500);
        const started = performance.now();
        for (const resource of RESOURCE_NAMES)
          await enqueueRun(queue, { resource, requested: 'full', origin: 'cli' }, config);
        for (;;) {
          const done = await db
            .selectFrom('sync_runs')
            .select('id')
            .where('mode', '=', 'full')
            .where('outcome', '=', 'succeeded')
            .execute();
          if (done.length >= RESOURCE_NAMES.length) break;
          await sleep(50);
        }
        const seconds = (performance.now() - started) / 1000;
        results.push({ workers: count, seconds, recordsPerS: (3 * records) / seconds });
      } finally {
        for (const w of workers) w.kill('SIGTERM');
        await Promise.all(
          workers.map(
            (w) =>
              new Promise((resolve) =>
                w.exitCode !== null ? resolve(null) : w.once('exit', resolve),
              ),
          ),
        );
        await queue.close();
        redis.disconnect();
        await db.destroy();
        await target.drop();
        await clearPrefix(config.redisPrefix);
      }
    }
  } finally {
    await sim.stop();
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await workerScaling(Number(process.argv[2]) || 30_000)) {
    process.stdout.write(
      `${r.workers} worker(s): ${r.seconds.toFixed(2)} s, ${Math.round(r.recordsPerS)} records/s\n`,
    );
  }
}
