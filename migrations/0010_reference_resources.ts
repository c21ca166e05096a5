import { type Kysely, sql } from 'kysely';

// Migrations are frozen in time: they take Kysely<any> and never import app types.

/** The reference tables, each now also a resource of its own (its list `/v3/<table>`). */
const REFERENCE = {
  job_boards: { what: 'job board', list: 'job_boards' },
  sources: { what: 'source', list: 'sources' },
  referrers: { what: 'referrer', list: 'referrers' },
} as const;

/**
 * `job_boards`, `sources` and `referrers` become resources of their own,
 * written both by their own lists and by the nested objects of tracking links:
 * each table gains `deleted_at` (a full run of its list soft-deletes the ids
 * it no longer saw), `last_seen_run_id` (the run of its list that last saw
 * the id), `changed_at`, and a history table `<table>_history`. Rows are kept;
 * each row holding a record gets one version, from when hiresync last wrote it.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, { what, list }] of Object.entries(REFERENCE)) {
    const history = `${table}_history`;
    await sql`alter table ${sql.table(table)}
      add column deleted_at timestamptz,
      add column last_seen_run_id bigint,
      add column changed_at timestamptz not null default now()`.execute(db);
    await sql`update ${sql.table(table)} set changed_at = synced_at`.execute(db);
    const notes: Record<string, string> = {
      raw: `The ${what} as last served: the record of /v3/${list}, or the object nested in a tracking link, whichever came last; null for an id known only from a flat link.`,
      deleted_at: `Set when a full run of ${list} no longer saw the id (the names stay, so tracking_links_flat still shows them).`,
      last_seen_run_id: `The run of ${list} (sync_runs.id) that last saw the id; null for an id only tracking links named.`,
      changed_at: `When the current version of this ${what} began; valid_from of its open version in ${history}.`,
    };
    for (const [column, note] of Object.entries(notes)) {
      await sql`comment on column ${sql.ref(`${table}.${column}`)} is ${sql.lit(note)}`.execute(db);
    }
    await sql`comment on table ${sql.table(table)} is ${sql.lit(
      `${what[0]?.toUpperCase()}${what.slice(1)}s, one row per id, from the list /v3/${list} and from the objects nested in tracking links: the row holds the newest one served.`,
    )}`.execute(db);

    await sql`create table ${sql.table(history)} (
      id bigint not null,
      valid_from timestamptz not null,
      valid_to timestamptz,
      run_id bigint,
      deleted boolean not null default false,
      raw jsonb,
      primary key (id, valid_from)
    )`.execute(db);
    await sql`insert into ${sql.table(history)} (id, valid_from, run_id, deleted, raw)
      select id, changed_at, source_run_id, false, raw
      from ${sql.table(table)} where raw is not null`.execute(db);
    await sql`comment on table ${sql.table(history)} is ${sql.lit(
      `Every version of each ${what} hiresync has stored, one row per version: the open version (valid_to null) is the row of ${table} as it is now.`,
    )}`.execute(db);
    const historyNotes: Record<string, string> = {
      id: `${what[0]?.toUpperCase()}${what.slice(1)} id (API), as in ${table}.id.`,
      valid_from:
        'When this version began (the transaction time of the page or sweep that stored it).',
      valid_to: 'When the next version replaced this one; null for the current version.',
      run_id: 'The sync run (sync_runs.id) that stored this version.',
      deleted: `True for the version that records a deletion (a full run of ${list} no longer saw the id).`,
      raw: `The ${what} as served in this version; null for an id known only from a flat link.`,
    };
    for (const [name, note] of Object.entries(historyNotes)) {
      await sql`comment on column ${sql.ref(`${history}.${name}`)} is ${sql.lit(note)}`.execute(db);
    }
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of Object.keys(REFERENCE)) {
    await sql`drop table if exists ${sql.table(`${table}_history`)}`.execute(db);
    await sql`alter table ${sql.table(table)}
      drop column if exists changed_at,
      drop column if exists last_seen_run_id,
      drop column if exists deleted_at`.execute(db);
  }
}
