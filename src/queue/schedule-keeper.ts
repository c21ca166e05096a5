import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { type SyncJobData, scheduleKeys, upsertSchedules } from './sync-queue.js';

/** What /healthz reports of the schedules. */
export type SchedulesHealth = 'ok' | 'missing' | 'unknown';

/** Options of {@link ScheduleKeeper}. */
export interface ScheduleKeeperOptions {
  queue: Queue<SyncJobData>;
  config: Pick<
    Config,
    'resources' | 'incrementalEveryMs' | 'fullCron' | 'runAttempts' | 'runBackoffMs'
  >;
  logger: Logger;
  /** How often the schedulers are compared with the configured ones. Default 60 s. */
  intervalMs?: number;
}

/**
 * Watches the worker's BullMQ job schedulers and re-creates them when Redis has
 * lost them (FLUSHDB, a failover to an empty replica): without them the worker
 * would idle forever while looking healthy. Checks every `intervalMs`, on every
 * reconnection of the queue's Redis connection, and when /healthz finds a
 * scheduler missing. BullMQ stays the scheduler; this only upserts again.
 */
export class ScheduleKeeper {
  readonly #options: ScheduleKeeperOptions;
  #timer: NodeJS.Timeout | undefined;
  #redis: Redis | undefined;
  #repairing: Promise<string[]> | undefined;
  readonly #onReady = () => {
    void this.repair();
  };

  constructor(options: ScheduleKeeperOptions) {
    this.#options = options;
  }

  /** Scheduler keys the configuration wants and Redis does not hold. Read-only. */
  async missing(): Promise<string[]> {
    const present = new Set(
      (await this.#options.queue.getJobSchedulers()).map((s) => s.key ?? s.id ?? ''),
    );
    return scheduleKeys(this.#options.config.resources).filter((key) => !present.has(key));
  }

  /** `ok`, or `missing` (and a repair starts in the background), or `unknown` when Redis does not answer. */
  async health(timeoutMs = 2000): Promise<{ schedules: SchedulesHealth; missing: string[] }> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const missing = await Promise.race([
        this.missing(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer')), timeoutMs);
        }),
      ]);
      if (missing.length === 0) return { schedules: 'ok', missing };
      void this.repair();
      return { schedules: 'missing', missing };
    } catch {
      return { schedules: 'unknown', missing: [] };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Re-creates missing schedulers; returns the keys it found missing. One repair at a time. */
  repair(): Promise<string[]> {
    this.#repairing ??= this.#repair().finally(() => {
      this.#repairing = undefined;
    });
    return this.#repairing;
  }

  async #repair(): Promise<string[]> {
    const { logger } = this.#options;
    try {
      const missing = await this.missing();
      if (missing.length === 0) return [];
      logger.warn(
        { missing },
        'job schedulers missing from Redis (keys lost: FLUSHDB or failover?); re-creating them',
      );
      await upsertSchedules(this.#options.queue, this.#options.config);
      logger.info({ schedules: missing }, 'job schedulers re-created');
      return missing;
    } catch (error) {
      logger.warn({ err: coerceError(error) }, 'could not check the job schedulers; will retry');
      return [];
    }
  }

  /** Starts the periodic check and the check on reconnection of `redis` (the queue's connection). */
  start(redis?: Redis): void {
    clearInterval(this.#timer);
    this.#redis?.off('ready', this.#onReady);
    this.#timer = setInterval(() => void this.repair(), this.#options.intervalMs ?? 60_000);
    this.#timer.unref();
    this.#redis = redis;
    redis?.on('ready', this.#onReady);
  }

  /** Stops checking; waits for a repair under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#redis?.off('ready', this.#onReady);
    this.#redis = undefined;
    await this.#repairing;
  }
}
