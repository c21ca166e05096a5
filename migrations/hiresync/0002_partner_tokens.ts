import { type Kysely, sql } from 'kysely';

// Partner accounts' refresh tokens, in a table of their own. Frozen in time:
// takes Kysely<any>, never imports app types, names its tables with their
// schema.
//
// Why not a column of hiresync.accounts: every update of an accounts row bumps
// its version (trigger accounts_touch), and a run in flight stops when its
// account's version changes. A refresh token rotates at every refresh, so
// keeping it there would stop every run of a partner account each time its
// access token is renewed. Only what changes the account (its state, when a
// refresh is refused) touches the accounts row.

const TABLE_COMMENT =
  "Refresh tokens of partner accounts (authorization code grant): one row per account whose customer authorized the partner app, written by hiresync accounts add --partner and hiresync accounts authorize, rotated by every refresh. Apart from hiresync.accounts so that a rotation does not change the account's version (which stops its runs in flight). A refresh is serialised across processes by a session advisory lock on the account.";

const COLUMN_COMMENTS: Record<string, string> = {
  account:
    'The partner account (hiresync.accounts.name) the token belongs to; the row goes with the account.',
  token:
    "The refresh token in force, sealed with HIRESYNC_SECRET_KEY (AES-256-GCM, hs1.<key id>.<iv>.<ciphertext>.<tag>) for the purpose account:<name>:refresh_token, so it opens in no other row or column; never plaintext. Replaced by the rotated token in the same statement that records a refresh's success, before the access token that came with it is used.",
  authorized_at:
    'When the customer last authorized the partner app for this account (the token came from an authorization code, or was given to accounts add --partner).',
  refreshed_at:
    "When a refresh with this account's token last succeeded; null until the first. The worker refreshes an enabled account whose newest of refreshed_at and authorized_at is older than HIRESYNC_REFRESH_KEEPALIVE, so an unused token does not expire.",
  refresh_started_at:
    'Set (and committed) just before a refresh grant is sent, cleared when its outcome is recorded. Still set when no refresh is running: a refresh was interrupted (network failure, 5xx, a process killed) after sending, so the token endpoint may have rotated the token without hiresync learning the new one. The next refresh tries the stored token: if it is refused, the account needs re-authorization and the reason says the rotated token was lost.',
  reauthorization_reason:
    'Why the account is in state needs_reauthorization (its refresh token was refused, or lost to an interrupted refresh); null otherwise. Shown by hiresync accounts list and status. Cleared by hiresync accounts authorize and by a successful refresh.',
};

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table hiresync.refresh_tokens (
      account text primary key
        references hiresync.accounts (name) on delete cascade,
      token text not null
        constraint refresh_tokens_token_sealed check (token like 'hs1.%'),
      authorized_at timestamptz not null default now(),
      refreshed_at timestamptz,
      refresh_started_at timestamptz,
      reauthorization_reason text
    )`.execute(db);

  await sql`comment on table hiresync.refresh_tokens is ${sql.lit(TABLE_COMMENT)}`.execute(db);
  for (const [column, note] of Object.entries(COLUMN_COMMENTS)) {
    await sql`comment on column ${sql.ref(`hiresync.refresh_tokens.${column}`)} is ${sql.lit(note)}`.execute(
      db,
    );
  }
  await sql`comment on constraint refresh_tokens_token_sealed on hiresync.refresh_tokens is ${sql.lit(
    'A refresh token is stored sealed by SecretBox (hs1.…), never as plaintext.',
  )}`.execute(db);
  // The secret column of hiresync.accounts no longer holds partner tokens.
  await sql`comment on column hiresync.accounts.secret is ${sql.lit(
    'The client secret (client_credentials) or API key (api_key), sealed with HIRESYNC_SECRET_KEY (AES-256-GCM, hs1.<key id>.<iv>.<ciphertext>.<tag>) for the purpose account:<name>:secret; never plaintext. Null for partner accounts: their refresh token is in hiresync.refresh_tokens.',
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists hiresync.refresh_tokens`.execute(db);
  await sql`comment on column hiresync.accounts.secret is ${sql.lit(
    'The client secret, API key or refresh token, sealed with HIRESYNC_SECRET_KEY (AES-256-GCM, hs1.<key id>.<iv>.<ciphertext>.<tag>); never plaintext. Null until a partner account is authorized.',
  )}`.execute(db);
}
