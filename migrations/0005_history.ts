import { type Kysely, sql } from 'kysely';

// Migrations are frozen in time: they take Kysely<any> and never import app types.

/** The synced tables that keep a history, with the column holding the record as sent. */
const SYNCED = {
  tracking_links: { column: 'raw', what: 'tracking link' },
  jobs: { column: 'data', what: 'job' },
  job_posts: { column: 'data', what: 'job post' },
} as const;

/**
 * History: one `<table>_history` per synced table, one row per version of a
 * record, written by the page statement in the page's transaction when the
 * record changed (and by the deletion sweep), so a version is never lost or
 * doubled. `changed_at` on the synced table says when its current version
 * began: the page statement compares the record with the row it replaces and
 * moves `changed_at` only when it differs, which is how it knows a version
 * starts, at no extra lookup.
 *
 * Existing rows get one version each, from when hiresync last wrote them (the
 * best that is known of them), deleted rows a deletion version.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, { column, what }] of Object.entries(SYNCED)) {
    const history = `${table}_history`;
    await sql`alter table ${sql.table(table)}
      add column changed_at timestamptz not null default now()`.execute(db);
    await sql`update ${sql.table(table)} set changed_at = synced_at`.execute(db);
    await sql`comment on column ${sql.ref(`${table}.changed_at`)} is ${sql.lit(
      `When the current version of this ${what} began: the last time hiresync stored it changed (or deleted, or back after a deletion); valid_from of its open version in ${history}.`,
    )}`.execute(db);

    await sql`create table ${sql.table(history)} (
      id bigint not null,
      valid_from timestamptz not null,
      valid_to timestamptz,
      run_id bigint,
      deleted boolean not null default false,
      ${sql.ref(column)} jsonb not null,
      primary key (id, valid_from)
    )`.execute(db);
    await sql`insert into ${sql.table(history)} (id, valid_from, run_id, deleted, ${sql.ref(column)})
      select id, changed_at, last_seen_run_id, deleted_at is not null, ${sql.ref(column)}
      from ${sql.table(table)}`.execute(db);

    await sql`comment on table ${sql.table(history)} is ${sql.lit(
      `Every version of each ${what} hiresync has stored, one row per version: the open version (valid_to null) is the row of ${table} as it is now. A page that changes nothing adds no version. The ${table} as of time T: select distinct on (id) * from ${history} where valid_from <= T and (valid_to is null or valid_to > T) and not deleted.`,
    )}`.execute(db);
    const notes: Record<string, string> = {
      id: `${what[0]?.toUpperCase()}${what.slice(1)} id (API), as in ${table}.id.`,
      valid_from:
        'When this version began (the transaction time of the page or sweep that stored it).',
      valid_to: 'When the next version replaced this one; null for the current version.',
      run_id: 'The sync run (sync_runs.id) that stored this version.',
      deleted:
        'True for the version that records a deletion (a full sync no longer saw the record); it holds the last record seen.',
      [column]: 'The record exactly as the API sent it in this version.',
    };
    for (const [name, note] of Object.entries(notes)) {
      await sql`comment on column ${sql.ref(`${history}.${name}`)} is ${sql.lit(note)}`.execute(db);
    }
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of Object.keys(SYNCED)) {
    await sql`drop table if exists ${sql.table(`${table}_history`)}`.execute(db);
    await sql`alter table ${sql.table(table)} drop column if exists changed_at`.execute(db);
  }
}
