import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import { schemaOf } from '../../account-name.js';
import { DeletionGuardError, type DeletionGuardHint } from '../../errors.js';
import type { CompletedRuns, ResourceName, RunMode, RunTotals } from '../../sync/ports.js';
import { type HistoryTarget, versionCtes } from '../pages/history.js';
import { accountReferenceLocksText, isReferenceTable } from '../pages/sql/reference-locks.js';
import { sharedRelation } from '../shared-relation.js';
import type { Database, SyncRun } from '../tables.js';

/**
 * Every statement here names the shared tables (hiresync.data_<table>) and
 * binds `account`, the account whose runs and rows they are, in its key or
 * filter.
 */

/** The account's rows of shared table `table`, qualified, for a `from`. */
function shared(table: string) {
  return sql.raw(sharedRelation(table));
}

/** Starts a run of `account`: a `running` row in its sync_runs. Returns its id. */
export async function createRun(
  db: Kysely<Database>,
  account: string,
  run: { resource: ResourceName; mode: RunMode; filter?: string | undefined },
): Promise<string> {
  const row = await db
    .insertInto('hiresync.data_sync_runs')
    .values({ account, resource: run.resource, mode: run.mode, filter: run.filter ?? null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Run `runId` of `account`. */
export async function getRun(
  db: Kysely<Database>,
  account: string,
  runId: string,
): Promise<SyncRun | undefined> {
  const row = await db
    .selectFrom('hiresync.data_sync_runs')
    .selectAll()
    .where('account', '=', account)
    .where('id', '=', runId)
    .executeTakeFirst();
  if (!row) return undefined;
  const { account: _, ...run } = row;
  return run;
}

/**
 * Ends a run as succeeded (its sweep has counted what it soft-deleted) or failed
 * (with its error). A succeeded run's `records` becomes the number of distinct
 * records it stored: pages count as they commit, and an id met on two pages
 * would otherwise count twice.
 */
export async function finishRun(
  db: Kysely<Database>,
  account: string,
  runId: string,
  outcome: { outcome: 'succeeded' } | { outcome: 'failed'; error: string },
  /** Where each resource's records are, for the count of a succeeded run. */
  tables?: ReadonlyMap<ResourceName, { table: string }>,
): Promise<void> {
  const run = outcome.outcome === 'succeeded' ? await getRun(db, account, runId) : undefined;
  const table = run ? tables?.get(run.resource)?.table : undefined;
  await db
    .updateTable('hiresync.data_sync_runs')
    .set({
      outcome: outcome.outcome,
      finished_at: sql<string>`now()`,
      error: outcome.outcome === 'failed' ? outcome.error.slice(0, 4000) : null,
      ...(table
        ? {
            records: sql<string>`(select count(*) from ${shared(table)} r
              where r.account = ${account}::text and r.last_seen_run_id = ${runId}::bigint)`,
          }
        : {}),
    })
    .where('account', '=', account)
    .where('id', '=', runId)
    // A run ends once: a late failure report never turns a succeeded run into a failed one.
    .where('outcome', '=', 'running')
    .execute();
}

/** Options of {@link sweepDeletions}. */
export interface SweepOptions {
  /** The table of the run's resource. */
  table: string;
  /** Most of a resource's live rows one sweep may mark (0..1). Default 0.5. */
  maxDeleteFraction?: number;
  /** The operator confirmed a sweep above the fraction (`sync --full --allow-mass-delete`). */
  allowMassDelete?: boolean;
  /** Where each deletion is recorded as a version; undefined when history is off. */
  history?: HistoryTarget | undefined;
  /**
   * Runs inside the sweep's transaction before anything is marked; throws if
   * the run no longer holds its resource (a lost lock).
   */
  assertLocked?: (trx: Transaction<Database>, resource: string) => Promise<void>;
  /** What the deletion guard's error names (the run's account, the list's path variable). */
  hint?: DeletionGuardHint;
}

/**
 * The deletion sweep of a completed full run: rows of the resource that the run
 * did not see get deleted_at set, and their history a deletion version. Refuses runs that are not full, carried a
 * filter, or did not complete, since their unseen rows are not deletions.
 *
 * Postgres is the last line of defence against overlapping runs: only rows that
 * no run wrote since this one began are marked (synced_at before the run's
 * start), whatever Redis says. A sweep that would mark more than
 * `maxDeleteFraction` of the live rows marks none and throws
 * {@link DeletionGuardError}, unless `allowMassDelete`.
 * Returns how many rows it soft-deleted.
 */
export async function sweepDeletions(
  db: Kysely<Database>,
  account: string,
  runId: string,
  options: SweepOptions,
): Promise<number> {
  const run = await getRun(db, account, runId);
  if (run?.mode !== 'full' || run.filter !== null || run.outcome === 'failed') return 0;
  const table = options.table;
  const maxFraction = options.maxDeleteFraction ?? 0.5;
  return db.transaction().execute(async (trx) => {
    await options.assertLocked?.(trx, run.resource);
    // A reference list's sweep and a tracking-links page of the account may
    // version one row at once: serialised like the page writers (see
    // accountReferenceLocksText), before the statements below take their snapshots.
    if (isReferenceTable(table)) {
      await trx.executeQuery(
        CompiledQuery.raw(accountReferenceLocksText([table]), [schemaOf(account)]),
      );
    }
    const unseen = sql`t.last_seen_run_id is distinct from ${runId}::bigint
      and t.synced_at < ${run.started_at}::timestamptz`;
    const { rows } = await sql<{ live: string; unseen: string }>`
      select count(*) as live, count(*) filter (where ${unseen}) as unseen
      from ${shared(table)} t where t.account = ${account}::text and t.deleted_at is null`.execute(
      trx,
    );
    const live = Number(rows[0]?.live ?? 0);
    const wouldDelete = Number(rows[0]?.unseen ?? 0);
    if (wouldDelete === 0) return 0;
    if (wouldDelete > maxFraction * live && options.allowMassDelete !== true) {
      throw new DeletionGuardError(run.resource, wouldDelete, live, maxFraction, options.hint);
    }
    const history = options.history;
    const { rows: swept } = await sql<{ deleted: string }>`with swept as (
        update ${shared(table)} as t set deleted_at = now(), changed_at = statement_timestamp()
        where t.account = ${account}::text and t.deleted_at is null and ${unseen}
        returning t.id, true as changed, true as replaced${history ? sql`, t.${sql.ref(history.recordColumn)} as rec` : sql``}
      )${history ? sql`, ${versionCtes(history, 'swept', runId, true, account)}` : sql``}
      select count(*) as deleted from swept`.execute(trx);
    const deleted = Number(swept[0]?.deleted ?? 0);
    // Counted in the sweep's own transaction: a run resumed after a crash
    // between the sweep and its end sweeps nothing more, and keeps the count.
    await trx
      .updateTable('hiresync.data_sync_runs')
      .set({ deleted: sql<string>`deleted + ${deleted}` })
      .where('account', '=', account)
      .where('id', '=', runId)
      .execute();
    return deleted;
  });
}

/**
 * What a new run of a resource is planned from, in one statement: whether a
 * full run has completed, the highest id a completed run saw, its latest run
 * (how it ended and why), and, when `updated` is given, where the updated
 * filter starts.
 *
 * That start is the start of the resource's last successful run that saw
 * every update (a full run, or one whose filter holds `updated.filterPrefix`,
 * the filter's text before `{since}`; not a run that stopped by id) less
 * `updated.lookbackMs`, in ISO 8601 UTC with microseconds, computed by
 * Postgres (its timestamps never pass through a JS Date). The start is the
 * API's `Date` of that run's first response (`api_started_at`), so a worker
 * or database clock ahead of the API's skips no update; never later than the
 * run's `started_at`, so a `Date` ahead of the API's data (a proxy's clock)
 * skips none either; and `started_at` alone for runs without it (older runs,
 * a response without `Date`).
 */
export async function completedRuns(
  db: Kysely<Database>,
  account: string,
  resource: ResourceName,
  updated?: { lookbackMs: number; filterPrefix: string },
): Promise<CompletedRuns> {
  const since = updated
    ? sql<string | null>`(
        select to_char(
          (least(r.api_started_at, r.started_at) - make_interval(secs => ${updated.lookbackMs / 1000}::float8))
            at time zone 'UTC',
          'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'
        )
        from ${shared('sync_runs')} r
        where r.account = ${account}::text and r.resource = ${resource} and r.outcome = 'succeeded'
          and (r.mode = 'full' or strpos(coalesce(r.filter, ''), ${updated.filterPrefix}) > 0)
        order by r.started_at desc
        limit 1)`
    : sql<null>`null::text`;
  const { rows } = await sql<{
    full_run_done: boolean;
    highest_id: string | null;
    last_outcome: 'running' | 'succeeded' | 'failed' | null;
    last_error: string | null;
    updated_since: string | null;
  }>`
    select
      exists (
        select 1 from ${shared('sync_runs')} r
        where r.account = ${account}::text and r.resource = ${resource} and r.outcome = 'succeeded'
          and r.mode = 'full'
      ) as full_run_done,
      (select max(r.max_id)::text from ${shared('sync_runs')} r
        where r.account = ${account}::text and r.resource = ${resource} and r.outcome = 'succeeded')
        as highest_id,
      last.outcome as last_outcome, last.error as last_error,
      ${since} as updated_since
    from (select) as one
    left join lateral (
      select r.outcome, r.error from ${shared('sync_runs')} r
      where r.account = ${account}::text and r.resource = ${resource} order by r.id desc limit 1
    ) as last on true`.execute(db);
  const row = rows[0];
  return {
    fullRunDone: row?.full_run_done === true,
    highestId: row?.highest_id ?? null,
    lastRun: row?.last_outcome ? { outcome: row.last_outcome, error: row.last_error } : undefined,
    updatedSince: row?.updated_since ?? undefined,
  };
}

/**
 * Ends a run as succeeded (its sweep has counted what it soft-deleted) and
 * returns its counts, in one statement. Its `records` becomes the number of
 * distinct records it stored, the rows of `table` it last saw: pages count
 * as they commit, and an id met on two pages would otherwise count twice. A
 * run of one page or none counted each of its records once already, and its
 * count stands (no scan of `table`). A run that had ended already keeps how
 * it ended; its counts are returned as they are.
 */
export async function completeRun(
  db: Kysely<Database>,
  account: string,
  runId: string,
  table: string,
): Promise<RunTotals> {
  const { rows } = await sql<{ pages: number; records: string; rejected: string; deleted: string }>`
    with done as (
      update ${shared('sync_runs')} as s set outcome = 'succeeded', finished_at = now(), error = null,
        records = case when s.pages <= 1 then s.records
          else (select count(*) from ${shared(table)} t
            where t.account = ${account}::text and t.last_seen_run_id = ${runId}::bigint) end
      where s.account = ${account}::text and s.id = ${runId}::bigint and s.outcome = 'running'
      returning s.pages, s.records, s.rejected, s.deleted
    )
    select pages, records, rejected, deleted from done
    union all
    select s.pages, s.records, s.rejected, s.deleted from ${shared('sync_runs')} s
    where s.account = ${account}::text and s.id = ${runId}::bigint
      and not exists (select 1 from done)`.execute(db);
  const row = rows[0];
  return {
    pages: row?.pages ?? 0,
    records: Number(row?.records ?? 0),
    rejected: Number(row?.rejected ?? 0),
    deleted: Number(row?.deleted ?? 0),
  };
}

/** Clears a run's counts when it restarts from its first page. */
export async function resetRunProgress(
  db: Kysely<Database>,
  account: string,
  runId: string,
): Promise<void> {
  await db
    .updateTable('hiresync.data_sync_runs')
    .set({ pages: 0, records: 0, rejected: 0 })
    .where('account', '=', account)
    .where('id', '=', runId)
    .execute();
}
