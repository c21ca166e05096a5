/**
 * Benchmark: all three resources synced (full runs) by 1, 2 and 3 `hiresync
 * worker` processes, each in a network namespace of its own (a host of its
 * own), sharing one Redis and one Postgres on the namespaces' bridge, from
 * the simulator in this process. Needs root and iproute2 (`ip netns`).
 *
 *   node dist/bench/workers-on-hosts.js [recordsPerResource]
 *
 * Reports, per number of workers: seconds, records/s, runs/s, the workers'
 * CPU (seconds, and cores used over the run), the whole machine's busy cores
 * over the run (/proc/stat: everything, the servers and other load
 * included), and the largest worker's peak RSS.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { cpuSecondsOf, peakRssOf, startHostsDeployment } from '../test/support/hosts-deployment.js';
import { netnsUnavailable } from '../test/support/netns.js';
import { HEAP_FLAGS } from './end-to-end.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const RESOURCES = ['jobs', 'job_posts', 'tracking_links'] as const;

export interface HostsScalingResult {
  workers: number;
  seconds: number;
  recordsPerS: number;
  runsPerS: number;
  /** CPU seconds of the workers together. */
  workerCpuS: number;
  /** Cores the whole machine kept busy over the run. */
  machineBusyCores: number;
  /** The largest peak RSS of one worker, bytes. */
  peakRss: number;
}

/** Busy and total jiffies of the machine so far (/proc/stat's cpu line). */
function machineJiffies(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  // idle and iowait.
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

export async function workersOnHosts(records = 20_000): Promise<HostsScalingResult[]> {
  const results: HostsScalingResult[] = [];
  for (const count of [1, 2, 3]) {
    const d = await startHostsDeployment({
      hosts: count,
      cli: CLI,
      nodeFlags: HEAP_FLAGS,
      simulator: {
        dataset: { counts: { jobs: records, job_posts: records, tracking_links: records } },
      },
      env: { LOG_LEVEL: 'warn' },
    });
    try {
      for (let i = 0; i < count; i += 1) d.startWorker(i);
      await sleep(2000);
      const before = machineJiffies();
      const started = performance.now();
      await d.enqueueFull(RESOURCES);
      while ((await d.succeededRuns(RESOURCES)) < RESOURCES.length) await sleep(50);
      const seconds = (performance.now() - started) / 1000;
      const after = machineJiffies();
      const pids = d.workers.map((w) => w?.pid);
      const workerCpuS = pids.reduce<number>((sum, pid) => sum + (cpuSecondsOf(pid) ?? 0), 0);
      const peakRss = Math.max(...pids.map((pid) => peakRssOf(pid) ?? 0));
      const busyShare = (after.busy - before.busy) / (after.total - before.total);
      results.push({
        workers: count,
        seconds,
        recordsPerS: (RESOURCES.length * records) / seconds,
        runsPerS: RESOURCES.length / seconds,
        workerCpuS,
        machineBusyCores: busyShare * cpus().length,
        peakRss,
      });
    } finally {
      await d.close();
    }
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const unavailable = netnsUnavailable();
  if (unavailable !== undefined) {
    process.stderr.write(`workers-on-hosts: ${unavailable}\n`);
    process.exit(2);
  }
  const records = Number(process.argv[2]) || 20_000;
  process.stdout.write(`${cpus().length} cores, ${records} records per resource, 3 resources\n`);
  for (const r of await workersOnHosts(records)) {
    process.stdout.write(
      `${r.workers} worker(s): ${r.seconds.toFixed(2)} s, ${Math.round(r.recordsPerS)} records/s, ` +
        `${r.runsPerS.toFixed(3)} runs/s, workers' CPU ${r.workerCpuS.toFixed(1)} s ` +
        `(${(r.workerCpuS / r.seconds).toFixed(2)} cores), machine busy ${r.machineBusyCores.toFixed(2)} cores, ` +
        `peak RSS ${(r.peakRss / 1024 ** 2).toFixed(0)} MiB a worker\n`,
    );
  }
}
