import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/connect.js';
import { throttledWarn } from './throttled-warn.js';

/** How often a worker records that it is alive (docs/status.md, "Workers, queue and next runs"). */
export const HEARTBEAT_PERIOD_MS = 15_000;

/** How long a worker's live entry outlives its last heartbeat: three periods. */
export const HEARTBEAT_TTL_MS = 3 * HEARTBEAT_PERIOD_MS;

/** How many workers the deployment's record remembers (the most recently seen); the rest are dropped. */
export const WORKERS_REMEMBERED = 50;

/** Who a worker process is: the same for its whole life. Nothing secret. */
export interface WorkerIdentity {
  /** A random id of the process, unique across restarts and hosts. */
  id: string;
  host: string;
  pid: number;
  /** When it started, ISO 8601 UTC. */
  startedAt: string;
  /** hiresync's version it runs. */
  version: string;
}

/** A worker as the deployment's record holds it. */
export interface WorkerSeen extends WorkerIdentity {
  /** Its last heartbeat (or its clean stop), milliseconds since the epoch by Redis's clock. */
  lastSeenMs: number;
  /** Its live entry is still there: it beat within {@link HEARTBEAT_TTL_MS} and has not stopped. */
  alive: boolean;
}

/**
 * The sorted set of the workers the deployment has run (member: a worker's
 * identity as JSON, score: its last heartbeat by Redis's clock), kept for
 * good (the {@link WORKERS_REMEMBERED} latest): that it is not empty is the
 * durable mark that this deployment runs workers.
 */
export function workersKey(prefix: string): string {
  return `${prefix}:workers`;
}

/** A worker's live entry: set with a TTL at each heartbeat, deleted at its clean stop. */
export function workerLiveKey(prefix: string, id: string): string {
  return `${prefix}:worker:${id}`;
}

/** Redis's clock now, in milliseconds since the epoch: the one clock every heartbeat is judged by. */
export async function redisNowMs(redis: RedisConnection): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** A running heartbeat. */
export interface Heartbeat {
  readonly identity: WorkerIdentity;
  /** Stops beating; unless `force` (Redis does not answer), removes its live entry and records the stop as last seen. */
  stop(force?: boolean): Promise<void>;
}

/**
 * Records that this worker process is alive under `prefix`, at once and then
 * every {@link HEARTBEAT_PERIOD_MS}: its live entry (expiring after
 * {@link HEARTBEAT_TTL_MS}) and its last heartbeat in the deployment's
 * record of workers. A heartbeat that fails (Redis away) is logged at most
 * once a minute and tried again at the next period; the first one must
 * succeed (a worker that cannot write to Redis does not start).
 */
export async function startHeartbeat(
  redis: RedisConnection,
  prefix: string,
  options: { version: string; logger: Logger; now?: () => Date },
): Promise<Heartbeat> {
  const identity: WorkerIdentity = {
    id: randomUUID(),
    host: hostname(),
    pid: process.pid,
    startedAt: (options.now?.() ?? new Date()).toISOString(),
    version: options.version,
  };
  const member = JSON.stringify(identity);
  const live = workerLiveKey(prefix, identity.id);
  const record = async (alive: boolean) => {
    const now = await redisNowMs(redis);
    const write = redis.multi();
    if (alive) write.set(live, member, 'PX', HEARTBEAT_TTL_MS);
    else write.del(live);
    await write
      .zadd(workersKey(prefix), now, member)
      .zremrangebyrank(workersKey(prefix), 0, -(WORKERS_REMEMBERED + 1))
      .exec();
  };
  await record(true);
  const warn = throttledWarn(options.logger, 'heartbeat not recorded; tried again at the next');
  let beating: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    beating = record(true).catch(warn);
  }, HEARTBEAT_PERIOD_MS);
  timer.unref();
  return {
    identity,
    stop: async (force = false) => {
      clearInterval(timer);
      await beating;
      if (!force) await record(false);
    },
  };
}

/**
 * The workers the deployment under `prefix` has run, the most recently seen
 * first, each alive or not, and Redis's clock now: three round trips
 * whatever their number (at most {@link WORKERS_REMEMBERED}). None: no
 * worker of this deployment ever ran (it syncs from cron, or not yet).
 */
export async function readWorkers(
  redis: RedisConnection,
  prefix: string,
): Promise<{ nowMs: number; workers: WorkerSeen[] }> {
  const [nowMs, flat] = await Promise.all([
    redisNowMs(redis),
    redis.zrevrange(workersKey(prefix), 0, -1, 'WITHSCORES'),
  ]);
  const seen: Array<Omit<WorkerSeen, 'alive'>> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const identity = parseIdentity(flat[i] as string);
    if (identity) seen.push({ ...identity, lastSeenMs: Number(flat[i + 1]) });
  }
  const live =
    seen.length === 0 ? [] : await redis.mget(seen.map((w) => workerLiveKey(prefix, w.id)));
  return { nowMs, workers: seen.map((w, i) => ({ ...w, alive: live[i] != null })) };
}

/** A member of the record of workers, or undefined for one that is not an identity. */
function parseIdentity(text: string): WorkerIdentity | undefined {
  try {
    const v = JSON.parse(text) as Partial<WorkerIdentity>;
    if (typeof v.id !== 'string' || typeof v.host !== 'string' || typeof v.pid !== 'number')
      return undefined;
    return {
      id: v.id,
      host: v.host,
      pid: v.pid,
      startedAt: String(v.startedAt ?? ''),
      version: String(v.version ?? ''),
    };
  } catch {
    return undefined;
  }
}
