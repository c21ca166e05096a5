import {
  type ControlledTransaction,
  type Kysely,
  type RawBuilder,
  sql,
  type Transaction,
} from 'kysely';
import type { ResourceName } from '../config.js';
import { recordTexts } from './record-texts.js';
import type { Database } from './schema.js';
import { validateRecord } from './validate-record.js';

/** A page to store: the body exactly as received, and its records parsed. */
export interface PageToWrite {
  resource: ResourceName;
  runId: string;
  pageNumber: number;
  /** The response body as received; Postgres reads ids and timestamps from it exactly. */
  body: string;
  /** The same records, parsed, for validation. */
  records: readonly unknown[];
  /** Property of an object body that holds the records; undefined: the body is the array. */
  recordsKey?: string | undefined;
}

/** A record that could not be stored as a row, and why. */
export interface RejectedRecordInfo {
  index: number;
  reason: string;
}

/** What a page write did. */
export interface PageWriteResult {
  /** Rows upserted (records of the page less the rejected, less duplicates of an id). */
  written: number;
  rejected: RejectedRecordInfo[];
  /** Highest and lowest id written, as text (ids may exceed 2^53). */
  maxId: string | null;
  minId: string | null;
}

type Db = Kysely<Database> | Transaction<Database>;

export interface PageStatementInput {
  resource: ResourceName;
  runId: string;
  pageNumber: number;
  body: string;
  recordsKey: string | null;
  rejected: RejectedRecordInfo[];
  /** True when the good records are known to carry distinct ids: no de-duplication sort needed. */
  distinctIds?: boolean;
}

/** The page's records as (r jsonb, idx int), parsed once by Postgres from the body text. */
function pageRows(input: Pick<PageStatementInput, 'body' | 'recordsKey'>): RawBuilder<unknown> {
  const records =
    input.recordsKey === null
      ? sql`${input.body}::jsonb`
      : sql`${input.body}::jsonb -> ${input.recordsKey}::text`;
  return sql`select e.value as r, (e.ord - 1)::int as idx
    from jsonb_array_elements(${records}) with ordinality as e(value, ord)`;
}

/** Stores the rejected records of the page, once per run. */
function insertRejected(input: PageStatementInput): RawBuilder<unknown> {
  return sql`insert into rejected_records (resource, run_id, page, raw, record_key, reason)
    select ${input.resource}, ${input.runId}::bigint, ${input.pageNumber}::int, p.r,
      concat_ws(':', ${input.pageNumber}::int, p.idx, md5(p.r::text)), x.reason
    from page p
    join unnest(${input.rejected.map((r) => r.index)}::int[], ${input.rejected.map((r) => r.reason)}::text[]) as x(idx, reason)
      on x.idx = p.idx
    on conflict do nothing`;
}

/** CTEs `page` (every record), `good` (the valid ones) and, when there are any, `rejected` (stores the others). */
function pageCte(input: PageStatementInput): RawBuilder<unknown> {
  // Most pages reject nothing: they skip the filter and the insert altogether.
  if (input.rejected.length === 0) {
    return sql`page as (${pageRows(input)}),
  good as (select r, idx from page)`;
  }
  return sql`page as (${pageRows(input)}),
  good as (
    select r, idx from page where not (idx = any(${input.rejected.map((r) => r.index)}::int[]))
  ),
  rejected as (${insertRejected(input)})`;
}

/**
 * Upserts the nested rows (job boards, referrers, sources) of the good records.
 * A nested object with an id wins over a bare id of the flat shape; among
 * several objects for one id, the one on the most recently updated link wins,
 * within the page and against the table: a row remembers the updated_at of the
 * link its copy came from (source_updated_at), and a copy from an older link
 * never overwrites it. A bare id (flat shape) creates the row if missing and
 * never blanks names.
 */
function nestedCte(
  name: string,
  table: 'job_boards' | 'referrers' | 'sources',
  nested: string,
  flat: string,
  columns: Record<string, string>,
): RawBuilder<unknown> {
  const names = Object.keys(columns);
  const obj = sql.ref(nested);
  const select = names.map((c) => sql`${obj} ->> ${columns[c]} as ${sql.ref(c)}`);
  const nulls = names.map((c) => sql`null as ${sql.ref(c)}`);
  const assign = names.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`);
  const list = sql.join(names.map((c) => sql.ref(c)));
  return sql`${sql.ref(name)} as (
    insert into ${sql.table(table)} as t (id, ${list}, raw, source_updated_at)
    select distinct on (id) id, ${list}, raw, updated_at from (
      select (${obj} ->> 'id')::bigint as id, ${sql.join(select)}, ${obj} as raw, updated_at, idx
      from decoded where jsonb_typeof(${obj} -> 'id') = 'number'
      union all
      select ${sql.ref(flat)}, ${sql.join(nulls)}, null, null, idx
      from decoded where ${sql.ref(flat)} is not null
    ) s
    order by id, (raw is null), updated_at desc nulls last, idx desc
    on conflict (id) do update set ${sql.join(assign)}, raw = excluded.raw,
      source_updated_at = excluded.source_updated_at, synced_at = now()
    where excluded.raw is not null
      and (t.raw is null or t.source_updated_at is null
        or excluded.source_updated_at >= t.source_updated_at)
      and (t.raw is distinct from excluded.raw
        or t.source_updated_at is distinct from excluded.source_updated_at)
  )`;
}

function trackingLinksStatement(
  input: PageStatementInput,
): RawBuilder<{ written: number; max_id: string | null; min_id: string | null }> {
  return sql`with ${pageCte(input)},
  decoded as (
    -- Each record decoded once into typed columns (the validator has vouched for the types).
    select g.idx, g.r, x.*
    from good g, lateral jsonb_to_record(g.r) as x(
      id bigint, token text, job_id bigint, job_post_id bigint, job_board jsonb, job_board_id bigint,
      related_post_id bigint, related_post_type text, credited_to jsonb, referrer_id bigint,
      source jsonb, source_id bigint, created_at timestamptz, updated_at timestamptz
    )
  ),
  ${nestedCte('boards', 'job_boards', 'job_board', 'job_board_id', { company_name: 'company_name', url_token: 'url_token' })},
  ${nestedCte('people', 'referrers', 'credited_to', 'referrer_id', { name: 'name', employee_id: 'employee_id' })},
  ${nestedCte('origins', 'sources', 'source', 'source_id', { public_name: 'public_name' })},
  links as (
    insert into tracking_links as t (
      id, token, job_id, job_post_id, job_board_id, related_post_id, related_post_type,
      credited_to_id, credited_to_name, credited_to_employee_id, source_id,
      created_at, updated_at, raw, deleted_at, synced_at, last_seen_run_id
    )
    select ${input.distinctIds ? sql`` : sql`distinct on (id)`}
      id, token, job_id, job_post_id,
      coalesce((job_board ->> 'id')::bigint, job_board_id),
      related_post_id, related_post_type,
      coalesce((credited_to ->> 'id')::bigint, referrer_id),
      case when credited_to ->> 'id' is null then credited_to ->> 'name' end,
      case when credited_to ->> 'id' is null then credited_to ->> 'employee_id' end,
      coalesce((source ->> 'id')::bigint, source_id),
      created_at, updated_at, r, null::timestamptz, now(), ${input.runId}::bigint
    from decoded
    ${input.distinctIds ? sql`` : sql`order by id, idx desc`}
    on conflict (id) do update set
      token = excluded.token, job_id = excluded.job_id, job_post_id = excluded.job_post_id,
      job_board_id = excluded.job_board_id, related_post_id = excluded.related_post_id,
      related_post_type = excluded.related_post_type, credited_to_id = excluded.credited_to_id,
      credited_to_name = excluded.credited_to_name, credited_to_employee_id = excluded.credited_to_employee_id,
      source_id = excluded.source_id, created_at = excluded.created_at, updated_at = excluded.updated_at,
      raw = excluded.raw, deleted_at = null, synced_at = excluded.synced_at,
      last_seen_run_id = excluded.last_seen_run_id
    returning id
  )
  select count(*)::int as written, max(id)::text as max_id, min(id)::text as min_id from links`;
}

function recordsStatement(
  input: PageStatementInput,
  table: 'jobs' | 'job_posts',
): RawBuilder<{ written: number; max_id: string | null; min_id: string | null }> {
  return sql`with ${pageCte(input)},
  upserted as (
    insert into ${sql.table(table)} as t (id, data, deleted_at, synced_at, last_seen_run_id)
    select distinct on ((r ->> 'id')::bigint) (r ->> 'id')::bigint, r, null::timestamptz, now(), ${input.runId}::bigint
    from good
    order by (r ->> 'id')::bigint, idx desc
    on conflict (id) do update set
      data = excluded.data, deleted_at = null, synced_at = excluded.synced_at, last_seen_run_id = excluded.last_seen_run_id
    returning id
  )
  select count(*)::int as written, max(id)::text as max_id, min(id)::text as min_id from upserted`;
}

/** The one statement that writes a page. */
function pageStatement(input: PageStatementInput) {
  return input.resource === 'tracking_links'
    ? trackingLinksStatement(input)
    : recordsStatement(input, input.resource);
}

async function runStatement(
  db: Db,
  input: PageStatementInput,
): Promise<Omit<PageWriteResult, 'rejected'>> {
  const { rows } = await pageStatement(input).execute(db);
  const row = rows[0];
  return { written: row?.written ?? 0, maxId: row?.max_id ?? null, minId: row?.min_id ?? null };
}

/**
 * Postgres SQLSTATE classes a single bad value can raise: data exception (22:
 * \u0000, a lone surrogate, bigint overflow), integrity violation (23), and
 * program limit exceeded (54: a record nested too deep for the jsonb parser).
 */
function isRecordLevelError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    typeof code === 'string' &&
    (code.startsWith('22') || code.startsWith('23') || code.startsWith('54'))
  );
}

/**
 * Marks the rows of rejected records whose id can be read as seen (synced_at
 * now, after the run began): the API still lists them, so the deletion sweep
 * must not touch them. The row keeps the last version hiresync could store;
 * the new one is in rejected_records. last_seen_run_id is left alone, so the
 * run's record count stays the records it stored.
 */
async function markRejectedSeen(db: Db, input: PageStatementInput): Promise<void> {
  if (input.rejected.length === 0) return;
  const table = sql.table(TABLE_OF[input.resource]);
  await sql`update ${table} as t
    set synced_at = now(), deleted_at = null
    from (
      select distinct n::bigint as id from (
        select case when jsonb_typeof(p.r -> 'id') = 'number' then (p.r ->> 'id')::numeric end as n
        from (${pageRows(input)}) p
        where p.idx = any(${input.rejected.map((r) => r.index)}::int[])
      ) ids
      where n = trunc(n) and n between -9223372036854775808 and 9223372036854775807
    ) s
    where t.id = s.id`.execute(db);
}

const TABLE_OF: Record<ResourceName, 'tracking_links' | 'jobs' | 'job_posts'> = {
  tracking_links: 'tracking_links',
  jobs: 'jobs',
  job_posts: 'job_posts',
};

/**
 * Writes one page in one transaction: records are validated, the bad ones go to
 * rejected_records with their reason, the nested rows are upserted, then the
 * records, all with set-based statements. Writing the same page again changes
 * no content. Rows seen again get deleted_at cleared.
 *
 * If Postgres still refuses a value the validator let through, the page is
 * written again record by record under savepoints, and the refused records
 * are rejected with Postgres's message: a bad record never fails a page.
 */
export async function writePage(db: Kysely<Database>, page: PageToWrite): Promise<PageWriteResult> {
  const rejected: RejectedRecordInfo[] = [];
  // Ids are compared here only while they are exact (safe integers); any other
  // page is left to Postgres to de-duplicate.
  const ids = new Set<number>();
  let distinctIds = true;
  page.records.forEach((record, index) => {
    const reason = validateRecord(page.resource, record);
    if (reason !== undefined) {
      rejected.push({ index, reason });
      return;
    }
    const id = (record as { id: number }).id;
    if (!Number.isSafeInteger(id) || ids.has(id)) distinctIds = false;
    ids.add(id);
  });
  const input: PageStatementInput = {
    resource: page.resource,
    runId: page.runId,
    pageNumber: page.pageNumber,
    body: page.body,
    recordsKey: page.recordsKey ?? null,
    rejected,
    distinctIds,
  };
  try {
    const result = await db.transaction().execute(async (trx) => {
      const written = await runStatement(trx, input);
      await markRejectedSeen(trx, input);
      await recordProgress(trx, input, { ...written, rejected });
      return written;
    });
    return { ...result, rejected };
  } catch (error) {
    if (!isRecordLevelError(error)) throw error;
  }
  return writeRecordByRecord(db, input, page.records);
}

async function writeRecordByRecord(
  db: Kysely<Database>,
  input: PageStatementInput,
  records: readonly unknown[],
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
  let written = 0;
  let maxId: bigint | null = null;
  let minId: bigint | null = null;
  const trx = await db.startTransaction().execute();
  try {
    for (const [index, text] of texts.entries()) {
      const one = { ...input, body: `[${text}]`, recordsKey: null, rejected: [] };
      const savepoint = await trx.savepoint('record').execute();
      try {
        if (known.has(index)) {
          await markRejectedSeen(savepoint, { ...one, rejected: [{ index: 0, reason: '' }] });
        } else {
          const result = await runStatement(savepoint, one);
          written += result.written;
          if (result.maxId !== null) {
            const id = BigInt(result.maxId);
            maxId = maxId === null || id > maxId ? id : maxId;
            minId = minId === null || id < minId ? id : minId;
          }
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
    const result = {
      written,
      rejected,
      maxId: maxId?.toString() ?? null,
      minId: minId?.toString() ?? null,
    };
    await recordProgress(trx, input, result);
    await trx.commit().execute();
    return result;
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
  input: PageStatementInput,
  rejected: RejectedRecordInfo,
  text: string,
): Promise<void> {
  const insert = (raw: RawBuilder<unknown>) => sql`
    insert into rejected_records (resource, run_id, page, raw, record_key, reason)
    values (${input.resource}, ${input.runId}::bigint, ${input.pageNumber}::int, ${raw},
      concat_ws(':', ${input.pageNumber}::int, ${rejected.index}::int, md5(${text})), ${rejected.reason})
    on conflict do nothing`;
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

/**
 * Adds the page to its run's counts, in the page's transaction. Pages are
 * written in order, so a page number not above the run's count is a page read
 * again after a crash: its rows were upserted again, its counts are not added.
 */
async function recordProgress(
  db: Db,
  input: PageStatementInput,
  result: PageWriteResult,
): Promise<void> {
  await db
    .updateTable('sync_runs')
    .set(() => ({
      pages: input.pageNumber,
      records: sql<string>`records + ${result.written}`,
      rejected: sql<string>`rejected + ${result.rejected.length}`,
      max_id: sql<string>`greatest(max_id, ${result.maxId}::bigint)`,
    }))
    .where('id', '=', input.runId)
    .where('pages', '<', input.pageNumber)
    .execute();
}
