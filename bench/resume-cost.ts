/**
 * Benchmark: what a crash costs. A `hiresync sync` of tracking links is killed
 * with SIGKILL at a random page, then run again; the records read twice are the
 * requests beyond the pages that were left, times the page size.
 *
 *   node dist/bench/resume-cost.js [trials]
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ApiSimulator } from '../src/simulator/api-simulator.js';
import { mix } from '../src/simulator/dataset-values.js';
import { createDatabase } from '../src/warehouse/database.js';
import { childSync, clearPrefix, syncEnv } from './end-to-end.js';
import { freshDatabase } from './support.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const PER_PAGE = 100;
const RECORDS = 6000;

export interface ResumeTrial {
  killedAfterPage: number;
  rereadRecords: number;
}

export async function resumeCost(trials = 3, seed = Date.now()): Promise<ResumeTrial[]> {
  const results: ResumeTrial[] = [];
  let random = seed % 100_000;
  for (let trial = 0; trial < trials; trial += 1) {
    random = mix(random, trial);
    const pages = RECORDS / PER_PAGE;
    const killAt = 3 + (random % (pages - 6));
    const sim = await ApiSimulator.start({
      dataset: { counts: { tracking_links: RECORDS } },
      latencyMs: 15,
    });
    const target = await freshDatabase('resume');
    const db = createDatabase(target.url, { max: 1 });
    const env = syncEnv(sim.url, target.url, {
      HIRESYNC_PER_PAGE: String(PER_PAGE),
      HIRESYNC_RUN_LOCK_TTL: '1s',
    });
    try {
      const child = spawn(process.execPath, [CLI, 'sync', '--resource', 'tracking_links'], {
        env: { PATH: process.env.PATH, ...env },
        stdio: 'ignore',
      });
      for (;;) {
        const run = await db.selectFrom('sync_runs').select('pages').executeTakeFirst();
        if ((run?.pages ?? 0) >= killAt) break;
        await sleep(5);
      }
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const done = (await db.selectFrom('sync_runs').select('pages').executeTakeFirstOrThrow())
        .pages;
      const before = sim.stats.listRequests;
      const second = await childSync(env, ['tracking_links']);
      if (!second.ok) throw new Error('the resumed sync failed');
      const requests = sim.stats.listRequests - before;
      results.push({
        killedAfterPage: done,
        rereadRecords: Math.max(0, requests - (pages - done)) * PER_PAGE,
      });
    } finally {
      await db.destroy();
      await target.drop();
      await sim.close();
      await clearPrefix(env.HIRESYNC_REDIS_PREFIX as string);
    }
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await resumeCost(Number(process.argv[2]) || 3)) {
    process.stdout.write(
      `killed after page ${r.killedAfterPage}: ${r.rereadRecords} records read again\n`,
    );
  }
}
