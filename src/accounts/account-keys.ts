import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

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

/** Deletes the keys matching `pattern` (a SCAN glob), with SCAN, never KEYS; returns how many. */
async function deleteMatching(redis: Redis, pattern: string): Promise<number> {
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length > 0) deleted += await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  return deleted;
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
  redis: Redis,
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
