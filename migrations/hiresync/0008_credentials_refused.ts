import { type Kysely, sql } from 'kysely';

// State credentials_refused: a registered client-credentials or API-key
// account whose credential the token endpoint refused (401, or 400
// invalid_client) runs nothing until its credential is replaced (hiresync
// accounts update NAME) or an operator enables it. Frozen in time: takes
// Kysely<any>, never imports app types, names its tables with their schema.
//
// The reason is a column of hiresync.accounts (unlike a partner account's,
// kept with its refresh token): the refusal changes the row's state anyway,
// which bumps its version and stops its runs in flight, as it should.

const STATE_COMMENT =
  'enabled (synced and scheduled), disabled (keeps data and credentials, runs nothing), needs_reauthorization (a partner refresh was refused: run hiresync accounts invite or authorize) or credentials_refused (the token endpoint refused the client secret or API key: store the right one with hiresync accounts update, or hiresync accounts enable once the vendor side is fixed).';

const REFUSAL_REASON_COMMENT =
  "Why the account is in state credentials_refused: the token endpoint's refusal (status and its error text, redacted), never the credential; null otherwise. Shown by hiresync accounts list, status and the console. Cleared when the account is enabled again (accounts update with a new secret or key, accounts enable).";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table hiresync.accounts drop constraint accounts_state`.execute(db);
  await sql`
    alter table hiresync.accounts
      add constraint accounts_state check (
        state in ('enabled', 'disabled', 'needs_reauthorization', 'credentials_refused')
      ),
      add column refusal_reason text`.execute(db);
  await sql`comment on column hiresync.accounts.state is ${sql.lit(STATE_COMMENT)}`.execute(db);
  await sql`comment on column hiresync.accounts.refusal_reason is ${sql.lit(REFUSAL_REASON_COMMENT)}`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`update hiresync.accounts set state = 'disabled' where state = 'credentials_refused'`.execute(
    db,
  );
  await sql`alter table hiresync.accounts drop column refusal_reason`.execute(db);
  await sql`alter table hiresync.accounts drop constraint accounts_state`.execute(db);
  await sql`
    alter table hiresync.accounts
      add constraint accounts_state check (state in ('enabled', 'disabled', 'needs_reauthorization'))`.execute(
    db,
  );
  await sql`comment on column hiresync.accounts.state is ${sql.lit(
    'enabled (synced and scheduled), disabled (keeps data and credentials, runs nothing) or needs_reauthorization (a partner refresh was refused: run hiresync accounts authorize).',
  )}`.execute(db);
}
