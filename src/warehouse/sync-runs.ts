import { type Kysely, sql } from 'kysely';
import type { ResourceName } from '../config.js';
import type { Database, RunMode, SyncRun } from './schema.js';

const RESOURCE_TABLE: Record<ResourceName, 'tracking_links' | 'jobs' | 'job_posts'> = {
  tracking_links: 'tracking_links',
  jobs: 'jobs',
  job_posts: 'job_posts',
};

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

/** Ends a run as succeeded (with the rows its sweep soft-deleted) or failed (with its error). */
export async function finishRun(
  db: Kysely<Database>,
  runId: string,
  outcome: { outcome: 'succeeded'; deleted?: number } | { outcome: 'failed'; error: string },
): Promise<void> {
  await db
    .updateTable('sync_runs')
    .set({
      outcome: outcome.outcome,
      finished_at: sql<string>`now()`,
      error: outcome.outcome === 'failed' ? outcome.error.slice(0, 4000) : null,
      ...(outcome.outcome === 'succeeded' ? { deleted: outcome.deleted ?? 0 } : {}),
    })
    .where('id', '=', runId)
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

/**
 * The deletion sweep of a completed full run: rows of the resource that the run
 * did not see get deleted_at set. Refuses runs that are not full, carried a
 * filter, or did not complete, since their unseen rows are not deletions.
 * Returns how many rows it soft-deleted.
 */
export async function sweepDeletions(db: Kysely<Database>, runId: string): Promise<number> {
  const run = await getRun(db, runId);
  if (run?.mode !== 'full' || run.filter !== null || run.outcome === 'failed') return 0;
  const table = RESOURCE_TABLE[run.resource as ResourceName];
  if (!table) return 0;
  const result = await db
    .updateTable(table)
    .set({ deleted_at: sql<string>`now()` })
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('last_seen_run_id', 'is', null), eb('last_seen_run_id', '!=', runId)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
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

/** Clears a run's counts when it restarts from its first page. */
export async function resetRunProgress(db: Kysely<Database>, runId: string): Promise<void> {
  await db
    .updateTable('sync_runs')
    .set({ pages: 0, records: 0, rejected: 0 })
    .where('id', '=', runId)
    .execute();
}
