import { LOCK_SPACE } from '../../lock-keys.js';

/**
 * The reference tables: the lists job_boards, referrers and sources, which the
 * nested objects of tracking links write too. Listed in the one order every
 * writer takes their locks in (see {@link accountReferenceLocksText}).
 */
export const REFERENCE_TABLES = ['job_boards', 'referrers', 'sources'] as const;

/** One of the {@link REFERENCE_TABLES}. */
export type ReferenceTable = (typeof REFERENCE_TABLES)[number];

/** Whether `table` is one of the {@link REFERENCE_TABLES}. */
export function isReferenceTable(table: string): table is ReferenceTable {
  return (REFERENCE_TABLES as readonly string[]).includes(table);
}

const accountLockTexts = new Map<string, string>();

/**
 * The statement that takes, for the rest of the transaction, the write lock of
 * each of `tables` of an account, its schema bound as `$1` (text): an
 * advisory lock keyed (LOCK_SPACE, hashtext of `schema.table`), so two
 * accounts never wait on each other (a hash collision only makes them wait,
 * never write wrong). The same keys as ever: `public.job_boards` for
 * `default`, `acme.job_boards` for acme.
 *
 * Why: a tracking-links page (nested copies) and a reference list's page or
 * sweep of one account can write the same id at once. Under read committed
 * the second statement waits on the first's row lock, with its snapshot taken
 * before the wait: it then fails to close the version the first opened and
 * opens its own, two open versions of one id. Run as a statement of its own
 * BEFORE the writing statement, the lock is held before that statement's
 * snapshot is taken, so the second writer sees the first's versions. One
 * cheap statement per page (no row is read). Locks are taken in the order of
 * {@link REFERENCE_TABLES} (select-list items are evaluated left to right),
 * so two writers of several tables never deadlock.
 */
export function accountReferenceLocksText(tables: readonly ReferenceTable[]): string {
  const ordered = REFERENCE_TABLES.filter((table) => tables.includes(table));
  const key = ordered.join(',');
  let text = accountLockTexts.get(key);
  if (text === undefined) {
    const locks = ordered.map(
      (table) => `pg_advisory_xact_lock(${LOCK_SPACE}, hashtext($1::text || '.${table}'))`,
    );
    text = `select ${locks.join(', ')}`;
    accountLockTexts.set(key, text);
  }
  return text;
}
