import { type Kysely, sql } from 'kysely';

// Per-account settings (accounts add|update NAME --resources LIST
// --incremental-every D --full-cron CRON), in a table of their own. Frozen in
// time: takes Kysely<any>, never imports app types, names its tables with
// their schema.
//
// Why not columns of hiresync.accounts: every update of an accounts row bumps
// its version (trigger accounts_touch), and a run in flight stops when its
// account's version changes (it resumes with the new credentials). A settings
// change needs none of that: a new schedule, or a resource added or dropped,
// takes effect at the account's next run, and the runs in flight finish as
// they are. Kept apart, as hiresync.refresh_tokens is (0002), a settings
// change leaves the account's version, its runs in flight and its API client
// alone; the worker's schedule keeper re-reads this table every minute.

const TABLE_COMMENT =
  "Settings of a registered account that override the deployment's (HIRESYNC_RESOURCES, HIRESYNC_INCREMENTAL_EVERY, HIRESYNC_FULL_CRON), written by hiresync accounts add|update --resources, --incremental-every, --full-cron; a null column (or no row) means the deployment's value. Apart from hiresync.accounts so that a change does not bump the account's version, which would stop its runs in flight. Running workers follow a change within a minute.";

const COLUMN_COMMENTS: Record<string, string> = {
  account:
    'The registered account (hiresync.accounts.name) the settings belong to; the row goes with the account.',
  resources:
    "The resources the account syncs, in order (--resources); null: HIRESYNC_RESOURCES. A list resource only this account names has its tables in the account's schema only.",
  incremental_every_ms:
    'Milliseconds between its scheduled incremental runs (--incremental-every); null: HIRESYNC_INCREMENTAL_EVERY.',
  full_cron:
    'Five-field cron pattern of its scheduled full runs (--full-cron); null: HIRESYNC_FULL_CRON.',
  updated_at: 'When the settings last changed.',
};

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table hiresync.account_settings (
      account text primary key
        references hiresync.accounts (name) on delete cascade,
      resources text[]
        constraint account_settings_resources_listed check (cardinality(resources) > 0),
      incremental_every_ms bigint
        constraint account_settings_incremental_positive check (incremental_every_ms > 0),
      full_cron text,
      updated_at timestamptz not null default now()
    )`.execute(db);

  await sql`comment on table hiresync.account_settings is ${sql.lit(TABLE_COMMENT)}`.execute(db);
  for (const [column, note] of Object.entries(COLUMN_COMMENTS)) {
    await sql`comment on column ${sql.ref(`hiresync.account_settings.${column}`)} is ${sql.lit(note)}`.execute(
      db,
    );
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists hiresync.account_settings`.execute(db);
}
