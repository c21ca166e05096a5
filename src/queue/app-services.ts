import type { Kysely } from 'kysely';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import type { Config } from '../config/types.js';
import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/connect.js';
import type { Database } from '../warehouse/tables.js';
import { closeRedis } from './redis.js';
import { closeServices, type Service } from './services.js';
import type { createSyncQueue } from './sync-job.js';
import type { SyncProcessorDeps } from './sync-processor.js';
import { createSyncWorker } from './sync-worker.js';
import { throttledWarn } from './throttled-warn.js';

/** A job's BullMQ lock lasts this many run-lock lifetimes (HIRESYNC_RUN_LOCK_TTL). */
const JOB_LOCK_PER_RUN_LOCK = 4;

/** Options of App.close. */
export interface CloseOptions {
  /**
   * When (epoch milliseconds) to stop waiting for the queue workers, the queue,
   * the pool and the Redis connections: a Redis that no longer answers leaves
   * BullMQ's close, and a run's checkpoint, waiting for good. Past it they are
   * dropped as they are (a run in hand resumes from its last checkpoint).
   * Default: no deadline. A refresh grant on the wire is always waited for.
   */
  deadline?: number;
}

/** What App.close did not wait for. */
export interface CloseOutcome {
  /** The parts still closing at the deadline (`queue worker`, `database pool`, ...); none when all closed. */
  abandoned: string[];
  /** The runs (`account/resource`) still in hand when the queue workers were left; they resume from their checkpoints. */
  inHand: string[];
}

/** What an App opens that its close closes. */
export interface AppConnections {
  db: Kysely<Database>;
  redis: RedisConnection;
  queueRedis: RedisConnection;
  queue: ReturnType<typeof createSyncQueue>;
}

/**
 * An App's services: the Redis connections, the pool, the queue, the refresh
 * grants on the wire and the queue workers, in the order they were made.
 * App.close stops the runs after their page in hand and closes them in
 * reverse order: the queue workers first, then the refresh grants (waited
 * for, bounded by HIRESYNC_HTTP_TIMEOUT, before the pool closes: a rotated
 * refresh token is committed on its own connection), the queue, the pool,
 * Redis.
 */
export class AppServices {
  readonly #services: Service[];
  /** The runs in hand (`account/resource`) by job id, named should close() have to leave them. */
  readonly #running = new Map<string | undefined, string>();
  readonly #app: AppConnections & { logger: Logger; shutdown: AbortController };
  #closing: Promise<CloseOutcome> | undefined;

  constructor(
    app: AppConnections & { logger: Logger; shutdown: AbortController },
    clients: ReadonlySet<{ settled(): Promise<void> }>,
  ) {
    this.#app = app;
    const { redis, queueRedis, db, queue } = app;
    this.#services = [
      {
        name: 'Redis connections',
        // Waits for the sockets to close, so nothing of the app outlives close().
        close: async () => {
          await Promise.all([closeRedis(redis), closeRedis(queueRedis)]);
        },
        abandon: () => {
          redis.disconnect();
          queueRedis.disconnect();
        },
      },
      { name: 'database pool', close: () => db.destroy() },
      { name: 'queue', close: () => queue.close() },
      {
        name: 'refresh grants',
        close: async () => {
          await Promise.all([...clients].map((client) => client.settled()));
        },
        waitsPastDeadline: true,
      },
    ];
  }

  /** A queue worker on the shared queue, or on `queueName` only, closed with the others. */
  startWorker(
    config: Config,
    deps: SyncProcessorDeps,
    options: { concurrency: number; queueName: string | undefined },
  ): ReturnType<typeof createSyncWorker> {
    const { logger, queueRedis } = this.#app;
    const worker = createSyncWorker(queueRedis, config.redisPrefix, deps, {
      concurrency: options.concurrency,
      fullWindowMs: config.fullWindowMs,
      // Four run-lock lifetimes (60 s by default): a vanished worker's job is
      // back in the queue soon after its run lock has expired.
      jobLockMs: JOB_LOCK_PER_RUN_LOCK * config.runLockTtlMs,
      ...(options.queueName === undefined ? {} : { queueName: options.queueName }),
    });
    worker.on('error', throttledWarn(logger, 'queue worker error'));
    worker.on('active', (job) => {
      this.#running.set(job.id, `${job.data.account ?? DEFAULT_ACCOUNT}/${job.data.resource}`);
    });
    const done = (job: { id?: string | undefined } | undefined) => this.#running.delete(job?.id);
    worker.on('completed', done);
    worker.on('failed', done);
    this.#services.push({
      name: 'queue worker',
      close: ({ force }) => worker.close(force),
      // Its close never ends: drop its connections (not awaited, as they may never end either).
      abandon: () => void worker.disconnect().catch(() => undefined),
    });
    return worker;
  }

  /**
   * Redis unreachable: a graceful close waits for commands that cannot
   * leave (BullMQ's QUIT, the checkpoint of a run in hand). BullMQ's force
   * close sends none; the runs in hand resume from their last checkpoints.
   * Called again, it returns the first call's outcome.
   */
  close({ deadline = Number.POSITIVE_INFINITY }: CloseOptions = {}): Promise<CloseOutcome> {
    this.#closing ??= this.#close(deadline);
    return this.#closing;
  }

  async #close(deadline: number): Promise<CloseOutcome> {
    const { logger, queueRedis, shutdown } = this.#app;
    shutdown.abort(new Error('shutting down'));
    const force = queueRedis.status !== 'ready';
    const inHand = [...this.#running.values()];
    const stop = { deadline, force };
    const { left } = await closeServices([...this.#services].reverse(), stop, logger);
    return { abandoned: left, inHand: left.length === 0 && !force ? [] : inHand };
  }
}
