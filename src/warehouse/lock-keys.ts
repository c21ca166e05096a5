import { createHash } from 'node:crypto';

/** First key of every hiresync advisory lock ('hire'), so they never meet another app's. */
export const LOCK_SPACE = 0x68697265;

/** A stable non-negative int4 for a lock name (FNV-1a), the second advisory-lock key. */
export function lockKey(name: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(name, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash & 0x7fffffff;
}

/**
 * The advisory-lock key of a run's lock: 64 bits of SHA-256 of its name, in
 * Postgres's single-bigint key space, so the runs of thousands of
 * (account, resource) pairs never share a key by chance (31 bits would:
 * the birthday bound is reached around 50,000 names).
 */
export function runLockKey(name: string): bigint {
  return createHash('sha256').update(`hiresync run lock\n${name}`).digest().readBigInt64BE(0);
}

/**
 * The key of a run lock's fence. A run may write a page on a pooled
 * connection, beside the page its lock's session is writing (see
 * src/warehouse/pages/pipelined-page.ts); that connection does not hold the
 * run lock, and would commit even after the session died and another
 * session took the lock. So such a page holds this key shared (taken before
 * it checks that its run still holds the lock, held until it commits), and
 * whoever takes the run lock then takes this key exclusively
 * ({@link awaitRunFence}) before it writes anything: it waits for the pages
 * the lock's previous holder was still committing elsewhere, which all
 * checked the lock before the session died.
 */
export function runFenceKey(name: string): bigint {
  return createHash('sha256').update(`hiresync run fence\n${name}`).digest().readBigInt64BE(0);
}

/**
 * A select-list item for a statement that has just taken the run lock of
 * `name`: waits for the pages of an earlier holder still being committed on
 * pooled connections (see {@link runFenceKey}), and holds the fence until
 * the statement's transaction ends (a statement of its own: at its end).
 * Its key is a literal (a hash, not input).
 */
export function awaitRunFence(name: string): string {
  return `pg_advisory_xact_lock(${runFenceKey(name)}::bigint)::text`;
}

/** A select-list item that holds the fence of `name` shared until the transaction ends (a page committed beside its run's session). */
export function holdRunFence(name: string): string {
  return `pg_advisory_xact_lock_shared(${runFenceKey(name)}::bigint)::text`;
}
