import { type Kysely, sql } from 'kysely';

// Migrations are frozen in time: they take Kysely<any> and never import app types.

/**
 * `sync_runs.warnings`: what a run that succeeded could not do, and what
 * resolves it (a typed view an analyst's view kept from widening a column).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sync_runs add column warnings text`.execute(db);
  await sql`comment on column sync_runs.warnings is ${sql.lit(
    'What the run could not do although it succeeded, and what resolves it (for example a typed view whose column an analyst view keeps from widening); null when nothing.',
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sync_runs drop column if exists warnings`.execute(db);
}
