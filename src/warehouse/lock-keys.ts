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
