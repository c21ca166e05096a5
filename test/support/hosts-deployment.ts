import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { PrivatePostgres, PrivateRedis } from '../../bench/private-servers.js';
import { loadConfig, type ResourceName } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/types.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { createSyncQueue, enqueueRun } from '../../src/queue/sync-job.js';
import { RESOURCE_NAMES, validateRecord } from '../../src/resources/index.js';
import { ApiSimulator } from '../../src/simulator/api-simulator.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import type { Database } from '../../src/warehouse/tables.js';
import { liveIdsIn } from './live-ids.js';
import { createHosts, type Hosts } from './netns.js';

/** A line a worker logged (pino JSON), with the index of the worker. */
export interface WorkerLine {
  worker: number;
  time: number;
  msg: string;
  resource?: string;
  runId?: string;
  page?: number;
  records?: number;
}

/**
 * hiresync on several hosts: `hosts` namespaces, each to run one `hiresync
 * worker`, and the services they share on the host side of the namespaces'
 * bridge: a Redis and a Postgres of the deployment's own, and the API
 * simulator. Postgres and Redis are reached directly (no proxy in between),
 * so that the servers see a namespace's connections themselves, as they see
 * a real host's. The simulator is reached through a forwarder on each
 * namespace's loopback (hiresync takes plain http from loopback only), whose
 * upstream crosses the namespace's link.
 */
export interface HostsDeployment {
  hosts: Hosts;
  sim: ApiSimulator;
  env: Record<string, string>;
  config: Config;
  /** The deployment's database, from the test's side. */
  db: Kysely<Database>;
  /** Every line the workers logged, in the order read. */
  lines: WorkerLine[];
  /** The worker processes, by namespace; undefined until started. */
  workers: Array<ChildProcess | undefined>;
  /** Starts `hiresync worker` in namespace `index`. */
  startWorker: (index: number) => ChildProcess;
  /** Queues a full run of each of `resources`, as `hiresync sync` does. */
  enqueueFull: (resources: readonly ResourceName[]) => Promise<void>;
  /** Full runs of `resources` that succeeded. */
  succeededRuns: (resources: readonly ResourceName[]) => Promise<number>;
  /** Ids (as text) of the live rows of `resource`, and what the simulator serves. */
  liveIds: (resource: ResourceName) => Promise<string[]>;
  expectedIds: (resource: ResourceName) => string[];
  close: () => Promise<void>;
}

/** Options of {@link startHostsDeployment}. */
export interface HostsDeploymentOptions {
  hosts: number;
  /** The built CLI (dist/src/cli.js). */
  cli: string;
  /** Node flags of the workers. */
  nodeFlags?: string[];
  simulator?: SimulatorOptions;
  /** Settings of the workers. */
  env?: Record<string, string>;
  /** Where a worker's unparsed output goes (its stderr, lines that are not JSON). */
  onOutput?: (worker: number, text: string) => void;
}

export async function startHostsDeployment(
  options: HostsDeploymentOptions,
): Promise<HostsDeployment> {
  const undo: Array<() => Promise<unknown> | unknown> = [];
  const close = async () => {
    for (const step of undo.splice(0).reverse()) {
      try {
        await step();
      } catch {
        // The rest is still undone.
      }
    }
  };
  try {
    const hosts = createHosts(options.hosts);
    undo.push(() => hosts.teardown());
    const at = hosts.serviceAddress;
    const redis = await PrivateRedis.start({ bind: at });
    undo.push(() => redis.close());
    const pg = await PrivatePostgres.start({ listen: at });
    undo.push(() => pg.close());
    const db = createDatabase(pg.url);
    undo.push(() => db.destroy());
    await migrateAll(db);
    const sim = await ApiSimulator.start({
      host: at,
      clientSecrets: ['sync-secret'],
      ...options.simulator,
    });
    undo.push(() => sim.close());
    // hiresync takes plain http from loopback only: in each namespace, the
    // simulator's port on 127.0.0.1 forwards to it over the namespace's link.
    const simPort = new URL(sim.url).port;
    await Promise.all(
      hosts.names.map((_, i) => forwardPort(hosts, i, Number(simPort), at, Number(simPort))),
    );
    // The origin it serves (and names in its next links) is the namespaces'.
    const onLoopback = (url: string) => url.replace(`//${at}:`, '//127.0.0.1:');
    sim.url = onLoopback(sim.url);
    sim.authUrl = onLoopback(sim.authUrl);
    const env: Record<string, string> = {
      HIRESYNC_BASE_URL: sim.url,
      HIRESYNC_AUTH_URL: sim.authUrl,
      HIRESYNC_CLIENT_ID: 'demo-client',
      HIRESYNC_CLIENT_SECRET: 'sync-secret',
      DATABASE_URL: pg.url,
      REDIS_URL: redis.url,
      HIRESYNC_REDIS_PREFIX: `hosts-${hosts.names[0]}`,
      HIRESYNC_HTTP_PORT: '0',
      HIRESYNC_INCREMENTAL_EVERY: '1h',
      LOG_LEVEL: 'info',
      ...options.env,
    };
    const config = loadConfig(env, RESOURCE_NAMES);
    const queueRedis = new Redis(redis.url, { maxRetriesPerRequest: null });
    undo.push(async () => {
      await deletePrefix(queueRedis, config.redisPrefix);
      queueRedis.disconnect();
    });
    const queue = createSyncQueue(queueRedis, config.redisPrefix);
    undo.push(() => queue.close());
    const lines: WorkerLine[] = [];
    const workers: Array<ChildProcess | undefined> = hosts.names.map(() => undefined);
    const startWorker = (index: number) => {
      const child = hosts.spawn(
        index,
        process.execPath,
        [...(options.nodeFlags ?? []), options.cli, 'worker'],
        { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let rest = '';
      child.stdout?.on('data', (data: Buffer) => {
        const text = rest + data.toString();
        const complete = text.split('\n');
        rest = complete.pop() ?? '';
        for (const line of complete) {
          try {
            lines.push({ ...(JSON.parse(line) as Omit<WorkerLine, 'worker'>), worker: index });
          } catch {
            options.onOutput?.(index, line);
          }
        }
      });
      child.stderr?.on('data', (data: Buffer) => options.onOutput?.(index, data.toString()));
      workers[index] = child;
      return child;
    };
    // Undone first: the workers go before the services they use.
    undo.push(() =>
      Promise.all(
        workers.map(async (child) => {
          if (!child || child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGKILL');
          await exited;
        }),
      ),
    );
    const dataset = sim.dataset;
    return {
      hosts,
      sim,
      env,
      config,
      db,
      lines,
      workers,
      startWorker,
      enqueueFull: async (resources) => {
        for (const resource of resources) {
          await enqueueRun(queue, { resource, requested: 'full', origin: 'cli' }, config);
        }
      },
      succeededRuns: async (resources) => {
        const rows = await db
          .withSchema('public')
          .selectFrom('sync_runs')
          .select('id')
          .where('resource', 'in', resources)
          .where('mode', '=', 'full')
          .where('outcome', '=', 'succeeded')
          .execute();
        return rows.length;
      },
      liveIds: (resource) => liveIdsIn(db, resource),
      expectedIds: (resource) =>
        [...dataset.presentIndexes(resource)]
          .filter((i) => validateRecord(resource, dataset.record(resource, i)) === undefined)
          .map((i) => String(dataset.idOf(resource, i))),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A TCP forwarder: listens on 127.0.0.1:argv[1], connects to argv[2]:argv[3]; prints `ready`. */
const FORWARDER = `
const net = require('node:net');
const [port, host, to] = process.argv.slice(1);
net.createServer((client) => {
  const upstream = net.connect(Number(to), host);
  for (const [a, b] of [[client, upstream], [upstream, client]]) {
    a.on('error', () => b.destroy());
    a.on('close', () => b.destroy());
    a.pipe(b);
  }
}).listen(Number(port), '127.0.0.1', () => console.log('ready'));
`;

/** Starts a forwarder in namespace `index` from its 127.0.0.1:`port` to `host`:`to`; resolves once it listens. */
async function forwardPort(
  hosts: Hosts,
  index: number,
  port: number,
  host: string,
  to: number,
): Promise<void> {
  const child = hosts.spawn(
    index,
    process.execPath,
    ['-e', FORWARDER, String(port), host, String(to)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`forwarder in namespace ${index} exited ${code}`)),
    );
    child.stdout?.once('data', () => resolve());
  });
}

/** The peak resident memory of process `pid` (VmHWM), in bytes; undefined once it has exited. */
export function peakRssOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) process `pid` has used; undefined once it has exited. */
export function cpuSecondsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command's name.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
