import { type Kysely, sql } from 'kysely';

// The erasure log (hiresync erase, HIRESYNC_ERASE_DELETED_AFTER): one row per
// (account, resource, id) erased, kept as the proof that a request was
// honoured. Frozen in time: takes Kysely<any>, never imports app types, names
// its tables with their schema.
//
// It holds no content of the record, by design: an erasure that kept the
// erased values to prove itself would not be one. What it holds is what an
// auditor asks (which record, of which account, when, what was found, why).
// One table for every account (not shared storage with views): it is
// hiresync's own record of its actions, read across accounts, and it outlives
// an account's data (accounts remove --drop-data leaves it).

const TABLE_COMMENT =
  "Erasures: one row per record hiresync erased (hiresync erase, or the schedule of HIRESYNC_ERASE_DELETED_AFTER), written in the transaction that removed the record's row, every version of it in <resource>_history and its rejected_records. Never any content of the record: the proof that a request was honoured is this row plus a count of 0 over the resource's history for the id. An id with nothing stored is recorded too, with counts 0.";

const COLUMN_COMMENTS: Record<string, string> = {
  id: 'Identity of the erasure (increasing).',
  account:
    "The account whose record was erased: 'default' (schema public) or a registered account's name.",
  resource: 'The resource (jobs, candidates, tracking_links, …) whose record was erased.',
  record_id: 'The id of the erased record (the API id, as in the resource table and its history).',
  erased_at: 'When the erasure committed (its transaction time).',
  rows_erased:
    "Rows of the resource's table removed: 1, or 0 when no row of that id was stored (already erased, never synced).",
  history_versions_erased: "Versions of the record removed from the resource's history table.",
  rejected_records_erased:
    "Rejected records of the resource removed whose record carried this id (rejected_records.raw's id).",
  origin:
    'command (hiresync erase with --id), deleted_after (records deleted upstream, erased by the schedule of HIRESYNC_ERASE_DELETED_AFTER or by hiresync erase --deleted-before).',
  note: "The operator's note (hiresync erase --note), or why the schedule erased it; never content of the record.",
};

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table hiresync.erasures (
      id bigint generated always as identity primary key,
      account text not null,
      resource text not null,
      record_id bigint not null,
      erased_at timestamptz not null default now(),
      rows_erased integer not null default 0
        constraint erasures_rows_erased_count check (rows_erased >= 0),
      history_versions_erased integer not null default 0
        constraint erasures_history_versions_erased_count check (history_versions_erased >= 0),
      rejected_records_erased integer not null default 0
        constraint erasures_rejected_records_erased_count check (rejected_records_erased >= 0),
      origin text not null
        constraint erasures_origin check (origin in ('command', 'deleted_after')),
      note text
    )`.execute(db);
  await sql`create index erasures_record on hiresync.erasures (account, resource, record_id)`.execute(
    db,
  );
  await sql`comment on table hiresync.erasures is ${sql.lit(TABLE_COMMENT)}`.execute(db);
  for (const [column, note] of Object.entries(COLUMN_COMMENTS)) {
    await sql`comment on column ${sql.ref(`hiresync.erasures.${column}`)} is ${sql.lit(note)}`.execute(
      db,
    );
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists hiresync.erasures`.execute(db);
}
