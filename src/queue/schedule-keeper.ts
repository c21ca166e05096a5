import type { Queue } from 'bullmq';
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/connect.js';
import type { SyncJobData } from './sync-job.js';
import {
  changedSchedules,
  type ScheduleChanges,
  type ScheduleConfig,
  type ScheduleTarget,
  scheduleKeys,
  upsertSchedules,
} from './upsert-schedules.js';

/** What /healthz reports of the schedules. */
export type SchedulesHealth = 'ok' | 'missing' | 'unknown';

/** Options of {@link ScheduleKeeper}. */
export interface ScheduleKeeperOptions {
  queue: Queue<SyncJobData>;
  config: ScheduleConfig;
  /**
   * What the schedules must cover now: every enabled account's resources,
   * each with the account's interval and cron (its settings, else the deployment's).
   */
  targets: () => Promise<ScheduleTarget[]>;
  logger: Logger;
  /** How often the schedulers are compared with the wanted ones. Default 60 s. */
  intervalMs?: number;
}

/**
 * Keeps the worker's BullMQ job schedulers equal to what the accounts want:
 * adds those of an account added or enabled (or of a resource its settings
 * now name), removes those of an account disabled or removed (or of a
 * resource it no longer names), replaces those whose interval or cron its
 * settings changed, and re-creates them when Redis has lost them
 * (FLUSHDB, a failover to an empty replica): without them the worker would
 * idle forever while looking healthy. Checks every `intervalMs`, on every
 * reconnection of the queue's Redis connection, and when /healthz finds a
 * scheduler missing. BullMQ stays the scheduler; this only upserts and removes.
 */
export class ScheduleKeeper {
  readonly #options: ScheduleKeeperOptions;
  #timer: NodeJS.Timeout | undefined;
  #redis: RedisConnection | undefined;
  #repairing: Promise<string[]> | undefined;
  /** Keys kept at the last check: a key among them that goes missing was lost, not added. */
  #kept = new Set<string>();
  /** The targets whose schedulers were last found in Redis as wanted (see fingerprint). */
  #checked: string | undefined;
  readonly #onReady = () => {
    void this.repair();
  };

  constructor(options: ScheduleKeeperOptions) {
    this.#options = options;
  }

  /** Scheduler keys the accounts want and Redis does not hold. Read-only. */
  async missing(): Promise<string[]> {
    return (await this.#compare()).missing;
  }

  async #compare(): Promise<{
    targets: ScheduleTarget[];
    missing: string[];
    changed: string[];
    stale: boolean;
  }> {
    const [targets, keys] = await Promise.all([
      this.#options.targets(),
      schedulerKeys(this.#options.queue),
    ]);
    const wanted = new Set(scheduleKeys(targets));
    const present = new Set(keys);
    const missing = [...wanted].filter((key) => !present.has(key));
    const stale = keys.some((key) => /^(incremental|full):/.test(key) && !wanted.has(key));
    // The same targets as at the last check, and Redis holds exactly their
    // schedulers: nothing changed. Only the keys are read then (one ZRANGE),
    // not every scheduler's data: the check of an idle worker costs little
    // whatever the number of accounts.
    const seen = fingerprint(targets);
    if (missing.length === 0 && !stale && seen === this.#checked) {
      return { targets, missing, changed: [], stale };
    }
    const schedulers = await this.#options.queue.getJobSchedulers();
    const changed = changedSchedules(this.#options.config, targets, schedulers);
    if (missing.length === 0 && changed.length === 0 && !stale) this.#checked = seen;
    return { targets, missing, changed, stale };
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

  /**
   * Upserts every wanted scheduler (a changed HIRESYNC_INCREMENTAL_EVERY or
   * HIRESYNC_FULL_CRON, or account setting, takes effect) and removes the
   * stale ones: the worker's start.
   */
  async upsertAll(): Promise<ScheduleChanges> {
    const targets = await this.#options.targets();
    const changes = await upsertSchedules(this.#options.queue, this.#options.config, targets);
    this.#kept = new Set(scheduleKeys(targets));
    return changes;
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
      const { targets, missing, changed, stale } = await this.#compare();
      if (missing.length === 0 && changed.length === 0 && !stale) return [];
      const lost = missing.filter((key) => this.#kept.has(key));
      if (lost.length > 0) {
        logger.warn(
          { missing: lost },
          'job schedulers missing from Redis (keys lost: FLUSHDB or failover?); re-creating them',
        );
      }
      const changes = await upsertSchedules(
        this.#options.queue,
        this.#options.config,
        targets,
        new Set(missing),
      );
      this.#kept = new Set(scheduleKeys(targets));
      this.#checked = fingerprint(targets);
      if (changes.upserted.length > 0 || changes.removed.length > 0) {
        // An account's settings changed, or it was added, enabled, disabled or removed.
        logger.info(changes, 'job schedulers updated');
      }
      return missing;
    } catch (error) {
      logger.warn({ err: coerceError(error) }, 'could not check the job schedulers; will retry');
      return [];
    }
  }

  /** Starts the periodic check and the check on reconnection of `redis` (the queue's connection). */
  start(redis?: RedisConnection): void {
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

/** The keys of the queue's job schedulers (the members of BullMQ's repeat set), without their data. */
async function schedulerKeys(queue: Queue<SyncJobData>): Promise<string[]> {
  const client = await queue.getBackend().client;
  return client.zrange(`${queue.qualifiedName}:repeat`, 0, -1);
}

/** What the schedules of `targets` depend on, as one string. */
function fingerprint(targets: readonly ScheduleTarget[]): string {
  return JSON.stringify(targets);
}
