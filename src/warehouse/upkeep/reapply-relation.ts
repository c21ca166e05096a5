import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import { HiresyncError } from '../../errors.js';
import type { Database } from '../tables.js';
import {
  type RelationId,
  type RelationProgress,
  type RowKey,
  saveProgress,
} from './reapply-progress.js';
import { type Rewrite, type RowPolice, rewriteOf, type StoredRow } from './reapply-rows.js';
import {
  type ReapplyShape,
  reapplyCount,
  reapplyLock,
  reapplyRead,
  reapplyWrite,
} from './sql/reapply-policy.js';

/** One relation to rewrite: which, how it is stored, and how the policy applies to its rows. */
export interface RelationTarget extends RelationId {
  shape: ReapplyShape;
  police: RowPolice;
}

/** Where a pass stands, as told after each batch. */
export interface PassProgress {
  /** Rows read by the whole pass (batches of earlier, stopped runs included). */
  read: number;
  rewritten: number;
  /** Rows of the relation when this run began it. */
  total: number;
}

/** Options of {@link rewriteRelation}. */
export interface PassOptions {
  /** Rows per batch (one short transaction each). */
  batchSize: number;
  /** Longest wait for a row a run's page holds, per row (lock_timeout). */
  rowWaitMs: number;
  /** Checked before each batch: aborted, the pass stops; its progress is kept. */
  signal?: AbortSignal | undefined;
  /** Told after each batch is committed and recorded. */
  onBatch?: ((progress: PassProgress) => void | Promise<void>) | undefined;
}

/** What a pass did. */
export interface PassOutcome extends PassProgress {
  /**
   * Rows written during the pass (by a run) that its catch-up found not to
   * match the policy, and rewrote: a run under another policy wrote them.
   */
  late: number;
}

/** SQLSTATE of lock_timeout expiring. */
const LOCK_NOT_AVAILABLE = '55P03';

interface RowOfDb {
  id: string;
  text: string;
  valid_from_text?: string;
  string?: string | null;
  [cell: `cell_${number}`]: string | null;
}

function storedRowOf(row: RowOfDb, cells: number): StoredRow {
  return {
    id: row.id,
    validFrom: row.valid_from_text,
    text: row.text,
    string: row.string,
    cells:
      cells > 0 ? Array.from({ length: cells }, (_, i) => row[`cell_${i}`] ?? null) : undefined,
  };
}

const keyText = (key: RowKey) => `${key.id} ${key.validFrom ?? ''}`;
const keyOf = (row: StoredRow): RowKey => ({ id: row.id, validFrom: row.validFrom });

type Db = Kysely<Database> | Transaction<Database>;

async function rowsOf(db: Db, target: RelationTarget, text: string, params: unknown[]) {
  const { rows } = await db.executeQuery<RowOfDb>(CompiledQuery.raw(text, params));
  return rows.map((r) => storedRowOf(r, target.shape.columns?.length ?? 0));
}

/** The batch after `after` (in a catch-up, only rows written since `since`). */
function readRows(
  db: Db,
  target: RelationTarget,
  after: RowKey | undefined,
  since: string | null,
  limit: number,
): Promise<StoredRow[]> {
  const { shape } = target;
  const text = reapplyRead(shape);
  if (shape.kind === 'history') {
    return rowsOf(db, target, text, [
      target.account,
      after?.id ?? null,
      after?.validFrom ?? null,
      since,
      limit,
    ]);
  }
  const params = [target.account, after?.id ?? null, since, limit];
  return rowsOf(
    db,
    target,
    text,
    shape.kind === 'rejected' ? [...params, target.resource] : params,
  );
}

function lockRows(
  trx: Transaction<Database>,
  target: RelationTarget,
  keys: readonly RowKey[],
  skipLocked: boolean,
): Promise<StoredRow[]> {
  const { shape } = target;
  const ids = keys.map((k) => k.id);
  const params =
    shape.kind === 'history'
      ? [target.account, ids, keys.map((k) => k.validFrom ?? null)]
      : shape.kind === 'rejected'
        ? [target.account, ids, target.resource]
        : [target.account, ids];
  return rowsOf(trx, target, reapplyLock(shape, skipLocked), params);
}

async function writeRows(
  trx: Transaction<Database>,
  target: RelationTarget,
  rewrites: readonly Rewrite[],
): Promise<void> {
  if (rewrites.length === 0) return;
  const { shape } = target;
  const ids = rewrites.map((r) => r.row.id);
  const texts = rewrites.map((r) => r.text);
  const params =
    shape.kind === 'history'
      ? [target.account, ids, rewrites.map((r) => r.row.validFrom ?? null), texts]
      : shape.kind === 'rejected'
        ? [target.account, ids, texts, rewrites.map((r) => r.asText)]
        : [
            target.account,
            ids,
            texts,
            ...(shape.columns ?? []).map((_, i) => rewrites.map((r) => r.cells?.[i] ?? null)),
          ];
  await trx.executeQuery(CompiledQuery.raw(reapplyWrite(shape), params));
}

/** The row's record, string and columns as read: a rewrite made of them still holds. */
function sameAsRead(row: StoredRow, read: StoredRow): boolean {
  return (
    row.text === read.text &&
    row.string === read.string &&
    (row.cells ?? []).every((cell, i) => cell === read.cells?.[i])
  );
}

/**
 * The rewrites of `rows` (read again under their lock): the one made from
 * the unlocked read when the row is as it was read (the usual case), else
 * made anew (a run wrote it in between).
 */
function rewritesOf(
  rows: readonly StoredRow[],
  police: RowPolice,
  known: ReadonlyMap<string, Rewrite>,
): Rewrite[] {
  return rows.flatMap((row) => {
    const before = known.get(keyText(keyOf(row)));
    if (before && sameAsRead(row, before.row)) return [before];
    return rewriteOf(row, police) ?? [];
  });
}

/**
 * Writes the rewrites `planned` from an unlocked read, each row again as
 * the policy has it once locked: the rows free now in one transaction
 * (`save` recorded in it when it covers them all), each row a run's page
 * holds in a transaction of its own that waits for it (holding no other
 * lock, so it cannot deadlock), then `save`. Returns the rows rewritten.
 */
async function rewriteRows(
  db: Kysely<Database>,
  target: RelationTarget,
  planned: readonly Rewrite[],
  rowWaitMs: number,
  save: (db: Db, rewritten: number) => Promise<void>,
): Promise<number> {
  const keys = planned.map((r) => keyOf(r.row));
  const known = new Map(planned.map((r) => [keyText(keyOf(r.row)), r]));
  const first = await db.transaction().execute(async (trx) => {
    const locked = await lockRows(trx, target, keys, true);
    const rewrites = rewritesOf(locked, target.police, known);
    await writeRows(trx, target, rewrites);
    const got = new Set(locked.map((row) => keyText(keyOf(row))));
    const held = keys.filter((key) => !got.has(keyText(key)));
    if (held.length === 0) await save(trx, rewrites.length);
    return { rewritten: rewrites.length, held };
  });
  let rewritten = first.rewritten;
  for (const key of first.held) {
    rewritten += await db.transaction().execute(async (trx) => {
      await sql`select set_config('lock_timeout', ${`${rowWaitMs}ms`}, true)`.execute(trx);
      try {
        const locked = await lockRows(trx, target, [key], false);
        const rewrites = rewritesOf(locked, target.police, known);
        await writeRows(trx, target, rewrites);
        return rewrites.length;
      } catch (error) {
        if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
        throw new HiresyncError(
          `row ${key.id} of ${target.relation} (account ${target.account}) was held by another transaction for longer than ${Math.round(rowWaitMs / 1000)} s: stopped; run reapply-policy again to continue from the last batch done`,
          { cause: error },
        );
      }
    });
  }
  if (first.held.length > 0) await save(db, rewritten);
  return rewritten;
}

/** Rows of the relation (of the account; of the resource, for rejected_records). */
export async function countRows(db: Kysely<Database>, target: RelationTarget): Promise<number> {
  const { rows } = await db.executeQuery<{ n: string }>(
    CompiledQuery.raw(
      reapplyCount(target.shape),
      target.shape.kind === 'rejected' ? [target.account, target.resource] : [target.account],
    ),
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * One pass over a relation from where `progress` stands: batches of rows in
 * key order, each read without a lock, policed, and only the rows the policy
 * changes locked and written (see rewriteRows), the batch's last key and
 * counts recorded in hiresync.policy_reapply. Then a catch-up over the rows
 * written since the pass began (by runs meanwhile): a run under the current
 * policy wrote them policed, so any it rewrites were written under another
 * policy (`late`). Stopped (signal, failure), the recorded progress stands:
 * a rerun continues after the last batch recorded.
 */
export async function rewriteRelation(
  db: Kysely<Database>,
  target: RelationTarget,
  progress: RelationProgress,
  options: PassOptions,
): Promise<PassOutcome> {
  const total = await countRows(db, target);
  let { after, rowsRead: read, rowsRewritten: rewritten } = progress;
  for (;;) {
    options.signal?.throwIfAborted();
    const rows = await readRows(db, target, after, null, options.batchSize);
    const last = rows.at(-1);
    if (last === undefined) break;
    const key = keyOf(last);
    const save = (d: Db, n: number) => saveProgress(d, target, key, rows.length, n);
    const planned = rows.flatMap((row) => rewriteOf(row, target.police) ?? []);
    const n =
      planned.length === 0
        ? await save(db, 0).then(() => 0)
        : await rewriteRows(db, target, planned, options.rowWaitMs, save);
    after = key;
    read += rows.length;
    rewritten += n;
    await options.onBatch?.({ read, rewritten, total });
    if (rows.length < options.batchSize) break;
  }
  const late = await catchUp(db, target, progress.startedAt, options);
  return { read, rewritten: rewritten + late, total, late };
}

/**
 * Polices again the rows written since `since` (by runs: a rewrite moves no
 * time); returns those it rewrote, written under another policy.
 */
export async function catchUp(
  db: Kysely<Database>,
  target: RelationTarget,
  since: string,
  options: PassOptions,
): Promise<number> {
  let after: RowKey | undefined;
  let late = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const rows = await readRows(db, target, after, since, options.batchSize);
    const last = rows.at(-1);
    if (last === undefined) return late;
    const planned = rows.flatMap((row) => rewriteOf(row, target.police) ?? []);
    if (planned.length > 0) {
      late += await rewriteRows(db, target, planned, options.rowWaitMs, async () => {});
    }
    after = keyOf(last);
    if (rows.length < options.batchSize) return late;
  }
}
