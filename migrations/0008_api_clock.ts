import { type Kysely, sql } from 'kysely';

// Migrations are frozen in time: they take Kysely<any> and never import app types.

/**
 * The API's clock, as each run's first response showed it: the updated
 * filter's `{since}` is taken from the previous run's `api_started_at` (the
 * API's `Date`), so a worker whose clock is ahead of the API's never asks
 * for changes from a time the API has not reached. Runs written before this
 * migration keep both columns null: their successors fall back to
 * `started_at`.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sync_runs
    add column api_started_at timestamptz,
    add column api_clock_skew_ms bigint`.execute(db);
  await sql`comment on column sync_runs.api_started_at is ${sql.lit(
    "The Date header of the run's first response (the API's clock, whole seconds); null when it sent none. The next incremental run's updated filter starts from it, less HIRESYNC_UPDATED_LOOKBACK.",
  )}`.execute(db);
  await sql`comment on column sync_runs.api_clock_skew_ms is ${sql.lit(
    "The API's clock less the worker's when the run's first response arrived, in ms (negative: the API is behind); null when unknown.",
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sync_runs
    drop column api_clock_skew_ms,
    drop column api_started_at`.execute(db);
}
