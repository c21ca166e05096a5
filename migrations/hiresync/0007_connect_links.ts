import { type Kysely, sql } from 'kysely';

// Connect links (hiresync accounts invite) and the OAuth states their openings
// start. Frozen in time: takes Kysely<any>, never imports app types, names its
// tables with their schema.
//
// Kept in Postgres, not in a process's memory, so that any worker behind
// HIRESYNC_PUBLIC_URL serves any step: the link opened on one, the callback
// answered by another. Neither a link's token nor a state is stored: only
// their SHA-256, so a copy of the table opens nothing.

const LINKS_COMMENT =
  "Connect links made by hiresync accounts invite (or the console): one row per link sent to a customer's administrator, who opens HIRESYNC_PUBLIC_URL/connect/<token> to authorize the partner app for the account. A link is single-use (used_at) and expires (expires_at).";

const LINK_COLUMNS: Record<string, string> = {
  id: 'Identity of the link; not secret, never part of the URL.',
  account:
    'The account the link connects: a new partner account, or a registered partner account to re-authorize (needs_reauthorization). No foreign key: a new account has no row until the callback registers it.',
  token_hash:
    "Lowercase hex SHA-256 of the link's token (the part of the URL after /connect/). The token itself is random (256 bits) and signed with HMAC-SHA256 under HIRESYNC_SECRET_KEY; it is never stored.",
  base_url:
    "The {base_url} a new account is registered with (the inviter's --base-url or HIRESYNC_BASE_URL); null when the account existed when the link was made (it keeps its own).",
  auth_url:
    'The {auth_url} a new account is registered with (--auth-url or HIRESYNC_AUTH_URL); null when the account existed when the link was made (it keeps its own).',
  created_at: 'When the link was made.',
  expires_at: 'After this the link is refused (accounts invite --expires, default 7 days).',
  used_at:
    "When the link connected its account (set in the same transaction as the callback's outcome); null while unused. A used link is refused.",
};

const STATES_COMMENT =
  'OAuth state values of connect links: one row per opening of a link, each sent to the authorize endpoint and expected back at HIRESYNC_PUBLIC_URL/oauth/callback. Single-use and short-lived.';

const STATE_COLUMNS: Record<string, string> = {
  state_hash:
    'Lowercase hex SHA-256 of the state (32 random bytes, base64url); the state itself is never stored.',
  link_id: 'The connect link whose opening made the state; the state goes with the link.',
  created_at: 'When the link was opened and the state made.',
  expires_at: 'After this a callback carrying the state is refused (15 minutes after it was made).',
  used_at:
    'When a callback carrying the state arrived (committed before the code is exchanged); null until then. A state is accepted once: a replayed callback is refused.',
};

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table hiresync.connect_links (
      id bigint generated always as identity primary key,
      account text not null,
      token_hash text not null
        constraint connect_links_token_hash_hex check (token_hash ~ '^[0-9a-f]{64}$'),
      base_url text,
      auth_url text,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz,
      constraint connect_links_token_hash_key unique (token_hash)
    )`.execute(db);
  await sql`create index connect_links_account on hiresync.connect_links (account)`.execute(db);
  await sql`
    create table hiresync.connect_states (
      state_hash text primary key
        constraint connect_states_state_hash_hex check (state_hash ~ '^[0-9a-f]{64}$'),
      link_id bigint not null references hiresync.connect_links (id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db);
  await sql`create index connect_states_link_id on hiresync.connect_states (link_id)`.execute(db);

  for (const [table, comment, columns] of [
    ['connect_links', LINKS_COMMENT, LINK_COLUMNS],
    ['connect_states', STATES_COMMENT, STATE_COLUMNS],
  ] as const) {
    await sql`comment on table ${sql.ref(`hiresync.${table}`)} is ${sql.lit(comment)}`.execute(db);
    for (const [column, note] of Object.entries(columns)) {
      await sql`comment on column ${sql.ref(`hiresync.${table}.${column}`)} is ${sql.lit(note)}`.execute(
        db,
      );
    }
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists hiresync.connect_states`.execute(db);
  await sql`drop table if exists hiresync.connect_links`.execute(db);
}
