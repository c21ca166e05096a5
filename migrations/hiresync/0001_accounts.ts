import { type Kysely, sql } from 'kysely';

// hiresync's own control schema `hiresync`, migrated apart from the account
// schemas (its own kysely_migration table lives in schema hiresync). Frozen in
// time: takes Kysely<any>, never imports app types, names its tables with
// their schema.

const TABLE_COMMENT =
  'Accounts registered with hiresync accounts add: one row per customer whose data hiresync syncs into the schema of the same name. The environment credentials are the account default (schema public) and have no row here.';

const COLUMN_COMMENTS: Record<string, string> = {
  name: 'Account name, also the name of the schema holding its tables: ^[a-z][a-z0-9_]{0,39}$, not default, public, hiresync, all_accounts, information_schema or pg_*.',
  auth_mode:
    'How the account authenticates: client_credentials (custom integration), api_key (transition key exchanged at base_url/auth/token) or partner (authorization code grant, refresh token).',
  base_url: "The account's API {base_url}, without a trailing slash.",
  auth_url:
    "The token service's {auth_url} (client_credentials and partner); tokens come from auth_url/token.",
  client_id: 'OAuth client id (client_credentials); not secret.',
  sub: 'Numeric user id sent as sub at token time (client_credentials), if any.',
  secret:
    'The client secret, API key or refresh token, sealed with HIRESYNC_SECRET_KEY (AES-256-GCM, hs1.<key id>.<iv>.<ciphertext>.<tag>); never plaintext. Null until a partner account is authorized.',
  credential_namespace:
    'Non-secret id of the credential, as used in Redis key names (token cache, token lock, rate-limit pacing): lets remove delete those keys without opening the secret. Null while the account has no credential.',
  state:
    'enabled (synced and scheduled), disabled (keeps data and credentials, runs nothing) or needs_reauthorization (a partner refresh was refused: run hiresync accounts authorize).',
  created_at: 'When the account was added.',
  updated_at: "When the account's row last changed.",
  version:
    'Incremented on every change of the row (credentials, URLs, state): runtimes built for an older version are rebuilt.',
};

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create schema if not exists hiresync`.execute(db);
  await sql`
    create table hiresync.accounts (
      name text primary key
        constraint accounts_name_pattern check (
          name ~ '^[a-z][a-z0-9_]{0,39}$'
          and name not in ('default', 'public', 'hiresync', 'all_accounts', 'information_schema')
          and name not like 'pg\\_%'
        ),
      auth_mode text not null
        constraint accounts_auth_mode check (auth_mode in ('client_credentials', 'api_key', 'partner')),
      base_url text not null,
      auth_url text,
      client_id text,
      sub text constraint accounts_sub_digits check (sub ~ '^[0-9]+$'),
      secret text constraint accounts_secret_sealed check (secret like 'hs1.%'),
      credential_namespace text,
      state text not null default 'enabled'
        constraint accounts_state check (state in ('enabled', 'disabled', 'needs_reauthorization')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      version bigint not null default 1,
      constraint accounts_client_credentials check (
        auth_mode <> 'client_credentials'
        or (client_id is not null and auth_url is not null and secret is not null)
      ),
      constraint accounts_api_key check (auth_mode <> 'api_key' or secret is not null)
    )`.execute(db);

  // Every update bumps version and updated_at, whoever makes it (hiresync or psql).
  await sql`
    create function hiresync.accounts_touch() returns trigger language plpgsql as $$
    begin
      new.version := old.version + 1;
      new.updated_at := now();
      return new;
    end
    $$`.execute(db);
  await sql`
    create trigger accounts_touch before update on hiresync.accounts
    for each row execute function hiresync.accounts_touch()`.execute(db);

  await sql`comment on schema hiresync is ${sql.lit(
    "hiresync's own control tables (registered accounts). Created and migrated by hiresync migrate.",
  )}`.execute(db);
  await sql`comment on table hiresync.accounts is ${sql.lit(TABLE_COMMENT)}`.execute(db);
  for (const [column, note] of Object.entries(COLUMN_COMMENTS)) {
    await sql`comment on column ${sql.ref(`hiresync.accounts.${column}`)} is ${sql.lit(note)}`.execute(
      db,
    );
  }
  await sql`comment on function hiresync.accounts_touch() is ${sql.lit(
    'Trigger of hiresync.accounts: increments version and sets updated_at on every update.',
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists hiresync.accounts`.execute(db);
  await sql`drop function if exists hiresync.accounts_touch()`.execute(db);
}
