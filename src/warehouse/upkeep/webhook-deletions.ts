import { CompiledQuery, type Kysely, sql } from 'kysely';
import { schemaOf } from '../../account-name.js';
import { awaitRunFence, runLockKey } from '../lock-keys.js';
import type { HistoryTarget } from '../pages/history.js';
import { accountReferenceLocksText, isReferenceTable } from '../pages/sql/reference-locks.js';
import type { Database } from '../tables.js';
import { webhookDeletion } from './sql/webhook-deletion.js';

/** Options of {@link applyWebhookDeletion}. */
export interface WebhookDeletionOptions {
  /** The account whose records the event deletes. */
  account: string;
  /** The resource's table and history (the account's relations; its rows are in hiresync.data_<table>). */
  target: HistoryTarget & { readonly table: string };
  /** Ids the vendor says were deleted, as decimal text (never rounded through a JS number). */
  ids: readonly string[];
  /**
   * The name of the (account, resource)'s run lock (runKey): the deletion
   * takes that lock for its transaction, so it never runs beside a run of
   * the resource, whose pages and sweep write under the same lock.
   */
  lockName: string;
  /** Record a deletion version of each record marked (HIRESYNC_HISTORY). Default true. */
  history?: boolean;
  /** Longest wait for the lock (another delete of the resource, a short run). Default 1 s. */
  lockWaitMs?: number;
}

/** What {@link applyWebhookDeletion} did. */
export type WebhookDeletionOutcome =
  /** The rows were marked (`deleted`: how many were live). */
  | { outcome: 'applied'; deleted: number }
  /** A run of the resource held its lock past the wait: nothing was done; try again once it ends. */
  | { outcome: 'busy' }
  /** The account's schema has no table of the resource (never synced): nothing to delete. */
  | { outcome: 'no table' };

/** SQLSTATE lock_not_available: a lock was not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * A webhook's delete event, applied: the live rows of `ids` get `deleted_at`
 * (and `changed_at`) as a full run's sweep sets them, and, with history on,
 * a deletion version each (its `run_id` null: no run recorded it), in one
 * transaction on `db` (the pool's root instance: the statement names the
 * shared tables and binds `options.account`; see sql/webhook-deletion.ts).
 *
 * It first takes the (account, resource)'s run lock for the transaction
 * (`pg_advisory_xact_lock` on the key a run holds with
 * `pg_try_advisory_lock` for its whole length), in a statement of its own,
 * so the marking statement's snapshot sees every page committed before. It
 * waits `lockWaitMs` at most (lock_timeout): long enough for another delete
 * of the resource, or a short run, to end; a longer run leaves the
 * deletion undone (`busy`), to be tried again once it ends: a page the run
 * read before the deletion, written after it, would store the record again,
 * and a page and the deletion versioning one id at once could leave two
 * open versions. A run starting meanwhile finds its resource busy and
 * waits, as it would for another run.
 */
export async function applyWebhookDeletion(
  db: Kysely<Database>,
  options: WebhookDeletionOptions,
): Promise<WebhookDeletionOutcome> {
  const { target, ids } = options;
  const history = options.history === false ? undefined : target;
  const lockWaitMs = Math.max(1, Math.round(options.lockWaitMs ?? 1000));
  try {
    return await db.transaction().execute(async (trx) => {
      await sql`select set_config('lock_timeout', ${`${lockWaitMs}ms`}, true)`.execute(trx);
      // The lock first (select-list items are evaluated left to right).
      const { rows } = await sql<{ present: boolean }>`
        select pg_advisory_xact_lock(${runLockKey(options.lockName).toString()}::bigint)::text as locked,
          ${sql.raw(awaitRunFence(options.lockName))} as fenced,
          to_regclass(${`"${schemaOf(options.account)}"."${target.table}"`}) is not null as present`.execute(
        trx,
      );
      if (!rows[0]?.present) return { outcome: 'no table' };
      if (ids.length === 0) return { outcome: 'applied', deleted: 0 };
      // A reference list is written by tracking-links pages too: their lock, as the sweep takes it.
      if (isReferenceTable(target.table)) {
        await trx.executeQuery(
          CompiledQuery.raw(accountReferenceLocksText([target.table]), [schemaOf(options.account)]),
        );
      }
      const text = webhookDeletion({
        table: target.table,
        history: history?.historyTable,
        recordColumn: target.recordColumn,
      });
      const { rows: marked } = await trx.executeQuery<{ deleted: string }>(
        CompiledQuery.raw(text, [options.account, [...ids]]),
      );
      return { outcome: 'applied', deleted: Number(marked[0]?.deleted ?? 0) };
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) return { outcome: 'busy' };
    throw error;
  }
}
