/**
 * Benchmark: catching updates. After a full run of N tracking links, 1% of
 * them change (and 0.1% are added); an incremental run with
 * HIRESYNC_UPDATED_FILTER catches them, against the full run that is the only
 * other way to see updates. Requests and seconds of each, in one process with
 * the simulator in process (its pages rendered per request, unlike a cached
 * remote API, so the figures are for comparison within this run).
 *
 *   node dist/bench/incremental-updates.js [records]
 */
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/load-config.js';
import { createLogger } from '../src/logger.js';
import { deletePrefix } from '../src/queue/redis.js';
import { runOnce } from '../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../src/resources/index.js';
import { ApiSimulator } from '../src/simulator/api-simulator.js';
import { mix } from '../src/simulator/dataset-values.js';
import { syncEnv } from './end-to-end.js';
import { fmt, freshDatabase } from './support.js';

export interface IncrementalResult {
  records: number;
  changed: number;
  added: number;
  full: { requests: number; seconds: number };
  incremental: { requests: number; seconds: number; records: number; caught: boolean };
}

export async function incrementalUpdates(records = 200_000): Promise<IncrementalResult> {
  const sim = await ApiSimulator.start({ dataset: { counts: { tracking_links: records } } });
  const target = await freshDatabase('updates');
  const env = syncEnv(sim.url, target.url, {
    HIRESYNC_UPDATED_FILTER: 'updated_at=gte|{since}',
    LOG_LEVEL: 'silent',
  });
  const config = loadConfig(env, RESOURCE_NAMES);
  const app = createApp(config, createLogger({ level: 'silent' }), { defaultMetrics: false });
  try {
    const timed = async (requested: 'full' | 'auto') => {
      const before = sim.stats.listRequests;
      const started = performance.now();
      const [outcome] = await runOnce(app, ['tracking_links'], requested);
      if (!outcome?.ok) throw new Error(`the ${requested} run failed`);
      return {
        requests: sim.stats.listRequests - before,
        seconds: (performance.now() - started) / 1000,
        summary: outcome.summary,
      };
    };
    const full = await timed('full');
    const ds = sim.dataset;
    const changed = Math.round(records / 100);
    const touched = new Set<number>();
    for (let k = 0; touched.size < changed; k += 1) touched.add(mix(7, k) % records);
    for (const index of touched) ds.touch('tracking_links', index);
    const added = Math.round(records / 1000);
    ds.grow('tracking_links', added);
    const incremental = await timed('auto');
    // Every changed and added record must have landed, as the API serves it now.
    const rows = await app.db
      .selectFrom('tracking_links')
      .select(['id', 'raw'])
      .where('last_seen_run_id', '=', incremental.summary.runId)
      .execute();
    const caught = rows.length === changed + added;
    return {
      records,
      changed,
      added,
      full: { requests: full.requests, seconds: full.seconds },
      incremental: {
        requests: incremental.requests,
        seconds: incremental.seconds,
        records: incremental.summary.records,
        caught,
      },
    };
  } finally {
    await app.close();
    await sim.close();
    await target.drop();
    const { Redis } = await import('ioredis');
    const redis = new Redis(env.REDIS_URL as string);
    await deletePrefix(redis, env.HIRESYNC_REDIS_PREFIX as string);
    redis.disconnect();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await incrementalUpdates(Number(process.argv[2]) || 200_000);
  process.stdout.write(
    `${fmt(r.records)} tracking links, ${fmt(r.changed)} changed and ${fmt(r.added)} added:\n` +
      `  full run:        ${r.full.requests} requests, ${r.full.seconds.toFixed(1)} s\n` +
      `  incremental run: ${r.incremental.requests} requests, ${r.incremental.seconds.toFixed(1)} s, ${fmt(r.incremental.records)} records, all caught: ${r.incremental.caught}\n`,
  );
}
