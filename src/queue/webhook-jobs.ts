import { createHash } from 'node:crypto';
import { type Job, Queue } from 'bullmq';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import type { Config } from '../config/types.js';
import type { RedisConnection } from '../redis/connect.js';
import { enqueueRun, type SyncJobData } from './sync-job.js';

/** The queue of webhooks' delete events, apart from the runs': its jobs are short and never wait on the API. */
export const WEBHOOK_QUEUE_NAME = 'webhooks';

/** A job: a delete event's records to soft-delete, in order. */
export interface WebhookDeleteJobData {
  account: string;
  /** The event's action (`delete_candidate`, `job_deleted`, `job_post_deleted`). */
  action: string;
  /** Its Greenhouse-Event-ID, for the log; null when it carried none. */
  eventId: string | null;
  deletions: { resource: string; ids: string[] }[];
  /** How many times a run of the resource held it up; set by the processor. */
  busyWaits?: number;
}

export type WebhookDeleteJob = Job<WebhookDeleteJobData, void>;

/** The queue of delete events. */
export function createWebhookQueue(
  connection: RedisConnection,
  prefix: string,
): Queue<WebhookDeleteJobData> {
  return new Queue<WebhookDeleteJobData>(WEBHOOK_QUEUE_NAME, { connection, prefix });
}

/**
 * Queues a delete event's work. Attempts: 10, from 1 s doubling (Postgres
 * away); a run holding the resource delays the job without spending one.
 */
export async function enqueueWebhookDeletion(
  queue: Queue<WebhookDeleteJobData>,
  data: WebhookDeleteJobData,
): Promise<void> {
  await queue.add(data.action, data, {
    attempts: 10,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 1000 },
  });
}

/**
 * Queues an incremental run (`auto`: a full one if the resource has never
 * had one) of `resource` of `account` on the shared queue, origin
 * `webhook`: one waiting at a time per (account, resource), see enqueueRun.
 */
export async function enqueueWebhookRun(
  queue: Queue<SyncJobData>,
  account: string,
  resource: string,
  config: Pick<Config, 'runAttempts' | 'runBackoffMs'>,
): Promise<void> {
  const data = { resource, requested: 'auto', origin: 'webhook' } as const;
  await enqueueRun(queue, account === DEFAULT_ACCOUNT ? data : { ...data, account }, config);
}

/** How long an event id is remembered: 8 days, beyond the vendor's retries (15 hours) and a week. */
export const WEBHOOK_EVENT_TTL_SECONDS = 8 * 86_400;

/**
 * Event ids already acted on, per account, in Redis under the deployment's
 * prefix: `<prefix>:webhook-event:<account>:<event id>` (an id of other
 * characters than letters, digits and `._-`, or longer than 100, by its
 * SHA-256), set with NX and an expiry of {@link WEBHOOK_EVENT_TTL_SECONDS}.
 */
export class WebhookEventLedger {
  readonly #redis: RedisConnection;
  readonly #prefix: string;
  readonly #ttlSeconds: number;

  constructor(redis: RedisConnection, prefix: string, ttlSeconds = WEBHOOK_EVENT_TTL_SECONDS) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#ttlSeconds = ttlSeconds;
  }

  /** The key of an event id of `account`. */
  key(account: string, eventId: string): string {
    const id = /^[A-Za-z0-9._-]{1,100}$/.test(eventId)
      ? eventId
      : `sha256-${createHash('sha256').update(eventId).digest('hex')}`;
    return `${this.#prefix}:webhook-event:${account}:${id}`;
  }

  /** Claims the event id: true the first time within the window, false for a repeat. */
  async claim(account: string, eventId: string): Promise<boolean> {
    const set = await this.#redis.set(
      this.key(account, eventId),
      '1',
      'EX',
      this.#ttlSeconds,
      'NX',
    );
    return set === 'OK';
  }

  /** Forgets a claim (its work could not be queued): the vendor's retry acts. */
  async release(account: string, eventId: string): Promise<void> {
    await this.#redis.del(this.key(account, eventId));
  }
}
