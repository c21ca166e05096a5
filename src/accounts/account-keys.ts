import type { Queue } from 'bullmq';
import { deleteMatching, type RedisConnection } from '../redis/connect.js';

/**
 * The BullMQ job schedulers of a registered account on `queue` (the shared
 * queue `sync`): keys `incremental:<account>:<resource>` and
 * `full:<account>:<resource>`, whatever its resources. Removes them and
 * returns their keys. `default`'s schedulers (keys without an account) are
 * never matched.
 */
export async function removeAccountSchedulers(queue: Queue, account: string): Promise<string[]> {
  const mine = (key: string) =>
    key.startsWith(`incremental:${account}:`) || key.startsWith(`full:${account}:`);
  const keys = (await queue.getJobSchedulers())
    .map((s) => s.key ?? s.id ?? '')
    .filter((key) => mine(key));
  for (const key of keys) await queue.removeJobScheduler(key);
  return keys;
}

/**
 * Deletes what Redis holds for a removed account: its checkpoints
 * (`<prefix>:checkpoint:<account>:*`) and, given its credential's namespace
 * (hiresync.accounts.credential_namespace), the shared token, the token lock
 * and the rate-limit pacing state (`<prefix>:token:<ns>`,
 * `<prefix>:token-lock:<ns>`, `<prefix>:rate:<ns>*`). Pass no namespace when
 * another account shares the credential. Returns how many keys went.
 */
export async function deleteAccountKeys(
  redis: RedisConnection,
  prefix: string,
  account: string,
  namespace: string | undefined,
): Promise<number> {
  let deleted = await deleteMatching(redis, `${prefix}:checkpoint:${account}:*`);
  if (namespace) {
    deleted += await redis.del(`${prefix}:token:${namespace}`, `${prefix}:token-lock:${namespace}`);
    deleted += await deleteMatching(redis, `${prefix}:rate:${namespace}*`);
  }
  return deleted;
}

/** What `accounts remove` records in Redis before it unregisters an account, until its Redis cleanup is done. */
export interface PendingRemoval {
  /** The account's credential namespace (hiresync.accounts.credential_namespace), or null. */
  namespace: string | null;
  /** Whether its schema was to be dropped. */
  dropData: boolean;
}

function removalKey(prefix: string, account: string): string {
  return `${prefix}:removing:${account}`;
}

/**
 * Records that `account` is being removed (`<prefix>:removing:<account>`),
 * with what its Redis cleanup needs once its row is gone: a later `accounts
 * remove` of the name finishes that cleanup when the first one could not.
 */
export async function markRemoval(
  redis: RedisConnection,
  prefix: string,
  account: string,
  removal: PendingRemoval,
): Promise<void> {
  await redis.set(removalKey(prefix, account), JSON.stringify(removal));
}

/** The removal of `account` recorded by {@link markRemoval} and not yet cleared; undefined when none. */
export async function pendingRemoval(
  redis: RedisConnection,
  prefix: string,
  account: string,
): Promise<PendingRemoval | undefined> {
  const text = await redis.get(removalKey(prefix, account));
  if (text === null) return undefined;
  try {
    const value = JSON.parse(text) as Partial<PendingRemoval>;
    return {
      namespace: typeof value.namespace === 'string' ? value.namespace : null,
      dropData: value.dropData === true,
    };
  } catch {
    return { namespace: null, dropData: false };
  }
}

/** Clears the record of {@link markRemoval}. */
export async function clearRemoval(
  redis: RedisConnection,
  prefix: string,
  account: string,
): Promise<void> {
  await redis.del(removalKey(prefix, account));
}
