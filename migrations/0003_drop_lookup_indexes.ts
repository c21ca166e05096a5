import { type Kysely, sql } from 'kysely';

// Migrations are frozen in time: they take Kysely<any> and never import app types.

/** The lookup indexes 0001 created on tracking_links' references. */
const INDEXES = {
  tracking_links_job_board_id_idx: 'job_board_id',
  tracking_links_credited_to_id_idx: 'credited_to_id',
  tracking_links_source_id_idx: 'source_id',
} as const;

/**
 * The indexes on job_board_id, credited_to_id and source_id serve only "the
 * links of one board / referrer / source" lookups: the view and the README's
 * queries (aggregates over every link) never use them, and they cost every page
 * write (13-19% of the write throughput, as the review that asked for this measured). Dropped here; the README
 * shows how to create any of them for a deployment whose analysts need such
 * lookups. Also gives sync_runs' (resource, id) index its true name.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  for (const index of Object.keys(INDEXES)) {
    await db.schema.dropIndex(index).ifExists().execute();
  }
  // 0001 named the (resource, id desc) index of sync_runs after started_at.
  await sql`alter index if exists sync_runs_resource_started_idx rename to sync_runs_resource_id_idx`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter index if exists sync_runs_resource_id_idx rename to sync_runs_resource_started_idx`.execute(
    db,
  );
  for (const [index, column] of Object.entries(INDEXES)) {
    await sql`create index if not exists ${sql.id(index)} on tracking_links (${sql.id(column)})`.execute(
      db,
    );
  }
}
