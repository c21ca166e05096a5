import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import { DEFAULT_ACCOUNT, runKey, schemaOf } from '../../account-name.js';
import { HiresyncError } from '../../errors.js';
import { awaitRunFence, runLockKey } from '../lock-keys.js';
import { carriedId } from '../pages/record-texts.js';
import { accountReferenceLocksText, isReferenceTable } from '../pages/sql/reference-locks.js';
import type { Database } from '../tables.js';
import { eraseRecords as eraseRecordsText } from './sql/erase-records.js';

/** What erasure needs of a resource: its name and where its records and versions are. */
export interface ErasableResource {
  /** As in rejected_records.resource and sync_runs.resource. */
  readonly name: string;
  /** Its records (`jobs`, `tracking_links`, `applications_data`, …): the account's relation over hiresync.data_<table>. */
  readonly table: string;
  /** Every version of its records: `<name>_history`. */
  readonly historyTable: string;
}

/** Whose records an erasure removes, and how long it may wait for a run of them. */
export interface ErasureTarget {
  account: string;
  resource: ErasableResource;
  /**
   * Longest wait for the (account, resource)'s Postgres run lock, held by a
   * run in progress for its whole run; past it, {@link ResourceBusyError}.
   */
  waitMs: number;
}

/** Why a record was erased, as hiresync.erasures.origin records it. */
export type ErasureOrigin = 'command' | 'deleted_after';

/** What erasing one id removed, as recorded in hiresync.erasures. */
export interface ErasedRecord {
  /** hiresync.erasures.id of its row. */
  erasureId: string;
  /** The record's id (text: ids may pass 2^53). */
  id: string;
  /** 1 when a row of the id was stored, else 0. */
  rows: number;
  historyVersions: number;
  rejectedRecords: number;
}

/**
 * A run of the (account, resource) held its Postgres lock for longer than
 * the erasure would wait: nothing was erased.
 */
export class ResourceBusyError extends HiresyncError {}

/**
 * Throws unless the erasure log (hiresync.erasures, migration hiresync/0010)
 * exists: nothing may be erased that could not be logged.
 */
export async function assertErasureLog(db: Kysely<Database>): Promise<void> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.erasures') is not null as present`.execute(db);
  if (!rows[0]?.present) {
    throw new HiresyncError(
      "this database has no erasure log (hiresync.erasures): run 'hiresync migrate' first; nothing was erased",
    );
  }
}

/** SQLSTATE of lock_timeout expiring (lock_not_available). */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Takes, for the rest of `trx`, the locks that keep every writer of the
 * target's rows out: the (account, resource)'s run lock, which a run holds
 * on its own connection from its start to its end (ResourceLock), taken
 * here as a transaction lock on the same key; and for a reference table
 * (job_boards, referrers, sources), also its write lock, which the pages of
 * tracking links (nested copies) take too (accountReferenceLocksText). Both are
 * taken before any statement reads the target's rows, so no page or sweep
 * of a run writes them between the erasure's reads and its deletes, and the
 * run's next page sees them gone. A run in progress holds its lock until it
 * ends: the wait is bounded by `waitMs` (lock_timeout, for these two locks
 * only), then {@link ResourceBusyError}.
 *
 * The reference lock is taken as the pages take it (accountReferenceLocksText).
 */
async function lockForErasure(trx: Transaction<Database>, target: ErasureTarget): Promise<void> {
  const name = runKey(target.account, target.resource.name);
  const { rows } = await sql<{ previous: string }>`
    select current_setting('lock_timeout') as previous,
      set_config('lock_timeout', ${`${Math.max(1, Math.round(target.waitMs))}ms`}, true)`.execute(
    trx,
  );
  try {
    await sql`select pg_advisory_xact_lock(${runLockKey(name).toString()}::bigint)::text,
      ${sql.raw(awaitRunFence(name))}`.execute(trx);
    if (isReferenceTable(target.resource.table)) {
      await trx.executeQuery(
        CompiledQuery.raw(accountReferenceLocksText([target.resource.table]), [
          schemaOf(target.account),
        ]),
      );
    }
  } catch (error) {
    if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
    const account = target.account === DEFAULT_ACCOUNT ? '' : ` of account ${target.account}`;
    throw new ResourceBusyError(
      `a run of ${target.resource.name}${account} holds its resource (a sync in progress) for longer than the erasure waits (${Math.round(target.waitMs / 1000)} s): nothing was erased; run it again when the run has ended ('hiresync status' shows it), or wait longer (hiresync erase --wait)`,
      { cause: error },
    );
  }
  await sql`select set_config('lock_timeout', ${rows[0]?.previous ?? '0'}, true)`.execute(trx);
}

/**
 * Runs `work` in one transaction on `db` under the target's locks (see
 * {@link lockForErasure}).
 */
export function withErasureLock<T>(
  db: Kysely<Database>,
  target: ErasureTarget,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await lockForErasure(trx, target);
    return work(trx);
  });
}

/**
 * The rejected records of `resource` kept as JSON text (Postgres could not
 * hold them as jsonb) whose top-level id is one of `ids`: their ids, and the
 * record id of each. Read from the text as the statement reads those kept as
 * jsonb: an integral number in any form, or a string of digits (carriedId).
 */
async function textRejects(
  trx: Transaction<Database>,
  account: string,
  resource: string,
  ids: ReadonlySet<string>,
): Promise<{ rejected: string[]; records: string[] }> {
  const { rows } = await sql<{ id: string; text: string }>`
    select id::text as id, raw #>> '{}' as text from hiresync.data_rejected_records
    where account = ${account} and resource = ${resource} and jsonb_typeof(raw) = 'string'`.execute(
    trx,
  );
  const rejected: string[] = [];
  const records: string[] = [];
  for (const row of rows) {
    const id = carriedId(row.text);
    if (id === undefined || !ids.has(id)) continue;
    rejected.push(row.id);
    records.push(id);
  }
  return { rejected, records };
}

/**
 * Erases `ids` of the target in `trx` (which holds its locks: see
 * {@link withErasureLock}), and records each in hiresync.erasures, found or
 * not, with `origin` and `note`. Returns one entry per distinct id, in id order.
 */
export async function eraseInTransaction(
  trx: Transaction<Database>,
  target: ErasureTarget,
  ids: readonly string[],
  origin: ErasureOrigin,
  note: string | null,
): Promise<ErasedRecord[]> {
  if (ids.length === 0) return [];
  const { resource } = target;
  const wanted = new Set(ids.map((id) => BigInt(id).toString()));
  const texts = await textRejects(trx, target.account, resource.name, wanted);
  const { rows } = await trx.executeQuery<{
    erasure_id: string;
    id: string;
    rows_erased: number;
    history_versions_erased: number;
    rejected_records_erased: number;
  }>(
    CompiledQuery.raw(eraseRecordsText({ table: resource.table, history: resource.historyTable }), [
      [...wanted],
      resource.name,
      target.account,
      origin,
      note,
      texts.rejected,
      texts.records,
    ]),
  );
  return rows.map((row) => ({
    erasureId: row.erasure_id,
    id: row.id,
    rows: row.rows_erased,
    historyVersions: row.history_versions_erased,
    rejectedRecords: row.rejected_records_erased,
  }));
}

/**
 * Erases records of one resource of one account in one transaction: their
 * rows, every version in the history table and the rejected records whose
 * record carries their id, each recorded in hiresync.erasures (no content).
 * `db` is the pool's root instance: every statement binds `target.account`. Throws {@link ResourceBusyError}
 * when a run holds the resource longer than `target.waitMs` (nothing erased).
 */
export function eraseRecords(
  db: Kysely<Database>,
  target: ErasureTarget & { ids: readonly string[]; origin: ErasureOrigin; note: string | null },
): Promise<ErasedRecord[]> {
  return withErasureLock(db, target, (trx) =>
    eraseInTransaction(trx, target, target.ids, target.origin, target.note),
  );
}
