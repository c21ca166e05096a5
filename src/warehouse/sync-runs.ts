import { type Kysely, sql, type Transaction } from 'kysely';
import { DeletionGuardError, type DeletionGuardHint } from '../errors.js';
import type { ApiClockReading, ResourceName, RunMode } from '../sync/ports.js';
import { type HistoryTarget, versionCtes } from './history.js';
import { isReferenceTable, referenceLocksText } from './resource-lock.js';
import type { Database, SyncRun } from './schema.js';

/** Starts a run: a `running` row in sync_runs. Returns its id. */
export async function createRun(
  db: Kysely<Database>,
  run: { resource: ResourceName; mode: RunMode; filter?: string | undefined },
): Promise<string> {
  const row = await db
    .insertInto('sync_runs')
    .values({ resource: run.resource, mode: run.mode, filter: run.filter ?? null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function getRun(db: Kysely<Database>, runId: string): Promise<SyncRun | undefined> {
  return db.selectFrom('sync_runs').selectAll().where('id', '=', runId).executeTakeFirst();
}

/**
 * Ends a run as succeeded (its sweep has counted what it soft-deleted) or failed
 * (with its error). A succeeded run's `records` becomes the number of distinct
 * records it stored: pages count as they commit, and an id met on two pages
 * would otherwise count twice.
 */
export async function finishRun(
  db: Kysely<Database>,
  runId: string,
  outcome: { outcome: 'succeeded' } | { outcome: 'failed'; error: string },
  /** Where each resource's records are, for the count of a succeeded run. */
  tables?: ReadonlyMap<ResourceName, { table: string }>,
): Promise<void> {
  const run = outcome.outcome === 'succeeded' ? await getRun(db, runId) : undefined;
  const table = run ? tables?.get(run.resource)?.table : undefined;
  await db
    .updateTable('sync_runs')
    .set({
      outcome: outcome.outcome,
      finished_at: sql<string>`now()`,
      error: outcome.outcome === 'failed' ? outcome.error.slice(0, 4000) : null,
      ...(table
        ? {
            records: sql<string>`(select count(*) from ${sql.table(table)} where last_seen_run_id = ${runId}::bigint)`,
          }
        : {}),
    })
    .where('id', '=', runId)
    // A run ends once: a late failure report never turns a succeeded run into a failed one.
    .where('outcome', '=', 'running')
    .execute();
}

/** The last run of a resource that completed, optionally of one mode. */
export async function lastSucceededRun(
  db: Kysely<Database>,
  resource: ResourceName,
  mode?: RunMode,
): Promise<SyncRun | undefined> {
  let query = db
    .selectFrom('sync_runs')
    .selectAll()
    .where('resource', '=', resource)
    .where('outcome', '=', 'succeeded');
  if (mode) query = query.where('mode', '=', mode);
  return query.orderBy('id', 'desc').limit(1).executeTakeFirst();
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
  runId: string,
  options: SweepOptions,
): Promise<number> {
  const run = await getRun(db, runId);
  if (run?.mode !== 'full' || run.filter !== null || run.outcome === 'failed') return 0;
  const table = options.table;
  const maxFraction = options.maxDeleteFraction ?? 0.5;
  return db.transaction().execute(async (trx) => {
    await options.assertLocked?.(trx, run.resource);
    // A reference list's sweep and a tracking-links page of the account may
    // version one row at once: serialised like the page writers (see
    // referenceLocksText), before the statements below take their snapshots.
    if (isReferenceTable(table)) await sql.raw(referenceLocksText([table])).execute(trx);
    const unseen = sql`last_seen_run_id is distinct from ${runId}::bigint
      and synced_at < ${run.started_at}::timestamptz`;
    const { rows } = await sql<{ live: string; unseen: string }>`
      select count(*) as live, count(*) filter (where ${unseen}) as unseen
      from ${sql.table(table)} where deleted_at is null`.execute(trx);
    const live = Number(rows[0]?.live ?? 0);
    const wouldDelete = Number(rows[0]?.unseen ?? 0);
    if (wouldDelete === 0) return 0;
    if (wouldDelete > maxFraction * live && options.allowMassDelete !== true) {
      throw new DeletionGuardError(run.resource, wouldDelete, live, maxFraction, options.hint);
    }
    const history = options.history;
    const { rows: swept } = await sql<{ deleted: string }>`with swept as (
        update ${sql.table(table)} as t set deleted_at = now(), changed_at = statement_timestamp()
        where deleted_at is null and ${unseen}
        returning t.id, true as changed, true as replaced${history ? sql`, t.${sql.ref(history.recordColumn)} as rec` : sql``}
      )${history ? sql`, ${versionCtes(history, 'swept', runId, true)}` : sql``}
      select count(*) as deleted from swept`.execute(trx);
    const deleted = Number(swept[0]?.deleted ?? 0);
    // Counted in the sweep's own transaction: a run resumed after a crash
    // between the sweep and its end sweeps nothing more, and keeps the count.
    await trx
      .updateTable('sync_runs')
      .set({ deleted: sql<string>`deleted + ${deleted}` })
      .where('id', '=', runId)
      .execute();
    return deleted;
  });
}

/** Has the resource ever completed a full run? */
export async function hasCompletedFullRun(
  db: Kysely<Database>,
  resource: ResourceName,
): Promise<boolean> {
  return (await lastSucceededRun(db, resource, 'full')) !== undefined;
}

/** The highest id any completed run of the resource saw (where an incremental run stops). */
export async function highestCompletedId(
  db: Kysely<Database>,
  resource: ResourceName,
): Promise<string | null> {
  const row = await db
    .selectFrom('sync_runs')
    .select((eb) => eb.fn.max('max_id').as('max_id'))
    .where('resource', '=', resource)
    .where('outcome', '=', 'succeeded')
    .executeTakeFirst();
  return (row?.max_id as string | null | undefined) ?? null;
}

/**
 * Where an incremental run's updated filter starts: the start of the
 * resource's last successful run that saw every update (a full run, or one
 * that sent the filter; not a run that stopped by id) less `lookbackMs`, in
 * ISO 8601 UTC with microseconds, computed by Postgres (its timestamps never
 * pass through a JS Date). The start is the API's `Date` of that run's first
 * response (`api_started_at`), so a worker or database clock ahead of the
 * API's skips no update; never later than the run's `started_at`, so a
 * `Date` ahead of the API's data (a proxy's clock) skips none either; and
 * `started_at` alone for runs without it (older runs, a response without
 * `Date`). Undefined before any successful run.
 */
export async function updatedSince(
  db: Kysely<Database>,
  resource: ResourceName,
  lookbackMs: number,
  /** The filter's text before `{since}`: only runs that sent it (or full runs) saw every update. */
  filterPrefix = '',
): Promise<string | undefined> {
  const { rows } = await sql<{ since: string }>`
    select to_char(
      (least(api_started_at, started_at) - make_interval(secs => ${lookbackMs / 1000}::float8))
        at time zone 'UTC',
      'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'
    ) as since
    from sync_runs
    where resource = ${resource} and outcome = 'succeeded'
      and (mode = 'full' or strpos(coalesce(filter, ''), ${filterPrefix}) > 0)
    order by started_at desc
    limit 1`.execute(db);
  return rows[0]?.since;
}

/**
 * Records the API's clock at a run's first response (see
 * RunStore.recordApiClock); the first reading of a run is kept.
 */
export async function recordApiClock(
  db: Kysely<Database>,
  runId: string,
  reading: ApiClockReading,
): Promise<void> {
  await db
    .updateTable('sync_runs')
    .set({
      api_started_at: sql<string>`coalesce(api_started_at, ${reading.date}::timestamptz)`,
      api_clock_skew_ms: sql<string>`coalesce(api_clock_skew_ms, ${Math.round(reading.skewMs)}::bigint)`,
    })
    .where('id', '=', runId)
    .execute();
}

/** Clears a run's counts when it restarts from its first page. */
export async function resetRunProgress(db: Kysely<Database>, runId: string): Promise<void> {
  await db
    .updateTable('sync_runs')
    .set({ pages: 0, records: 0, rejected: 0 })
    .where('id', '=', runId)
    .execute();
}
