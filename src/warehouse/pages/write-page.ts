import {
  CompiledQuery,
  type ControlledTransaction,
  type Kysely,
  type RawBuilder,
  sql,
  type Transaction,
} from 'kysely';
import type { ApiClockReading, PageWriteResult, RejectedRecord } from '../../sync/ports.js';
import { sharedRelation } from '../shared-relation.js';
import type { Database } from '../tables.js';
import {
  lockAndCount,
  lockReferenceTables,
  progressParameters,
  progressUpdateText,
} from './locks-and-progress.js';
import {
  type PageStatementInput,
  pageParameters,
  pageStatementText,
  rejectedRecordsText,
  type StoredResource,
  type WrittenRow,
} from './page-statement.js';
import { recordTexts, topLevelId } from './record-texts.js';
import { findUnchanged, type UnchangedRecords } from './unchanged-page.js';

/** A page to store: the body exactly as received, and its records parsed. */
export interface PageToWrite {
  /** The account whose rows the page is: bound in every statement that writes it. */
  account: string;
  resource: StoredResource;
  runId: string;
  pageNumber: number;
  /** The response body as received; Postgres reads ids and timestamps from it exactly. */
  body: string;
  /** The same records, parsed, for validation. */
  records: readonly unknown[];
  /** Property of an object body that holds the records; undefined: the body is the array. */
  recordsKey?: string | undefined;
  /**
   * Runs first in the page's transaction and throws unless the run still
   * holds its resource (the Postgres lock): a run that lost it commits nothing more.
   */
  assertLocked?: (trx: Transaction<Database>) => Promise<void>;
  /** Record a version of each record that changed in its history table (HIRESYNC_HISTORY). Default true. */
  history?: boolean;
  /**
   * Leave alone the records the table holds as they are (an incremental
   * run; see sql/unchanged-records.ts). Default false: every record is
   * written, as a full run's sweep needs.
   */
  skipUnchanged?: boolean;
  /** The API's clock at the run's first response, recorded with the page (the run's first reading kept). */
  apiClock?: ApiClockReading | undefined;
}

type Db = Kysely<Database> | Transaction<Database>;

/** What validation found in a page: the records to reject, and whether the others' ids are distinct. */
export interface PageVerdict {
  readonly rejected: readonly RejectedRecord[];
  /** True when the good records carry distinct, exactly known ids: no de-duplication sort needed. */
  readonly distinctIds: boolean;
  /** The good records' ids, when `distinctIds` (which page may be written beside which: pipelined-page.ts). */
  readonly ids?: ReadonlySet<number> | undefined;
}

/** Validates a page's records against the resource's schema (pure CPU work, no database). */
export function validatePage(resource: StoredResource, records: readonly unknown[]): PageVerdict {
  const rejected: RejectedRecord[] = [];
  // Ids are compared here only while they are exact (safe integers); any other
  // page is left to Postgres to de-duplicate.
  const ids = new Set<number>();
  let distinctIds = true;
  records.forEach((record, index) => {
    const reason = resource.validate(record);
    if (reason !== undefined) {
      rejected.push({ index, reason });
      return;
    }
    const id = (record as { id: number }).id;
    if (!Number.isSafeInteger(id) || ids.has(id)) distinctIds = false;
    ids.add(id);
  });
  return { rejected, distinctIds, ...(distinctIds ? { ids } : {}) };
}

/** A page statement's input, with the resource that writes it. */
export interface PageWrite extends PageStatementInput {
  store: StoredResource;
  apiClock?: ApiClockReading | undefined;
}

export async function runStatement(
  db: Db,
  input: PageWrite,
): Promise<Omit<PageWriteResult, 'rejected'>> {
  const { rows } = await db.executeQuery<WrittenRow>(
    CompiledQuery.raw(pageStatementText(input.store), pageParameters(input, input.store.storage)),
  );
  const row = rows[0];
  return { written: row?.written ?? 0, maxId: row?.max_id ?? null, minId: row?.min_id ?? null };
}

/**
 * Postgres SQLSTATE classes a single bad value can raise: data exception (22:
 * \u0000, a lone surrogate, bigint overflow), integrity violation (23), and
 * program limit exceeded (54: a record nested too deep for the jsonb parser).
 */
export function isRecordLevelError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    typeof code === 'string' &&
    (code.startsWith('22') || code.startsWith('23') || code.startsWith('54'))
  );
}

/**
 * Stores the page's rejected records (`positions` in the page, with their
 * `reasons`) and marks as seen the rows of their ids, and of `ids` (see
 * sql/rejected-records.ts): the API still lists them, so the deletion sweep
 * must not touch them.
 */
export async function storeRejected(
  db: Db,
  input: PageWrite,
  rejected: { positions: readonly number[]; reasons: readonly string[]; ids: readonly string[] },
): Promise<void> {
  if (rejected.positions.length === 0 && rejected.ids.length === 0) return;
  // Rows seen by their ids alone need no body: the body may be what Postgres refused.
  const fromBody = rejected.positions.length > 0;
  await db.executeQuery(
    CompiledQuery.raw(rejectedRecordsText(input.store), [
      fromBody ? input.body : '[]',
      fromBody ? input.recordsKey : null,
      rejected.positions,
      rejected.reasons,
      rejected.ids,
      input.resource,
      input.runId,
      input.pageNumber,
      input.history,
      input.account,
    ]),
  );
}

/** The statements' input of `page`, as `verdict` judged its records. */
export function pageWriteOf(page: PageToWrite, verdict: PageVerdict): PageWrite {
  return {
    account: page.account,
    store: page.resource,
    resource: page.resource.name,
    runId: page.runId,
    pageNumber: page.pageNumber,
    body: page.body,
    recordsKey: page.recordsKey ?? null,
    rejected: [...verdict.rejected],
    unchanged: [],
    distinctIds: verdict.distinctIds,
    history: page.history !== false,
    apiClock: page.apiClock,
  };
}

/**
 * Writes one page in one transaction: records are validated, the bad ones go to
 * rejected_records with their reason, the nested rows are upserted, then the
 * records, all with set-based statements, and a version of each record that
 * changed goes to its history table. Writing the same page again changes no
 * content and adds no version. Rows seen again get deleted_at cleared.
 *
 * With `skipUnchanged` (an incremental run), the records the table holds as
 * they are are found first and left alone; a page of only such records is
 * counted in its run by that one statement, with no transaction, lock or
 * write (see sql/unchanged-records.ts).
 *
 * If Postgres still refuses a value the validator let through, the page is
 * written again record by record under savepoints, and the refused records
 * are rejected with Postgres's message: a bad record never fails a page.
 */
export async function writePage(
  db: Kysely<Database>,
  page: PageToWrite,
  verdict: PageVerdict = validatePage(page.resource, page.records),
): Promise<PageWriteResult> {
  const input = pageWriteOf(page, verdict);
  const { rejected } = input;
  const kept = page.skipUnchanged ? await compare(db, input) : undefined;
  if (kept?.nothingToWrite) {
    const { maxId, minId } = kept;
    return { written: 0, rejected, maxId, minId, unchanged: kept.positions.length };
  }
  input.unchanged = kept?.positions ?? [];
  try {
    const result = await db.transaction().execute(async (trx) => {
      await page.assertLocked?.(trx);
      const counted = await lockAndCount(trx, input, page.records, kept);
      // Every record rejected or stored as it is: nothing for the page statement to write.
      const toWrite = page.records.length - rejected.length - (input.unchanged?.length ?? 0);
      const written =
        toWrite > 0 ? await runStatement(trx, input) : { written: 0, maxId: null, minId: null };
      await storeRejected(trx, input, {
        positions: rejected.map((r) => r.index),
        reasons: rejected.map((r) => r.reason),
        ids: [],
      });
      // The ids of the whole page, left alone or not: where an incremental run stops.
      const ids = kept ? { maxId: kept.maxId, minId: kept.minId } : {};
      const result = { ...written, ...ids };
      // Unless the page's first statement recorded it (see lockAndCount).
      if (!counted) await recordProgress(trx, input, { ...result, rejected });
      return result;
    });
    return { ...result, rejected, ...(kept ? { unchanged: kept.positions.length } : {}) };
  } catch (error) {
    if (!isRecordLevelError(error)) throw error;
  }
  return writeRecordByRecord(db, input, page.records, page.assertLocked, kept);
}

/**
 * The records of the page its table holds as they are (see findUnchanged);
 * undefined when Postgres refuses a value of the page (a bigint overflow):
 * then every record is written, and the refused ones rejected.
 */
async function compare(
  db: Kysely<Database>,
  input: PageWrite,
): Promise<UnchangedRecords | undefined> {
  try {
    return await findUnchanged(db, {
      account: input.account,
      storage: input.store.storage,
      table: input.store.table,
      runId: input.runId,
      pageNumber: input.pageNumber,
      body: input.body,
      recordsKey: input.recordsKey,
      rejected: input.rejected.map((r) => r.index),
      apiClock: input.apiClock,
    });
  } catch (error) {
    if (!isRecordLevelError(error)) throw error;
    return undefined;
  }
}

export async function writeRecordByRecord(
  db: Kysely<Database>,
  input: PageWrite,
  records: readonly unknown[],
  assertLocked: PageToWrite['assertLocked'],
  kept: UnchangedRecords | undefined,
): Promise<PageWriteResult> {
  // Each record's exact text, cut from the body as received: JSON.stringify of
  // the parsed value would round ids beyond 2^53 and turn 1.0 into 1.
  const texts = recordTexts(input.body, input.recordsKey ?? undefined);
  if (texts.length !== records.length) {
    throw new Error(
      `page ${input.pageNumber}: ${texts.length} record texts for ${records.length} records`,
    );
  }
  const rejected = [...input.rejected];
  const known = new Set(rejected.map((r) => r.index));
  const unchanged = new Set(input.unchanged);
  let written = 0;
  let maxId: bigint | null = null;
  let minId: bigint | null = null;
  const trx = await db.startTransaction().execute();
  try {
    await assertLocked?.(trx);
    await lockReferenceTables(trx, input);
    for (const [index, text] of texts.entries()) {
      const one = { ...input, body: `[${text}]`, recordsKey: null, rejected: [], unchanged: [] };
      if (known.has(index) || unchanged.has(index)) continue;
      const savepoint = await trx.savepoint('record').execute();
      try {
        const result = await runStatement(savepoint, one);
        written += result.written;
        if (result.maxId !== null) {
          const id = BigInt(result.maxId);
          maxId = maxId === null || id > maxId ? id : maxId;
          minId = minId === null || id < minId ? id : minId;
        }
        await savepoint.releaseSavepoint('record').execute();
      } catch (error) {
        if (!isRecordLevelError(error)) throw error;
        await savepoint.rollbackToSavepoint('record').execute();
        if (!known.has(index)) {
          rejected.push({ index, reason: `Postgres refused it: ${(error as Error).message}` });
        }
      }
    }
    rejected.sort((a, b) => a.index - b.index);
    for (const r of rejected) await insertRejectedText(trx, input, r, texts[r.index] ?? 'null');
    // Rejected records the API still lists (their id readable from their exact
    // text, whatever Postgres thought of the rest) are seen: never swept.
    const seen = rejected
      .map((r) => topLevelId(texts[r.index] ?? ''))
      .filter((id): id is string => id !== undefined);
    await storeRejected(trx, input, { positions: [], reasons: [], ids: seen });
    const result = {
      written,
      rejected,
      // The ids of the whole page, left alone or not, when some were (see writePage).
      maxId: kept ? kept.maxId : (maxId?.toString() ?? null),
      minId: kept ? kept.minId : (minId?.toString() ?? null),
    };
    await recordProgress(trx, input, result);
    await trx.commit().execute();
    return kept ? { ...result, unchanged: kept.positions.length } : result;
  } catch (error) {
    await trx.rollback().execute();
    throw error;
  }
}

/**
 * Stores one rejected record from its text. If Postgres cannot hold it as
 * jsonb (a \u0000 in a string), the text itself is stored as a JSON string.
 */
async function insertRejectedText(
  trx: ControlledTransaction<Database>,
  input: PageWrite,
  rejected: RejectedRecord,
  text: string,
): Promise<void> {
  const insert = (raw: RawBuilder<unknown>) => sql`
    insert into ${sql.raw(sharedRelation('rejected_records'))} (account, resource, run_id, page, raw, record_key, reason)
    values (${input.account}, ${input.resource}, ${input.runId}::bigint, ${input.pageNumber}::int, ${raw},
      concat_ws(':', ${input.pageNumber}::int, ${rejected.index}::int, md5(${text})), ${rejected.reason})
    on conflict (account, resource, run_id, record_key) do nothing`;
  const savepoint = await trx.savepoint('rejected').execute();
  try {
    await insert(sql`${text}::jsonb`).execute(savepoint);
    await savepoint.releaseSavepoint('rejected').execute();
  } catch (error) {
    if (!isRecordLevelError(error)) throw error;
    await savepoint.rollbackToSavepoint('rejected').execute();
    // Exact JSON text never holds a raw NUL (JSON escapes it), but a text
    // column cannot either: escape one defensively rather than fail the page.
    await insert(sql`to_jsonb(${text.replaceAll('\u0000', '\\u0000')}::text)`).execute(trx);
  }
}

/** Adds the page to its run's counts, in the page's transaction (see progressUpdateText). */
export async function recordProgress(
  db: Db,
  input: PageWrite,
  result: PageWriteResult,
): Promise<void> {
  await db.executeQuery(
    CompiledQuery.raw(
      progressUpdateText(1),
      progressParameters(input, { ...result, rejected: result.rejected.length }),
    ),
  );
}
