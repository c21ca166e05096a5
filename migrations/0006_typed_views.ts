import { type Kysely, sql } from 'kysely';

// Migrations are frozen in time: they take Kysely<any> and never import app types.

/**
 * Typed views: `jobs_flat`, `job_posts_flat` (and `NAME_flat` of each list
 * resource) hold one typed column per top-level key of the records. What
 * they hold follows the data: the columns and types are kept in
 * `typed_view_columns`, so a key that stops appearing keeps its column, and
 * the view is rebuilt at the end of a full run only when a key appears or a
 * type must widen. This migration makes the two tables and the first views,
 * with only `id` and `deleted_at` until the first full run fills them.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table typed_views (
    view text primary key,
    source_table text not null,
    seen_through timestamptz,
    rebuilt_at timestamptz
  )`.execute(db);
  await sql`create table typed_view_columns (
    view text not null references typed_views (view) on delete cascade,
    key text not null,
    column_name text not null,
    type text not null,
    added_run_id bigint,
    added_at timestamptz not null default now(),
    primary key (view, key),
    unique (view, column_name)
  )`.execute(db);
  const comments: Record<string, Record<string, string>> = {
    typed_views: {
      '': 'The typed views hiresync keeps (jobs_flat, job_posts_flat, NAME_flat of each list resource), one row each: what they are built from and how far the data was read for them.',
      view: 'The typed view.',
      source_table: 'The table it selects from (its records in column data).',
      seen_through:
        'The highest changed_at of the rows read for it: a refresh reads only rows changed since.',
      rebuilt_at:
        'When the view was last dropped and created again (a key appeared, or a type widened).',
    },
    typed_view_columns: {
      '': "One row per column of a typed view after id: the record's top-level key it shows and its type, kept when the key stops appearing (its column stays, null).",
      view: 'The typed view (typed_views.view).',
      key: 'The top-level key of the record as sent.',
      column_name:
        'Its column in the view: the key itself when it is a plain lower-case identifier, else a safe name (the column comment names the key).',
      type: 'bigint, numeric, boolean, timestamptz, date, text or jsonb: inferred from every value seen, widened when a later value does not parse.',
      added_run_id: 'The full run (sync_runs.id) whose end added the column.',
      added_at: 'When the column was added.',
    },
  };
  for (const [table, notes] of Object.entries(comments)) {
    for (const [column, note] of Object.entries(notes)) {
      if (column === '') {
        await sql`comment on table ${sql.table(table)} is ${sql.lit(note)}`.execute(db);
      } else {
        await sql`comment on column ${sql.ref(`${table}.${column}`)} is ${sql.lit(note)}`.execute(
          db,
        );
      }
    }
  }
  for (const table of ['jobs', 'job_posts']) {
    const view = `${table}_flat`;
    await sql`insert into typed_views (view, source_table) values (${view}, ${table})`.execute(db);
    await sql`create view ${sql.table(view)} as select id, deleted_at from ${sql.table(table)}`.execute(
      db,
    );
    await sql`comment on view ${sql.table(view)} is ${sql.lit(
      `${table} with one typed column per top-level key of the records, filled at the end of the first full run.`,
    )}`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop view if exists jobs_flat, job_posts_flat`.execute(db);
  await sql`drop table if exists typed_view_columns, typed_views`.execute(db);
}
