/**
 * Benchmark: full syncs of tracking links by this build and by another build
 * of hiresync (a checkout's `dist`, built there with `npm run build`),
 * alternated round by round against one simulator in its own process, so the
 * machine's drift falls on both alike. Each round gives each build a fresh
 * database: a full run into empty tables (inserts), then a second full run
 * over the same rows (re-writes). Per run: records/s from the run's start to
 * its summary, and from process start to exit; the process's peak RSS;
 * Postgres's CPU per page (its processes' CPU while the run lasted, workers
 * that ended included); and how busy the machine's cores were.
 *
 *   node dist/bench/sync-against.js OTHER_CHECKOUT [records] [rounds]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childSync, clearPrefix, startTrackingLinksSimulator, syncEnv } from './end-to-end.js';
import { fmt, freshDatabase, machineTicks, median } from './support.js';

const THIS_CHILD = fileURLToPath(new URL('./sync-child.js', import.meta.url));

/** Clock ticks a second (/proc figures). */
const HZ = 100;

/** CPU of every postgres process so far, reaped workers included (the postmaster's children's), in seconds. */
function postgresCpuSeconds(): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    if (name !== 'postgres') continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, and (the postmaster's) cutime, cstime: fields 14 to 17.
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return ticks / HZ;
}

interface Measured {
  summaryPerS: number;
  processPerS: number;
  maxRssMb: number;
  postgresMsPerPage: number;
  /** The machine's cores busy while the run lasted, as a fraction of all of them. */
  machineBusy: number;
}

/** One full sync in a child process of `child` (a build's sync-child.js), measured from outside. */
async function measuredSync(child: string, env: Record<string, string>): Promise<Measured> {
  const cpu = postgresCpuSeconds();
  const ticks = machineTicks();
  const started = performance.now();
  const result = await childSync(env, ['tracking_links'], 'full', child);
  const wall = (performance.now() - started) / 1000;
  const after = machineTicks();
  if (!result.ok) throw new Error(`a sync of ${child} failed; run it with LOG_LEVEL=info`);
  return {
    summaryPerS: result.records / result.seconds,
    processPerS: result.records / wall,
    maxRssMb: result.maxRssMb,
    postgresMsPerPage: ((postgresCpuSeconds() - cpu) * 1000) / result.pages,
    machineBusy: (after.busy - ticks.busy) / (after.total - ticks.total),
  };
}

type Pass = 'inserts' | 're-writes';

async function main(): Promise<void> {
  const other = process.argv[2];
  if (!other) throw new Error('usage: sync-against.js OTHER_CHECKOUT [records] [rounds]');
  const otherChild = resolve(other, 'dist/bench/sync-child.js');
  const records = Number(process.argv[3]) || 200_000;
  const rounds = Number(process.argv[4]) || 3;
  const builds = { this: THIS_CHILD, other: otherChild } as const;
  const sim = await startTrackingLinksSimulator(records);
  const results: Record<keyof typeof builds, Record<Pass, Measured[]>> = {
    this: { inserts: [], 're-writes': [] },
    other: { inserts: [], 're-writes': [] },
  };
  try {
    // A first sync, not counted, fills the simulator's page cache.
    for (let round = -1; round < rounds; round += 1) {
      const order: Array<keyof typeof builds> =
        round % 2 === 0 ? ['this', 'other'] : ['other', 'this'];
      for (const build of round < 0 ? (['this'] as const) : order) {
        const db = await freshDatabase('against');
        const env = syncEnv(sim.url, db.url);
        try {
          const inserts = await measuredSync(builds[build], env);
          const rewrites = await measuredSync(builds[build], env);
          if (round < 0) continue;
          results[build].inserts.push(inserts);
          results[build]['re-writes'].push(rewrites);
          process.stderr.write(
            `  round ${round + 1} ${build}: inserts ${fmt(inserts.summaryPerS)}/s, re-writes ${fmt(rewrites.summaryPerS)}/s\n`,
          );
        } finally {
          await db.drop();
          await clearPrefix(env.HIRESYNC_REDIS_PREFIX as string);
        }
      }
    }
  } finally {
    await sim.stop();
  }
  const m = (list: Measured[], key: keyof Measured) => median(list.map((x) => x[key]));
  process.stdout.write(
    `full sync of ${fmt(records)} tracking links, medians of ${rounds} alternated rounds (this build / ${other}):\n`,
  );
  for (const pass of ['inserts', 're-writes'] as const) {
    const a = results.this[pass];
    const b = results.other[pass];
    process.stdout.write(
      `  ${pass}: run start to summary ${fmt(m(a, 'summaryPerS'))} vs ${fmt(m(b, 'summaryPerS'))} records/s (${(m(a, 'summaryPerS') / m(b, 'summaryPerS')).toFixed(2)} x); ` +
        `process start to exit ${fmt(m(a, 'processPerS'))} vs ${fmt(m(b, 'processPerS'))} records/s (${(m(a, 'processPerS') / m(b, 'processPerS')).toFixed(2)} x); ` +
        `peak RSS ${m(a, 'maxRssMb').toFixed(0)} vs ${m(b, 'maxRssMb').toFixed(0)} MB; ` +
        `Postgres CPU ${m(a, 'postgresMsPerPage').toFixed(1)} vs ${m(b, 'postgresMsPerPage').toFixed(1)} ms a page; ` +
        `the machine's cores busy ${(100 * m(a, 'machineBusy')).toFixed(0)} vs ${(100 * m(b, 'machineBusy')).toFixed(0)} %\n`,
    );
  }
}

await main();
