/**
 * The steps of a connect link after it is made (connect-links.ts): opening
 * it (a fresh OAuth state), claiming the state when the browser comes back,
 * and marking the link used in the transaction that connects its account.
 * Every step reads and writes Postgres only, so each may run on any worker.
 */
import { timingSafeEqual } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { newPkce } from '../api/pkce.js';
import type { Database } from '../warehouse/tables.js';
import { type ConnectLinkTables, connectVerifierPurpose } from './connect-links.js';
import { connectTokenHash, newConnectState, verifyConnectToken } from './connect-token.js';
import { SecretBox } from './secret-box.js';

/** Lifetime of a state: the administrator approves within 15 minutes of opening the link. */
export const STATE_TTL_MS = 15 * 60_000;

/** Why a link does not open, or cannot be used at the callback. */
export type LinkRefusal =
  /** The token's signature is wrong under every key (or it is not a token): the database was not asked. */
  | { kind: 'forged' }
  /** Signed, but no link has it (another deployment's, or deleted). */
  | { kind: 'unknown' }
  | { kind: 'used'; account: string; usedAt: Date }
  | { kind: 'expired'; account: string; expiredAt: Date }
  /** A newer link for the account was made since: it withdrew this one. */
  | { kind: 'withdrawn'; account: string; withdrawnAt: Date }
  /** The account was registered since with other credentials (client credentials, an API key). */
  | { kind: 'not partner'; account: string }
  /** The account existed when the link was made, and was removed since. */
  | { kind: 'removed'; account: string };

/** Why a callback's state is refused. */
export type StateRefusal =
  | { kind: 'unknown state' }
  /** The state was claimed by an earlier callback: the answer was replayed. */
  | { kind: 'replayed'; account: string; linkUsed: boolean }
  | { kind: 'state expired'; account: string }
  /**
   * The callback came from a browser without the nonce cookie its link's
   * opening set (another browser, or cookies refused): the state is spent,
   * the link is not.
   */
  | { kind: 'other browser'; account: string }
  | SpentLink;

type SpentLink = Extract<LinkRefusal, { kind: 'used' | 'expired' | 'withdrawn' }>;

/** A link's row as both its opening and a callback read it (times in epoch milliseconds). */
interface LinkTimes {
  account: string;
  used_at_ms: number | null;
  expires_at_ms: number;
  expired: boolean;
  withdrawn_at_ms: number | null;
}

/** Why a link is refused: used, withdrawn or expired, in that order; undefined when it is none. */
function spentLink(row: LinkTimes): SpentLink | undefined {
  const { account } = row;
  if (row.used_at_ms !== null) return { kind: 'used', account, usedAt: new Date(row.used_at_ms) };
  if (row.withdrawn_at_ms !== null) {
    return { kind: 'withdrawn', account, withdrawnAt: new Date(row.withdrawn_at_ms) };
  }
  if (row.expired) return { kind: 'expired', account, expiredAt: new Date(row.expires_at_ms) };
  return undefined;
}

/** A link opened: the account, the token service its authorization goes to, and the state to send. */
export interface OpenedLink {
  account: string;
  /** The account's {auth_url} (a registered account's own, else the link's). */
  authUrl: string;
  /** The OAuth state (a secret): only its hash is stored. */
  state: string;
  /** The PKCE challenge of the verifier stored sealed with the state (method S256). */
  codeChallenge: string;
}

/** The browser an opening is bound to: the SHA-256 of the nonce its cookie carries. */
export interface BrowserBinding {
  /** Lowercase hex SHA-256 of the nonce cookie (connect-cookie.ts). */
  browserHash: string;
}

/** A link whose state a callback claimed. */
export interface ClaimedLink {
  id: string;
  account: string;
  /** A new account's URLs, as stored with the link; null when the account existed then. */
  baseUrl: string | null;
  authUrl: string | null;
  /** The PKCE verifier of the opening's authorization request, to send at the code exchange. */
  codeVerifier: string;
}

interface LinkRow extends LinkTimes {
  id: string;
  link_auth_url: string | null;
  auth_mode: string | null;
  account_auth_url: string | null;
}

/**
 * Opens the link of `token`: checks its signature under `keys` (no database
 * access for a forged one), then that it exists, is unused, not withdrawn and
 * unexpired, and that its account can still be connected; then stores a
 * fresh state for the link (its hash, expiring after `stateTtlMs`), bound to
 * the browser of `binding`, with the PKCE verifier of its authorization
 * request sealed under the first of `keys`. Opening a link does not use it
 * (a mail scanner that follows links spends nothing): the callback does.
 */
export async function openConnectLink(
  db: Kysely<Database>,
  token: string,
  keys: readonly Buffer[],
  binding: BrowserBinding,
  stateTtlMs = STATE_TTL_MS,
): Promise<{ ok: true; link: OpenedLink } | { ok: false; refusal: LinkRefusal }> {
  if (!verifyConnectToken(token, keys)) return { ok: false, refusal: { kind: 'forged' } };
  const { rows } = await sql<LinkRow>`
    select l.id::text as id, l.account, l.auth_url as link_auth_url,
      (extract(epoch from l.used_at) * 1000)::float8 as used_at_ms,
      (extract(epoch from l.expires_at) * 1000)::float8 as expires_at_ms,
      l.expires_at <= now() as expired,
      (extract(epoch from l.withdrawn_at) * 1000)::float8 as withdrawn_at_ms,
      a.auth_mode, a.auth_url as account_auth_url
    from hiresync.connect_links l
    left join hiresync.accounts a on a.name = l.account
    where l.token_hash = ${connectTokenHash(token)}`.execute(db);
  const row = rows[0];
  if (!row) return { ok: false, refusal: { kind: 'unknown' } };
  const { account } = row;
  const spent = spentLink(row);
  if (spent) return { ok: false, refusal: spent };
  if (row.auth_mode !== null && row.auth_mode !== 'partner') {
    return { ok: false, refusal: { kind: 'not partner', account } };
  }
  const authUrl = row.account_auth_url ?? row.link_auth_url;
  if (authUrl === null) return { ok: false, refusal: { kind: 'removed', account } };
  const { state, hash } = newConnectState();
  const pkce = newPkce();
  const states = db.withTables<ConnectLinkTables>();
  await states
    .insertInto('hiresync.connect_states')
    .values({
      state_hash: hash,
      link_id: row.id,
      expires_at: sql<string>`now() + ${Math.round(stateTtlMs)} * interval '1 millisecond'`,
      browser_hash: binding.browserHash,
      code_verifier: new SecretBox(keys).seal(pkce.verifier, connectVerifierPurpose(hash)),
    })
    .execute();
  // States are kept a day past their expiry (a late callback is told it
  // expired rather than unknown), then go.
  await states
    .deleteFrom('hiresync.connect_states')
    .where('expires_at', '<', sql<string>`now() - interval '1 day'`)
    .execute();
  return { ok: true, link: { account, authUrl, state, codeChallenge: pkce.challenge } };
}

interface ClaimRow {
  id: string;
  account: string;
  base_url: string | null;
  auth_url: string | null;
  browser_hash: string | null;
  code_verifier: string | null;
}

interface StateRow extends LinkTimes {
  state_used: boolean;
}

/** Whether two hex hashes are equal, compared in constant time (a missing one matches nothing). */
function sameHash(stored: string | null, given: string | undefined): boolean {
  if (stored === null || given === undefined) return false;
  const a = Buffer.from(stored, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Claims the state a callback brought back, in one statement: it must be
 * known, unused and unexpired, and its link unused, not withdrawn and
 * unexpired. The claim is committed at once (a replay of the callback is
 * refused from then on, whatever follows) and erases the sealed PKCE
 * verifier from the row; the link is not used by it. Then the browser:
 * `browserHash` (the SHA-256 of the callback's nonce cookie, undefined
 * without one) must equal the hash stored when the link was opened,
 * compared in constant time; otherwise the claim stands, so the state is
 * spent (whatever code came with it can never be redeemed through it, even
 * by the browser that opened the link) while the link stays usable: opened
 * again in the right browser it connects. Otherwise says why not. The
 * verifier is opened with `keys` (HIRESYNC_SECRET_KEY).
 */
export async function claimConnectState(
  db: Kysely<Database>,
  state: string,
  browserHash: string | undefined,
  keys: readonly Buffer[],
): Promise<{ ok: true; link: ClaimedLink } | { ok: false; refusal: StateRefusal }> {
  const hash = connectTokenHash(state);
  const { rows } = await sql<ClaimRow>`
    update hiresync.connect_states s set used_at = now(), code_verifier = null
    from hiresync.connect_links l, hiresync.connect_states old_s
    where s.state_hash = ${hash} and old_s.state_hash = s.state_hash and l.id = s.link_id
      and s.used_at is null and s.expires_at > now()
      and l.used_at is null and l.withdrawn_at is null and l.expires_at > now()
    returning l.id::text as id, l.account, l.base_url, l.auth_url, s.browser_hash,
      old_s.code_verifier`.execute(db);
  const claimed = rows[0];
  if (claimed) {
    if (!sameHash(claimed.browser_hash, browserHash) || claimed.code_verifier === null) {
      return { ok: false, refusal: { kind: 'other browser', account: claimed.account } };
    }
    return {
      ok: true,
      link: {
        id: claimed.id,
        account: claimed.account,
        baseUrl: claimed.base_url,
        authUrl: claimed.auth_url,
        codeVerifier: new SecretBox(keys).open(claimed.code_verifier, connectVerifierPurpose(hash)),
      },
    };
  }
  const found = await sql<StateRow>`
    select l.account, s.used_at is not null as state_used,
      (extract(epoch from l.used_at) * 1000)::float8 as used_at_ms,
      (extract(epoch from l.expires_at) * 1000)::float8 as expires_at_ms,
      l.expires_at <= now() as expired,
      (extract(epoch from l.withdrawn_at) * 1000)::float8 as withdrawn_at_ms
    from hiresync.connect_states s join hiresync.connect_links l on l.id = s.link_id
    where s.state_hash = ${hash}`.execute(db);
  const row = found.rows[0];
  if (!row) return { ok: false, refusal: { kind: 'unknown state' } };
  const { account } = row;
  if (row.state_used) {
    return {
      ok: false,
      refusal: { kind: 'replayed', account, linkUsed: row.used_at_ms !== null },
    };
  }
  const spent = spentLink(row);
  if (spent) return { ok: false, refusal: spent };
  return { ok: false, refusal: { kind: 'state expired', account } };
}

/**
 * Runs `connect` (exchange the code, store the token) while holding the
 * link's row lock, and marks the link used in the same transaction: the link
 * is used exactly when `connect` succeeded, and two callbacks of one link
 * (two tabs) never both connect. Throws what `connect` throws, the link left
 * unused; refuses a link used, withdrawn, expired or deleted meanwhile without running
 * `connect`.
 */
export async function useConnectLink<T>(
  db: Kysely<Database>,
  link: ClaimedLink,
  connect: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; refusal: LinkRefusal }> {
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('lock_timeout', '60s', true)`.execute(trx);
    const { rows } = await sql<{
      used_at_ms: number | null;
      expires_at_ms: number;
      expired: boolean;
      withdrawn_at_ms: number | null;
    }>`
      select (extract(epoch from used_at) * 1000)::float8 as used_at_ms,
        (extract(epoch from expires_at) * 1000)::float8 as expires_at_ms,
        expires_at <= now() as expired,
        (extract(epoch from withdrawn_at) * 1000)::float8 as withdrawn_at_ms
      from hiresync.connect_links where id = ${link.id} for update`.execute(trx);
    const row = rows[0];
    // Deleted since the state was claimed: withdrawn.
    if (!row) return { ok: false, refusal: { kind: 'unknown' } };
    if (row.used_at_ms !== null) {
      return {
        ok: false,
        refusal: { kind: 'used', account: link.account, usedAt: new Date(row.used_at_ms) },
      };
    }
    if (row.withdrawn_at_ms !== null) {
      return {
        ok: false,
        refusal: {
          kind: 'withdrawn',
          account: link.account,
          withdrawnAt: new Date(row.withdrawn_at_ms),
        },
      };
    }
    if (row.expired) {
      return {
        ok: false,
        refusal: { kind: 'expired', account: link.account, expiredAt: new Date(row.expires_at_ms) },
      };
    }
    const value = await connect();
    await sql`update hiresync.connect_links set used_at = now() where id = ${link.id}`.execute(trx);
    return { ok: true, value };
  });
}
