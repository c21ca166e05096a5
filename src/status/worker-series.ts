import type { Registry } from 'prom-client';
import { Gauge } from 'prom-client';
import type { WorkerSeen } from '../queue/worker-heartbeat.js';
import { readWithin } from './read-within.js';

/** The deployment's workers as Redis holds them, and Redis's clock now. */
export type ReadWorkers = () => Promise<{ nowMs: number; workers: readonly WorkerSeen[] }>;

/**
 * The liveness series of the deployment's workers, read from their
 * heartbeats in Redis at each scrape (the same on every worker):
 * `hiresync_workers_alive` and `hiresync_worker_heartbeat_age_seconds` (the
 * age of the newest heartbeat, by Redis's clock). When Redis cannot be read,
 * both are left out of the scrape, so the alert's `absent()` sees it
 * (docs/metrics.md, HiresyncNoWorkerAlive).
 */
export function registerWorkerSeries(registry: Registry, read: ReadWorkers): void {
  let scrape: Promise<Awaited<ReturnType<ReadWorkers>> | undefined> | undefined;
  // One read of Redis per scrape, shared by both series.
  const shared = () => {
    scrape ??= readWithin(read).finally(() => {
      setImmediate(() => {
        scrape = undefined;
      });
    });
    return scrape;
  };
  new Gauge({
    name: 'hiresync_workers_alive',
    help: 'Worker processes of the deployment alive now: their heartbeat (every 15 s) is at most 45 s old and they have not stopped',
    registers: [registry],
    async collect() {
      const seen = await shared();
      this.reset();
      if (seen) this.set(seen.workers.filter((w) => w.alive).length);
    },
  });
  new Gauge({
    name: 'hiresync_worker_heartbeat_age_seconds',
    help: "Seconds since the newest heartbeat (or clean stop) of any of the deployment's workers, by Redis's clock",
    registers: [registry],
    async collect() {
      const seen = await shared();
      this.reset();
      const newest = Math.max(...(seen?.workers ?? []).map((w) => w.lastSeenMs));
      if (seen && Number.isFinite(newest)) this.set(Math.max(0, seen.nowMs - newest) / 1000);
    },
  });
}
