import { type Kysely, sql } from 'kysely';

// The webhook secrets of registered accounts (hiresync accounts update NAME
// --webhook-secret), in a table of their own. Frozen in time: takes
// Kysely<any>, never imports app types, names its tables with their schema.
//
// Why not a column of hiresync.accounts: every update of an accounts row
// bumps its version (trigger accounts_touch), and a run in flight stops when
// its account's version changes (it resumes with the new credentials). A
// webhook secret is not a credential of the API: setting, changing or
// removing it must leave the account's runs in flight and its API client
// alone, as hiresync.refresh_tokens (0002) and hiresync.account_settings
// (0006) do.

const TABLE_COMMENT =
  "Webhook secrets of registered accounts (hiresync accounts update NAME --webhook-secret; removed by --no-webhook-secret): with one, the worker's POST HIRESYNC_PUBLIC_URL/webhooks/NAME accepts the vendor's deliveries signed with it. No row: the endpoint refuses every delivery for the account (401). The account default's secret is HIRESYNC_WEBHOOK_SECRET, not a row. Apart from hiresync.accounts so that a change does not bump the account's version, which would stop its runs in flight.";

const COLUMN_COMMENTS: Record<string, string> = {
  account:
    'The registered account (hiresync.accounts.name) the secret belongs to; the row goes with the account.',
  secret:
    'The webhook secret, sealed with HIRESYNC_SECRET_KEY (AES-256-GCM, hs1.<key id>.<iv>.<ciphertext>.<tag>) for the purpose account:<name>:webhook_secret, so it opens in no other row or column; never plaintext. hiresync accounts rekey seals it again with the first key.',
  updated_at: 'When the secret was last set (or sealed again by rekey).',
};

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table hiresync.webhook_secrets (
      account text primary key
        references hiresync.accounts (name) on delete cascade,
      secret text not null
        constraint webhook_secrets_sealed check (secret like 'hs1.%'),
      updated_at timestamptz not null default now()
    )`.execute(db);

  await sql`comment on table hiresync.webhook_secrets is ${sql.lit(TABLE_COMMENT)}`.execute(db);
  for (const [column, note] of Object.entries(COLUMN_COMMENTS)) {
    await sql`comment on column ${sql.ref(`hiresync.webhook_secrets.${column}`)} is ${sql.lit(note)}`.execute(
      db,
    );
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists hiresync.webhook_secrets`.execute(db);
}
