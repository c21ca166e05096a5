import { DEFAULT_ACCOUNT, runKey } from '../account-name.js';
import type { ResourceName } from '../config/load-config.js';
import type { RedisConnection } from '../redis/connect.js';
import type { Checkpoint, CheckpointStore } from '../sync/ports.js';

/**
 * Checkpoints in Redis, one JSON value per (account, resource), with no
 * expiry: an interrupted run resumes however long the worker was down. A
 * store serves one account (`default` unless told).
 */
export class RedisCheckpointStore implements CheckpointStore {
  readonly #redis: RedisConnection;
  readonly #prefix: string;
  readonly #account: string;

  constructor(redis: RedisConnection, prefix = 'hiresync', account = DEFAULT_ACCOUNT) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#account = account;
  }

  #key(resource: ResourceName): string {
    return checkpointKey(this.#prefix, this.#account, resource);
  }

  /** The checkpoint; one saved before extra walks existed (no `walk`) is in the default walk, 0. */
  async load(resource: ResourceName): Promise<Checkpoint | undefined> {
    return parseCheckpoint(await this.#redis.get(this.#key(resource)));
  }

  async save(checkpoint: Checkpoint): Promise<void> {
    await this.#redis.set(this.#key(checkpoint.resource), JSON.stringify(checkpoint));
  }

  async clear(resource: ResourceName): Promise<void> {
    await this.#redis.del(this.#key(resource));
  }
}

/** The key of the checkpoint of (`account`, `resource`) under `prefix`. */
function checkpointKey(prefix: string, account: string, resource: ResourceName): string {
  return `${prefix}:checkpoint:${runKey(account, resource)}`;
}

/** A stored checkpoint; one saved before extra walks existed (no `walk`) is in the default walk, 0. */
function parseCheckpoint(text: string | null): Checkpoint | undefined {
  if (text === null) return undefined;
  const checkpoint = JSON.parse(text) as Checkpoint;
  return { ...checkpoint, walk: checkpoint.walk ?? 0 };
}

/** Keys per MGET of {@link loadCheckpoints}: a bounded command, however many are asked. */
const KEYS_PER_COMMAND = 1000;

/**
 * The checkpoints of many (account, resource) pairs in one round trip (an
 * MGET per thousand keys, pipelined), in their order: undefined where none
 * is pending.
 */
export async function loadCheckpoints(
  redis: RedisConnection,
  prefix: string,
  pairs: ReadonlyArray<{ account: string; resource: ResourceName }>,
): Promise<Array<Checkpoint | undefined>> {
  if (pairs.length === 0) return [];
  const keys = pairs.map((p) => checkpointKey(prefix, p.account, p.resource));
  const pipeline = redis.pipeline();
  for (let at = 0; at < keys.length; at += KEYS_PER_COMMAND) {
    pipeline.mget(keys.slice(at, at + KEYS_PER_COMMAND));
  }
  const replies = (await pipeline.exec()) ?? [];
  return replies.flatMap(([error, values]) => {
    if (error) throw error;
    return (values as Array<string | null>).map(parseCheckpoint);
  });
}
