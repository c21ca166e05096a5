/**
 * Benchmark: where the time of a sync goes. On the same tracking links from a
 * simulator in its own process (loopback, unthrottled, per_page 500):
 *   - end to end: `sync` of tracking_links (queue, fetch, validate, write, checkpoint), in a child process;
 *   - bare walk: the same pages fetched and parsed, no database;
 *   - page writes: writePage alone on the same pages (bodies fetched beforehand);
 *   - COPY: the same rows COPYed into the same table, one statement per page, interleaved with the page writes.
 *
 *   node dist/bench/end-to-end.js [records]
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { createApiClient } from '../src/api/create-api-client.js';
import { fetchPages } from '../src/api/fetch-pages.js';
import { loadConfig, withEnvironmentCredentials } from '../src/config/load-config.js';
import { createLogger } from '../src/logger.js';
import { deletePrefix } from '../src/queue/redis.js';
import { RESOURCE_NAMES } from '../src/resources/index.js';
import { listUrl } from '../src/resources/read-plan.js';
import { trackingLinks } from '../src/resources/tracking-links.js';
import type { Page } from '../src/sync/ports.js';
import { freePort } from './ports.js';
import { ADMIN_URL, freshDatabase, REDIS_URL } from './support.js';
import { interleavedWrites } from './warehouse-upsert.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const CHILD = fileURLToPath(new URL('./sync-child.js', import.meta.url));
export const HEAP_FLAGS = ['--max-semi-space-size=8', '--max-old-space-size=512'];

export interface SimulatorProcess {
  url: string;
  stop: () => Promise<void>;
}

/** Starts `hiresync simulate` in a child process; the API lives in its own process, as a real one would. */
export async function startSimulatorProcess(args: string[]): Promise<SimulatorProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'simulate', '--port', String(port), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('listening')) resolve();
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export function syncEnv(
  simUrl: string,
  databaseUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    HIRESYNC_BASE_URL: simUrl,
    HIRESYNC_AUTH_URL: `${simUrl}/oauth`,
    HIRESYNC_CLIENT_ID: 'demo-client',
    HIRESYNC_CLIENT_SECRET: 'demo-secret',
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    HIRESYNC_REDIS_PREFIX: `bench-${randomUUID()}`,
    ...extra,
  };
}

export interface ChildSync {
  seconds: number;
  pages: number;
  records: number;
  maxRssMb: number;
  ok: boolean;
}

/** One sync in a child process (see sync-child.ts). */
export async function childSync(
  env: Record<string, string>,
  resources: string[],
  requested?: 'auto' | 'full',
  child = CHILD,
): Promise<ChildSync> {
  // The heap flags of the hiresync bin and image (see the shebang of src/cli.ts).
  const { stdout } = await run(
    process.execPath,
    [...HEAP_FLAGS, child, JSON.stringify({ env, resources, requested })],
    {
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as ChildSync;
}

export async function clearPrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  await deletePrefix(redis, prefix);
  redis.disconnect();
}

export interface EndToEndResult {
  records: number;
  pages: number;
  endToEnd: ChildSync;
  bareWalkPerS: number;
  writePerS: number;
  copyPerS: number;
}

/**
 * The bare walk runs first and warms the simulator's page cache, so during the
 * timed passes the simulator only sends bytes, as a remote API's servers would.
 * End to end and writePage alone are then measured alternately, twice each, so
 * the machine's drift falls on both alike.
 */
/** The simulator serving `records` tracking links and nothing else, each page rendered once and then sent from its cache. */
export function startTrackingLinksSimulator(records: number): Promise<SimulatorProcess> {
  return startSimulatorProcess([
    '--records',
    '0',
    '--tracking-links',
    String(records),
    '--cache-pages',
  ]);
}

export async function endToEnd(records = 100_000): Promise<EndToEndResult> {
  const sim = await startTrackingLinksSimulator(records);
  try {
    // Bare walk: the same pages, fetched and parsed, nothing written.
    const walkEnv = syncEnv(sim.url, 'postgres://unused@127.0.0.1/unused');
    const config = withEnvironmentCredentials(loadConfig(walkEnv, RESOURCE_NAMES));
    const redis = new Redis(REDIS_URL);
    const client = createApiClient({
      config: config.api,
      redis,
      logger: createLogger({ level: 'silent' }),
      prefix: config.redisPrefix,
    });
    const walk = async () => {
      const pages: Page[] = [];
      const started = performance.now();
      for await (const page of fetchPages({
        client,
        startUrl: listUrl(config.api, trackingLinks),
      }))
        pages.push(page);
      return { pages, seconds: (performance.now() - started) / 1000 };
    };
    await walk(); // warms the cache
    const { pages, seconds: walkS } = await walk();
    redis.disconnect();
    await clearPrefix(config.redisPrefix);

    let e2eSeconds = 0;
    let writeSeconds = 0;
    let copySeconds = 0;
    let last: ChildSync | undefined;
    let peak = 0;
    for (let round = 0; round < 2; round += 1) {
      const e2eDb = await freshDatabase('e2e');
      const env = syncEnv(sim.url, e2eDb.url);
      try {
        last = await childSync(env, ['tracking_links']);
        if (!last.ok)
          throw new Error('the end-to-end sync failed; run it with LOG_LEVEL=info to see why');
        e2eSeconds += last.seconds;
        process.stderr.write(
          `  round ${round + 1}: end to end ${Math.round(records / last.seconds)} records/s`,
        );
        peak = Math.max(peak, last.maxRssMb);
      } finally {
        await e2eDb.drop();
        await clearPrefix(env.HIRESYNC_REDIS_PREFIX as string);
      }
      const writeDb = await freshDatabase('write');
      try {
        const writes = await interleavedWrites(writeDb.url, pages);
        writeSeconds += records / writes.writePerS;
        process.stderr.write(`, writePage alone ${Math.round(writes.writePerS)} records/s\n`);
        copySeconds += records / writes.copyPerS;
      } finally {
        await writeDb.drop();
      }
    }
    const e2e = { ...(last as ChildSync), seconds: e2eSeconds / 2, maxRssMb: peak };
    return {
      records: e2e.records,
      pages: e2e.pages,
      endToEnd: e2e,
      bareWalkPerS: pages.reduce((n, p) => n + p.records.length, 0) / walkS,
      writePerS: (2 * records) / writeSeconds,
      copyPerS: (2 * records) / copySeconds,
    };
  } finally {
    await sim.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await endToEnd(Number(process.argv[2]) || 100_000);
  const e2eRate = r.endToEnd.records / r.endToEnd.seconds;
  process.stdout.write(
    `end to end: ${r.records} tracking links, ${r.pages} pages in ${r.endToEnd.seconds.toFixed(2)} s = ${Math.round(e2eRate)} records/s, ${(r.pages / r.endToEnd.seconds).toFixed(1)} pages/s, peak RSS ${r.endToEnd.maxRssMb.toFixed(0)} MB\n` +
      `  bare walk ${Math.round(r.bareWalkPerS)} records/s; writePage alone ${Math.round(r.writePerS)} records/s; COPY ${Math.round(r.copyPerS)} rows/s\n` +
      `  end to end = ${(e2eRate / r.copyPerS).toFixed(2)} x COPY, ${((100 * e2eRate) / r.writePerS).toFixed(0)}% of writePage alone (admin ${ADMIN_URL})\n`,
  );
}
