import { type Kysely, sql } from 'kysely';

// Migrations are frozen in time: they take Kysely<any> and never import app types.

/**
 * `typed_view_columns.previous_names`: the names a key's column had before
 * (a name given under an earlier naming rule). A view an analyst's object
 * depends on keeps its columns in place, so a column of an earlier name stays
 * there; hiresync keeps showing the key in it, in the account's view and in
 * the all_accounts union, rather than a null.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table typed_view_columns
    add column previous_names text[] not null default '{}'`.execute(db);
  await sql`comment on column typed_view_columns.previous_names is ${sql.lit(
    "Names the key's column had before (under an earlier naming rule), oldest first: a view kept in place for an analyst's object still has such a column, and it keeps showing this key.",
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table typed_view_columns drop column if exists previous_names`.execute(db);
}
