import { type Kysely, sql } from 'kysely';

// The progress of hiresync reapply-policy: one row per (account, resource,
// relation) it rewrites under HIRESYNC_FIELD_POLICY, so that a run stopped
// half-way (a crash, a kill, a deploy) continues from the last batch done,
// a changed policy starts that relation over, and a relation done under the
// same policy is skipped. Frozen in time: takes Kysely<any>, never imports
// app types, names its table with its schema.
//
// It holds the policy's rules (key paths and actions: no value, no key of
// HIRESYNC_HASH_KEY) and keys of rows (ids, a version's valid_from): no
// content of any record.

const TABLE_COMMENT =
  "Progress of hiresync reapply-policy: one row per account, resource and relation (the resource's table, its history, rejected_records) it rewrote or is rewriting so that what is stored matches HIRESYNC_FIELD_POLICY. A rerun continues after last_id (and last_valid_from) while policy is the same text, starts over when it differs, and skips the relation once completed_at is set. No content of any record.";

const COLUMN_COMMENTS: Record<string, string> = {
  account: "The account: 'default' (schema public) or a registered account's name.",
  resource: 'The resource (jobs, candidates, tracking_links, …) whose records are rewritten.',
  relation:
    "The relation rewritten, as the account's schema names it: the resource's table (jobs, candidates_data, …), its history (jobs_history, …) or rejected_records.",
  policy:
    "The resource's rules applied (key.path=action, sorted, comma-separated; for a reference table also those of the copies nested in tracking links): a different text starts the relation over.",
  last_id:
    'The key of the last row done (its id); null before the first batch. The next batch reads the rows after it.',
  last_valid_from:
    'With last_id, the key of the last history version done (its valid_from); null for a table or rejected_records.',
  rows_read: 'Rows read so far by the pass (every row of the relation once it is complete).',
  rows_rewritten:
    'Rows the policy changed and that were written again (a row it leaves as it is is never written).',
  started_at:
    'When the pass began (or the oldest transaction then open, if earlier): rows written since by a run are checked once more at its end.',
  updated_at: 'When the last batch was done.',
  completed_at: 'When the pass ended; null while it is under way or was stopped.',
};

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table hiresync.policy_reapply (
      account text not null,
      resource text not null,
      relation text not null,
      policy text not null,
      last_id bigint,
      last_valid_from timestamptz,
      rows_read bigint not null default 0,
      rows_rewritten bigint not null default 0,
      started_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      completed_at timestamptz,
      primary key (account, resource, relation)
    )`.execute(db);
  await sql`comment on table hiresync.policy_reapply is ${sql.lit(TABLE_COMMENT)}`.execute(db);
  for (const [column, note] of Object.entries(COLUMN_COMMENTS)) {
    await sql`comment on column ${sql.ref(`hiresync.policy_reapply.${column}`)} is ${sql.lit(note)}`.execute(
      db,
    );
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists hiresync.policy_reapply`.execute(db);
}
