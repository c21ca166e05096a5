import type { Redis } from 'ioredis';
import { DEFAULT_ACCOUNT, runKey } from '../account-name.js';
import type { ResourceName } from '../config.js';
import type { Checkpoint, CheckpointStore } from '../sync/ports.js';

/**
 * Checkpoints in Redis, one JSON value per (account, resource), with no
 * expiry: an interrupted run resumes however long the worker was down. A
 * store serves one account (`default` unless told).
 */
export class RedisCheckpointStore implements CheckpointStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #account: string;

  constructor(redis: Redis, prefix = 'hiresync', account = DEFAULT_ACCOUNT) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#account = account;
  }

  #key(resource: ResourceName): string {
    return `${this.#prefix}:checkpoint:${runKey(this.#account, resource)}`;
  }

  /** The checkpoint; one saved before extra walks existed (no `walk`) is in the default walk, 0. */
  async load(resource: ResourceName): Promise<Checkpoint | undefined> {
    const text = await this.#redis.get(this.#key(resource));
    if (text === null) return undefined;
    const checkpoint = JSON.parse(text) as Checkpoint;
    return { ...checkpoint, walk: checkpoint.walk ?? 0 };
  }

  async save(checkpoint: Checkpoint): Promise<void> {
    await this.#redis.set(this.#key(checkpoint.resource), JSON.stringify(checkpoint));
  }

  async clear(resource: ResourceName): Promise<void> {
    await this.#redis.del(this.#key(resource));
  }
}
