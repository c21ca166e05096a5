import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT } from '../../account-name.js';
import { coerceError } from '../../errors.js';
import { sharedRelation } from '../shared-relation.js';
import type { Database } from '../tables.js';
import {
  assertErasureLog,
  type ErasableResource,
  type ErasedRecord,
  type ErasureTarget,
  eraseInTransaction,
  ResourceBusyError,
  withErasureLock,
} from './erase-records.js';

/** An account with views of shared storage, and the schema that holds them. */
export interface ErasableAccount {
  account: string;
  schema: string;
}

/**
 * Every account whose views of shared storage exist (hiresync.schema_layouts):
 * `default` first when public has them, then the registered accounts of
 * every state (a disabled account's data is kept, so is its retention), and
 * those removed without --drop-data (their rows and views stay).
 */
export async function erasableAccounts(db: Kysely<Database>): Promise<ErasableAccount[]> {
  const { rows } = await sql<ErasableAccount>`
    select account, schema from hiresync.schema_layouts
    order by account <> ${DEFAULT_ACCOUNT}, account`.execute(db);
  return rows;
}

/**
 * The moment `afterMs` before now on Postgres's clock (the clock deleted_at
 * is written by), as ISO 8601 UTC text with milliseconds.
 */
export async function deletionCutoff(db: Kysely<Database>, afterMs: number): Promise<string> {
  const { rows } = await sql<{ before: string }>`
    select to_char((now() - ${afterMs}::bigint * interval '1 millisecond') at time zone 'UTC',
      'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as before`.execute(db);
  const before = rows[0]?.before;
  if (before === undefined) throw new Error('Postgres gave no time');
  return before;
}

/** What erasing one (account, resource)'s deleted records did. */
export interface DeletedErasure {
  account: string;
  resource: string;
  /** Records erased (each recorded in hiresync.erasures), and what of them was removed. */
  records: number;
  rows: number;
  historyVersions: number;
  rejectedRecords: number;
  /**
   * Why it stopped short: `busy` (a run held the resource past the wait) or
   * `failed`, with the message. What was erased before stays erased.
   */
  problem?: { kind: 'busy' | 'failed'; message: string } | undefined;
}

/** Options of {@link eraseDeletedOf} and {@link eraseDeletedRecords}. */
export interface EraseDeletedOptions {
  /** Records whose deleted_at is before this moment (timestamptz text) are erased. */
  before: string;
  /** hiresync.erasures.note of each (why: the setting and the cutoff). */
  note: string;
  /** Longest wait for a run of the resource, per batch (see ErasureTarget.waitMs). */
  waitMs: number;
  /** Ids erased per transaction, so that no lock is held long. Default 1,000. */
  batchSize?: number;
  /** Checked between batches: aborted, the erasure stops (what is done stays done). */
  signal?: AbortSignal | undefined;
}

/** Default ids erased per transaction. */
export const ERASE_BATCH_SIZE = 1000;

/**
 * Erases the records of one resource of one account that were deleted
 * before `options.before` (deleted_at: set by the full run that no longer
 * saw them upstream), with their history and rejected records, in
 * transactions of at most `batchSize` ids, each under the resource's locks
 * and choosing its ids under them (a record a run brought back meanwhile is
 * left alone). `db` is the pool's root instance: every statement names the
 * shared table and binds `account`. A table with nothing
 * to erase costs one read and takes no lock. A run that holds the resource
 * past the wait, or a failure, stops it short (`problem`): what was erased
 * before stays erased.
 */
export async function eraseDeletedOf(
  db: Kysely<Database>,
  account: string,
  resource: ErasableResource,
  options: EraseDeletedOptions,
): Promise<DeletedErasure> {
  const done: DeletedErasure = {
    account,
    resource: resource.name,
    records: 0,
    rows: 0,
    historyVersions: 0,
    rejectedRecords: 0,
  };
  try {
    await eraseInBatches(db, { account, resource, waitMs: options.waitMs }, options, done);
  } catch (error) {
    if (options.signal?.aborted) throw error;
    done.problem = {
      kind: error instanceof ResourceBusyError ? 'busy' : 'failed',
      message: coerceError(error).message,
    };
  }
  return done;
}

/** The batches of {@link eraseDeletedOf}, adding what each erased to `done`. */
async function eraseInBatches(
  db: Kysely<Database>,
  target: ErasureTarget,
  options: EraseDeletedOptions,
  done: DeletedErasure,
): Promise<void> {
  const table = sql.raw(sharedRelation(target.resource.table));
  const due = sql`account = ${target.account} and deleted_at < ${options.before}::timestamptz`;
  const { rows: any } = await sql<{ due: boolean }>`
    select exists (select 1 from ${table} where ${due}) as due`.execute(db);
  if (!any[0]?.due) return;
  const batchSize = options.batchSize ?? ERASE_BATCH_SIZE;
  let after: string | null = null;
  for (;;) {
    options.signal?.throwIfAborted();
    const from: string | null = after;
    const erased: ErasedRecord[] = await withErasureLock(db, target, async (trx) => {
      // Chosen under the lock: a run that saw the record again has cleared deleted_at.
      const { rows } = await sql<{ id: string }>`
        select id::text as id from ${table}
        where ${due} and (${from}::bigint is null or id > ${from}::bigint)
        order by id limit ${batchSize}`.execute(trx);
      return eraseInTransaction(
        trx,
        target,
        rows.map((r) => r.id),
        'deleted_after',
        options.note,
      );
    });
    for (const record of erased) {
      done.records += 1;
      done.rows += record.rows;
      done.historyVersions += record.historyVersions;
      done.rejectedRecords += record.rejectedRecords;
    }
    if (erased.length < batchSize) return;
    after = erased[erased.length - 1]?.id ?? null;
  }
}

/** Options of {@link eraseDeletedRecords}: which accounts and resources, and how. */
export interface EraseDeletedEverywhereOptions extends EraseDeletedOptions {
  /** The resources of an account's schema: the built-in ones and its list resources. */
  resourcesOf: (account: ErasableAccount) => Promise<readonly ErasableResource[]>;
  /** Only these accounts; default every one of {@link erasableAccounts}. */
  accounts?: readonly string[] | undefined;
  /** Only these (account, resource) pairs (a retry of those that stopped short). */
  only?: ReadonlyArray<{ account: string; resource: string }> | undefined;
  /** Only these resources; default every one of each account. */
  resources?: readonly string[] | undefined;
  /** Told of each (account, resource) as it is done. */
  onResult?: (result: DeletedErasure) => void;
}

/**
 * Erases the records deleted before `options.before` of every account and
 * resource (or those named), one (account, resource) after the other: one
 * that is busy or fails is reported and the others go on. Returns what each
 * did, in order.
 */
export async function eraseDeletedRecords(
  db: Kysely<Database>,
  options: EraseDeletedEverywhereOptions,
): Promise<DeletedErasure[]> {
  await assertErasureLog(db);
  const results: DeletedErasure[] = [];
  const only = options.only && new Set(options.only.map((t) => `${t.account}\n${t.resource}`));
  for (const account of await erasableAccounts(db)) {
    if (options.accounts && !options.accounts.includes(account.account)) continue;
    if (only && ![...only].some((key) => key.startsWith(`${account.account}\n`))) continue;
    for (const resource of await options.resourcesOf(account)) {
      if (options.resources && !options.resources.includes(resource.name)) continue;
      if (only && !only.has(`${account.account}\n${resource.name}`)) continue;
      options.signal?.throwIfAborted();
      const result = await eraseDeletedOf(db, account.account, resource, options);
      results.push(result);
      options.onResult?.(result);
    }
  }
  return results;
}
