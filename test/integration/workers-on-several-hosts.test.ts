// Workers on several hosts: three `hiresync worker` processes, each in a
// network namespace of its own (a host of its own, with an address of its
// own), sharing one Redis and one Postgres over the namespaces' links. One
// host vanishes in the middle of a run: its link is cut (it reaches nothing,
// nothing reaches it, and no connection is reset), or its worker is killed.
// Its runs are taken over by the others, no run of a resource overlaps
// another, and nothing is lost or stored twice.
//
// Needs root and iproute2 (`ip netns`, veth, bridge) and redis-server and
// Postgres's binaries for servers of its own: .ci/run runs as root and
// installs redis-server and postgresql; skipped without them outside CI,
// failed in CI.
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFailed } from 'vitest';
import { PrivatePostgres, PrivateRedis } from '../../bench/private-servers.js';
import { POSTGRES_SERVER, presentUnlessCi, REDIS_SERVER } from '../../bench/required-binaries.js';
import type { ResourceName } from '../../src/config/load-config.js';
import { readWorkers } from '../../src/queue/worker-heartbeat.js';
import {
  type HostsDeployment,
  startHostsDeployment,
  type WorkerLine,
} from '../support/hosts-deployment.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { netnsPresentUnlessCi } from '../support/netns.js';
import { CLI } from '../support/run-cli.js';

const { defer } = cleanupAfterEach();
const runs =
  netnsPresentUnlessCi() &&
  presentUnlessCi(PrivateRedis.available(), REDIS_SERVER) &&
  presentUnlessCi(PrivatePostgres.available(), POSTGRES_SERVER);

const RESOURCES: ResourceName[] = ['jobs', 'job_posts', 'tracking_links'];
const WORKERS = 3;

async function deployment(): Promise<HostsDeployment> {
  const d = await startHostsDeployment({
    hosts: WORKERS,
    cli: CLI,
    onOutput: (worker, text) => process.stderr.write(`worker ${worker}: ${text}\n`),
    // 40 slow pages a resource: runs long enough to be cut in the middle.
    simulator: {
      dataset: { counts: { jobs: 2000, job_posts: 2000, tracking_links: 2000 } },
      latencyMs: 150,
    },
    env: {
      HIRESYNC_PER_PAGE: '50',
      // Short lifetimes: a vanished worker's run lock expires in 2 s, its
      // job's lock in 8 s, its Postgres session is found dead in about 4 s.
      HIRESYNC_RUN_LOCK_TTL: '2s',
      HIRESYNC_CONCURRENCY: '2',
      HIRESYNC_RUN_BACKOFF: '200ms',
      HIRESYNC_RUN_ATTEMPTS: '10',
    },
  });
  defer(() => d.close());
  // What the workers did, to read when the test fails.
  onTestFailed(() => {
    for (const line of d.lines.slice(-60)) process.stderr.write(`${JSON.stringify(line)}\n`);
  });
  for (let i = 0; i < WORKERS; i += 1) d.startWorker(i);
  await d.enqueueFull(RESOURCES);
  return d;
}

function commits(d: HostsDeployment, resource: string): WorkerLine[] {
  return d.lines
    .filter((l) => l.msg === 'page committed' && l.resource === resource)
    .sort((a, b) => a.time - b.time || (a.page ?? 0) - (b.page ?? 0));
}

/** A worker that has committed 3 pages of a run not yet finished, and that run's resource. */
async function workerInTheMiddle(
  d: HostsDeployment,
): Promise<{ victim: number; resource: string }> {
  return waitFor(async () => {
    for (const resource of RESOURCES) {
      const pages = commits(d, resource);
      const last = pages.at(-1);
      if (last && pages.length >= 3 && (last.page ?? 0) < 30) {
        return { victim: last.worker, resource };
      }
    }
    return undefined;
  }, 60_000);
}

/**
 * Every resource read to its end: its first full run succeeded, every record
 * stored once; no two runs of one resource ran at once (a worker's schedules
 * may start another once the first has finished); and the first run's pages
 * committed by one worker after another, never two at once: in the order
 * committed, the page numbers never go back (a page may be committed again
 * only by the worker that takes the run over, where the one before it
 * stopped), and no worker comes back to the run once another has committed
 * a page of it.
 */
async function expectEachRunOnceAndWhole(d: HostsDeployment): Promise<void> {
  for (const resource of RESOURCES) {
    const runsOf = await d.db
      .withSchema('public')
      .selectFrom('sync_runs')
      .select(['id', 'outcome', 'started_at', 'finished_at'])
      .where('resource', '=', resource)
      .orderBy('id')
      .execute();
    expect(runsOf[0]?.outcome, resource).toBe('succeeded');
    runsOf.slice(1).forEach((later, i) => {
      const earlier = runsOf[i];
      expect(
        earlier?.finished_at,
        `${resource}: run ${later.id} began before run ${earlier?.id} ended`,
      ).not.toBeNull();
      expect(Date.parse(String(later.started_at))).toBeGreaterThanOrEqual(
        Date.parse(String(earlier?.finished_at)),
      );
    });
    const live = await d.liveIds(resource);
    expect(live).toEqual(d.expectedIds(resource));
    expect(new Set(live).size).toBe(live.length);
    const pages = commits(d, resource).filter((p) => p.runId === runsOf[0]?.id);
    const workersInTurn = pages
      .map((p) => p.worker)
      .filter((worker, i, all) => i === 0 || all[i - 1] !== worker);
    expect(new Set(workersInTurn).size, `${resource}: ${workersInTurn}`).toBe(workersInTurn.length);
    pages.forEach((p, i) => {
      const before = pages[i - 1];
      if (!before) return;
      const step = (p.page ?? 0) - (before.page ?? 0);
      expect(
        step === 1 || (step === 0 && p.worker !== before.worker),
        `${resource}: page ${p.page}`,
      ).toBe(true);
    });
  }
}

describe.runIf(runs)('workers on three hosts sharing one Redis and one Postgres', () => {
  it('take over the run of a host whose link is cut, and the host, back, writes nothing more', async () => {
    const d = await deployment();
    const { victim, resource } = await workerInTheMiddle(d);
    d.hosts.cut(victim);
    // Another worker takes the run over and commits pages of it.
    await waitFor(async () => commits(d, resource).some((p) => p.worker !== victim), 60_000, 100);
    await waitFor(
      async () => (await d.succeededRuns(RESOURCES)) === RESOURCES.length,
      120_000,
      200,
    );
    const redis = new Redis(d.env.REDIS_URL as string);
    defer(() => redis.disconnect());
    const { nowMs: restoredAtMs } = await readWorkers(redis, d.config.redisPrefix);
    // The runs there were while it was away: none of them is its any more.
    const runOf = (l: { resource?: string; runId?: string }) => `${l.resource} run ${l.runId}`;
    const runsBefore = new Set(d.lines.filter((l) => l.runId !== undefined).map(runOf));
    d.hosts.restore(victim);
    const restoredAt = d.lines.length;
    // Back on the network: its heartbeat reaches Redis again (every 15 s).
    const victimPid = d.workers[victim]?.pid;
    await waitFor(
      async () =>
        (await readWorkers(redis, d.config.redisPrefix)).workers.some(
          (w) => w.pid === victimPid && w.lastSeenMs > restoredAtMs,
        ),
      60_000,
      250,
    );
    // Back, it commits nothing more of those runs: they are the others' now. (A run
    // queued since, a schedule's, is its to take like any worker's.)
    const after = d.lines.slice(restoredAt).filter((l) => l.worker === victim);
    expect(
      after
        .filter((l) => l.msg === 'page committed' && runsBefore.has(runOf(l)))
        .map((l) => `${runOf(l)} page ${l.page}`),
      after.map((l) => JSON.stringify(l)).join('\n'),
    ).toEqual([]);
    await expectEachRunOnceAndWhole(d);
  }, 240_000);

  it('take over the run of a worker killed with SIGKILL', async () => {
    const d = await deployment();
    const { victim, resource } = await workerInTheMiddle(d);
    const killed = d.workers[victim];
    const exited = new Promise((resolve) => killed?.once('exit', resolve));
    killed?.kill('SIGKILL');
    await exited;
    await waitFor(async () => commits(d, resource).some((p) => p.worker !== victim), 60_000, 100);
    await waitFor(
      async () => (await d.succeededRuns(RESOURCES)) === RESOURCES.length,
      120_000,
      200,
    );
    await expectEachRunOnceAndWhole(d);
  }, 240_000);
});
