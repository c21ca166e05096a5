import { type Kysely, sql } from 'kysely';

// Connect links bound to the browser that opened them, with PKCE, and
// withdrawn when a newer link for the same account is made. Frozen in time:
// takes Kysely<any>, never imports app types, names its tables with their
// schema.
//
// Each opening of a link sets a random nonce cookie in the browser and
// stores only its SHA-256 with the state; the callback is accepted only from
// a browser carrying that cookie. The PKCE verifier of the opening's
// authorization request must be sent at the code exchange, which any worker
// may do, so it is stored with the state, sealed with HIRESYNC_SECRET_KEY,
// and erased when a callback claims the state.

const COLUMN_COMMENTS: Record<string, string> = {
  'connect_states.browser_hash':
    'Lowercase hex SHA-256 of the nonce cookie set in the browser that opened the link (HttpOnly, SameSite=Lax, path limited to the callback); a callback without the matching cookie is refused. Null for a state made before migration hiresync/0014, which no callback can use. The nonce itself is never stored.',
  'connect_states.code_verifier':
    "The PKCE code_verifier (RFC 7636) of the opening's authorization request, sealed with HIRESYNC_SECRET_KEY (AES-256-GCM, bound to state_hash); sent at the code exchange. Erased when a callback claims the state; null before migration hiresync/0014.",
  'connect_links.withdrawn_at':
    'When a newer link for the same account withdrew this unused one (each new link withdraws the older unused links of its account); null otherwise. A withdrawn link is refused, and so are the states of its openings.',
};

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table hiresync.connect_states
      add column browser_hash text
        constraint connect_states_browser_hash_hex check (browser_hash ~ '^[0-9a-f]{64}$'),
      add column code_verifier text`.execute(db);
  await sql`alter table hiresync.connect_links add column withdrawn_at timestamptz`.execute(db);
  for (const [column, note] of Object.entries(COLUMN_COMMENTS)) {
    await sql`comment on column ${sql.ref(`hiresync.${column}`)} is ${sql.lit(note)}`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table hiresync.connect_links drop column if exists withdrawn_at`.execute(db);
  await sql`
    alter table hiresync.connect_states
      drop column if exists code_verifier,
      drop column if exists browser_hash`.execute(db);
}
