import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { ApiPageSource } from './api/api-page-source.js';
import { createApiClient } from './api/create-api-client.js';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics.js';
import { createQueueRedis, createRedis } from './queue/redis.js';
import { RedisCheckpointStore } from './queue/redis-checkpoint-store.js';
import { RunLock } from './queue/run-lock.js';
import { createSyncQueue, createSyncWorker, type SyncProcessorDeps } from './queue/sync-queue.js';
import { throttledWarn } from './queue/throttled-warn.js';
import { BUILT_IN_RESOURCES, type ResourceCatalog } from './resources/index.js';
import type { RunProgress } from './sync/run-resource.js';
import { createDatabase } from './warehouse/database.js';
import { ResourceLock } from './warehouse/resource-lock.js';
import { KyselyRunStore } from './warehouse/run-store.js';
import type { Database } from './warehouse/schema.js';

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Worker concurrency; default the number of configured resources. */
  concurrency?: number;
  onProgress?: (progress: RunProgress) => void;
  /** Collect Node's default process metrics. Default true. */
  defaultMetrics?: boolean;
  /** The resources the app can sync, by name. Default the built-in ones. */
  resources?: ResourceCatalog;
}

/** Everything `sync` and `worker` run on, wired from one Config. */
export interface App {
  config: Config;
  logger: Logger;
  db: Kysely<Database>;
  /** Checkpoints, tokens, pacing and locks: commands fail after a few reconnection attempts. */
  redis: Redis;
  /** BullMQ's own connection: commands wait for the reconnection. */
  queueRedis: Redis;
  metrics: Metrics;
  queue: ReturnType<typeof createSyncQueue>;
  checkpoints: RedisCheckpointStore;
  shutdown: AbortController;
  /** Starts a worker on the shared queue, or on the queue `queueName` only (a `sync` command's). */
  startWorker: (queueName?: string) => ReturnType<typeof createSyncWorker>;
  close: () => Promise<void>;
}

export function createApp(config: Config, logger: Logger, options: AppOptions = {}): App {
  const concurrency = options.concurrency ?? config.resources.length;
  const resources = options.resources ?? BUILT_IN_RESOURCES;
  // Each running run holds one connection for its Postgres resource lock and
  // uses up to one more for its page writes; two spare for everything else.
  const db = createDatabase(config.databaseUrl, { max: 2 * concurrency + 2 });
  const resourceLock = new ResourceLock(db);
  const redis = createRedis(config.redisUrl, logger, 'hiresync');
  const queueRedis = createQueueRedis(config.redisUrl, logger, 'hiresync-queue');
  const metrics = new Metrics({ defaultMetrics: options.defaultMetrics ?? true });
  const prefix = config.redisPrefix;
  const client = createApiClient({ config: config.api, redis, logger, metrics, prefix });
  const checkpoints = new RedisCheckpointStore(redis, prefix);
  const queue = createSyncQueue(queueRedis, prefix);
  // Without a listener BullMQ would print its errors raw; an outage emits one per call.
  queue.on('error', throttledWarn(logger, 'queue error'));
  const shutdown = new AbortController();
  const deps: SyncProcessorDeps = {
    source: new ApiPageSource(client, config.api, resources),
    store: new KyselyRunStore(db, {
      resources,
      recordsKey: config.api.recordsKey,
      maxDeleteFraction: config.maxDeleteFraction,
      resourceLock,
    }),
    checkpoints,
    runLock: new RunLock(redis, prefix, config.runLockTtlMs, resourceLock),
    logger,
    shutdown: shutdown.signal,
    metrics,
    onProgress: options.onProgress,
    updatedFilter:
      config.updatedFilter === undefined
        ? undefined
        : { template: config.updatedFilter, lookbackMs: config.updatedLookbackMs },
  };
  const workers: ReturnType<typeof createSyncWorker>[] = [];
  return {
    config,
    logger,
    db,
    redis,
    queueRedis,
    metrics,
    queue,
    checkpoints,
    shutdown,
    startWorker: (queueName) => {
      const worker = createSyncWorker(queueRedis, prefix, deps, {
        concurrency,
        ...(queueName === undefined ? {} : { queueName }),
      });
      worker.on('error', throttledWarn(logger, 'queue worker error'));
      workers.push(worker);
      return worker;
    },
    close: async () => {
      shutdown.abort(new Error('shutting down'));
      for (const worker of workers) await worker.close();
      await queue.close();
      await db.destroy();
      redis.disconnect();
      queueRedis.disconnect();
    },
  };
}
