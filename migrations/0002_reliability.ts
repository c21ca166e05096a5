import { type Kysely, sql } from 'kysely';

// Migrations are frozen in time: they take Kysely<any> and never import app types.

const NESTED = {
  job_boards: 'job_board',
  referrers: 'credited_to',
  sources: 'source',
} as const;

/**
 * Nested rows remember the run and the updated_at of the tracking link whose
 * copy they hold: within a run, a later page carrying an older link cannot
 * bring back an old name; a later run's copy always wins (the API embeds the
 * object's current state on every link, so the newest link of an earlier run
 * may be gone or moved).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, object] of Object.entries(NESTED)) {
    await db.schema
      .alterTable(table)
      .addColumn('source_run_id', 'bigint')
      .addColumn('source_updated_at', 'timestamptz')
      .execute();
    await sql`comment on column ${sql.ref(`${table}.source_run_id`)} is ${sql.lit(
      `The sync run that wrote the ${object} copy this row holds: a later run's copy always wins (the API embeds the current state on every link).`,
    )}`.execute(db);
    await sql`comment on column ${sql.ref(`${table}.source_updated_at`)} is ${sql.lit(
      `updated_at of the tracking link whose ${object} object this row holds; within one run, a copy on an older link never overwrites it.`,
    )}`.execute(db);
  }
  await sql`comment on column sync_runs.records is ${sql.lit(
    'Distinct records the run stored (an id met on several pages counts once).',
  )}`.execute(db);
  await sql`comment on column sync_runs.deleted is ${sql.lit(
    'Rows soft-deleted by the sweep at the end of a full run (only rows no run wrote since this one began).',
  )}`.execute(db);
  await sql`comment on column rejected_records.raw is ${sql.lit(
    'The record exactly as the API sent it; a record Postgres cannot hold as jsonb (a \\u0000 in a string, nesting too deep) is kept as a JSON string holding its exact text.',
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of Object.keys(NESTED)) {
    await db.schema
      .alterTable(table)
      .dropColumn('source_updated_at')
      .dropColumn('source_run_id')
      .execute();
  }
}
