/**
 * Connect links (`hiresync accounts invite`, the console): a signed,
 * single-use, expiring URL a customer's administrator opens to authorize the
 * partner app for an account, and the OAuth states its openings start. All of
 * it lives in hiresync.connect_links and hiresync.connect_states
 * (migrations/hiresync/0007 and 0014), so any worker behind
 * HIRESYNC_PUBLIC_URL serves any step; only hashes of the tokens, states and
 * browser nonces are stored, and the PKCE verifiers sealed.
 */
import { type Generated, type Kysely, sql } from 'kysely';
import { accountNameProblem } from '../account-name.js';
import type { SecretKeys } from '../config/secret-keys.js';
import type { PartnerConfig } from '../config/types.js';
import { ConfigError, HiresyncError } from '../errors.js';
import type { Database } from '../warehouse/tables.js';
import { AccountStore } from './account-store.js';
import { newConnectToken } from './connect-token.js';
import { checkNewAccount, type FreeSchema } from './register-account.js';

/** A row of `hiresync.connect_links`. */
export interface ConnectLinksTable {
  id: Generated<string>;
  account: string;
  /** Hex SHA-256 of the token; the token itself is never stored. */
  token_hash: string;
  /** A new account's URLs; null when the account was registered when the link was made. */
  base_url: string | null;
  auth_url: string | null;
  /** The account it registers may take over rows of an earlier registration of its name (invite --reuse-data). */
  reuse_data: Generated<boolean>;
  created_at: Generated<string>;
  expires_at: string;
  used_at: string | null;
  /** When a newer link for the account withdrew this one (migrations/hiresync/0014). */
  withdrawn_at: string | null;
}

/** A row of `hiresync.connect_states`. */
export interface ConnectStatesTable {
  /** Hex SHA-256 of the state; the state itself is never stored. */
  state_hash: string;
  link_id: string;
  created_at: Generated<string>;
  expires_at: string;
  used_at: string | null;
  /** Hex SHA-256 of the nonce cookie of the browser that opened the link (0014). */
  browser_hash: string | null;
  /** The PKCE verifier, sealed ({@link connectVerifierPurpose}); erased once the state is claimed (0014). */
  code_verifier: string | null;
}

/** The tables of connect links, for `Kysely#withTables`. */
export type ConnectLinkTables = {
  'hiresync.connect_links': ConnectLinksTable;
  'hiresync.connect_states': ConnectStatesTable;
};

/** Longest lifetime of a link (`--expires`): 30 days. */
export const MAX_LINK_LIFETIME_MS = 30 * 86_400_000;
/** Shortest lifetime of a link: 1 minute. */
export const MIN_LINK_LIFETIME_MS = 60_000;
/** Default lifetime of a link: 7 days. */
export const DEFAULT_LINK_LIFETIME_MS = 7 * 86_400_000;

/** The path of a link under HIRESYNC_PUBLIC_URL: `/connect/<token>`. */
export const CONNECT_PATH = '/connect/';
/** The path of the redirect URI under HIRESYNC_PUBLIC_URL. */
export const CALLBACK_PATH = '/oauth/callback';

/** The redirect URI registered with the vendor: HIRESYNC_PUBLIC_URL + `/oauth/callback`. */
export function connectRedirectUri(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${CALLBACK_PATH}`;
}

/** Options of {@link createConnectLink}. */
export interface CreateConnectLinkOptions {
  /** A new partner account's name, or a registered partner account's (re-authorization). */
  account: string;
  /** How long the link stays valid: {@link MIN_LINK_LIFETIME_MS} to {@link MAX_LINK_LIFETIME_MS}. */
  expiresInMs: number;
  /** HIRESYNC_PUBLIC_URL (validated by config: https unless loopback). */
  publicUrl: string;
  /** HIRESYNC_SECRET_KEY: the first key signs the link. Undefined: a ConfigError. */
  secretKeys: SecretKeys | undefined;
  /** The partner app. Undefined: a ConfigError naming its variables. */
  partner?: PartnerConfig | undefined;
  /**
   * A new account's {base_url} and {auth_url} (--base-url/--auth-url or
   * HIRESYNC_BASE_URL/HIRESYNC_AUTH_URL), stored with the link; required when
   * `account` is not registered, ignored when it is (it keeps its own).
   */
  urls?: { baseUrl: string; authUrl: string | undefined } | undefined;
  /**
   * A new account whose name has rows of an earlier registration stored
   * (removed without --drop-data): the same customer is back, the link may
   * register it over them (invite --reuse-data), stored with the link. Default
   * false: the link is refused while such rows are stored, and so is its
   * callback should some be stored by then. Ignored for a registered account.
   */
  reuseData?: boolean | undefined;
}

/** What the variables of connect links lack, as the problems of a ConfigError. */
function missingSettings(
  options: Pick<CreateConnectLinkOptions, 'secretKeys' | 'partner'>,
): ConfigError | undefined {
  const why = 'make a connect link';
  const problems = [
    ...(options.partner
      ? []
      : ['HIRESYNC_PARTNER_CLIENT_ID', 'HIRESYNC_PARTNER_CLIENT_SECRET'].map((variable) => ({
          variable,
          message: `is required to ${why} (the partner app's credentials, shared by every partner account)`,
        }))),
    ...(options.secretKeys
      ? []
      : [
          {
            variable: 'HIRESYNC_SECRET_KEY',
            message: `is required to ${why} (it signs the link; 32 bytes, base64 or hex; make one with: openssl rand -base64 32)`,
          },
        ]),
  ];
  return problems.length > 0 ? new ConfigError(problems) : undefined;
}

/** A connect link made: the URL to send, when it expires, and how many older links it withdrew. */
export interface MadeConnectLink {
  /** `HIRESYNC_PUBLIC_URL/connect/<token>`: a secret (whoever holds it can connect the account). */
  url: string;
  expiresAt: Date;
  /** The account's older unused links withdrawn by this one. */
  withdrawn: number;
}

/**
 * Makes a single-use connect link for `account`: a random token (256 bits)
 * signed with HMAC-SHA256 under the first key of HIRESYNC_SECRET_KEY, of
 * which only the SHA-256 is stored, in hiresync.connect_links, with the
 * expiry and, for a new account, its URLs. In the same transaction it
 * withdraws the account's older unused links (one live link per account:
 * a link sent earlier, perhaps to the wrong person, stops working the
 * moment a new one is made). Returns the URL to send (a secret: whoever
 * holds it can connect the account, so it goes to no log), when it
 * expires, and how many links it withdrew.
 *
 * Throws a ConfigError when the partner app or HIRESYNC_SECRET_KEY is
 * missing, and a HiresyncError when the name is invalid, the lifetime out of
 * bounds, the account registered but not a partner account, or new without
 * URLs, with a schema hiresync does not own, or with rows of an earlier
 * registration stored (StoredDataError, unless `reuseData`). The control schema must be
 * migrated (hiresync.connect_links).
 */
export async function createConnectLink(
  db: Kysely<Database>,
  options: CreateConnectLinkOptions,
): Promise<MadeConnectLink> {
  const { account } = options;
  const problem = accountNameProblem(account);
  if (problem) throw new HiresyncError(problem);
  const missing = missingSettings(options);
  if (missing || !options.secretKeys) throw missing;
  if (
    !Number.isFinite(options.expiresInMs) ||
    options.expiresInMs < MIN_LINK_LIFETIME_MS ||
    options.expiresInMs > MAX_LINK_LIFETIME_MS
  ) {
    throw new HiresyncError(
      'a connect link expires after 1 minute at the least and 30 days at the most',
    );
  }
  const store = new AccountStore(db);
  const existing = await store.get(account);
  let urls: { baseUrl: string; authUrl: string } | undefined;
  if (existing) {
    if (existing.authMode !== 'partner') {
      throw new HiresyncError(
        `account ${account} authenticates with ${existing.authMode === 'client_credentials' ? 'client credentials' : 'an API key'}, not partner authorization: a connect link applies to partner accounts only ('hiresync accounts update ${account}' changes its credentials)`,
      );
    }
  } else {
    const given = options.urls;
    if (given?.authUrl === undefined) {
      throw new HiresyncError(
        `account ${account} is not registered, so the link registers it: it needs the base and auth URLs of its API (HIRESYNC_BASE_URL and HIRESYNC_AUTH_URL, or --base-url and --auth-url)`,
      );
    }
    await checkNewAccount(db, store, account, {
      reuseData: options.reuseData,
      retry: `make the link again ('hiresync accounts invite ${account}')`,
      refused: 'no link was made',
    });
    urls = { baseUrl: given.baseUrl, authUrl: given.authUrl };
  }
  const { token, hash } = newConnectToken(options.secretKeys.reveal());
  const { expiresMs, withdrawn } = await db.transaction().execute(async (trx) => {
    // Two links made at once for one account: the later withdraws the earlier.
    await sql`select pg_advisory_xact_lock(hashtextextended(${`hiresync connect links ${account}`}, 0))`.execute(
      trx,
    );
    const older = await markWithdrawn(trx, { account });
    const row = await trx
      .withTables<ConnectLinkTables>()
      .insertInto('hiresync.connect_links')
      .values({
        account,
        token_hash: hash,
        base_url: urls?.baseUrl ?? null,
        auth_url: urls?.authUrl ?? null,
        reuse_data: urls !== undefined && options.reuseData === true,
        expires_at: sql<string>`now() + ${Math.round(options.expiresInMs)} * interval '1 millisecond'`,
      })
      .returning(sql<number>`(extract(epoch from expires_at) * 1000)::float8`.as('expires_ms'))
      .executeTakeFirstOrThrow();
    return { expiresMs: row.expires_ms, withdrawn: older.length };
  });
  const url = `${options.publicUrl.replace(/\/+$/, '')}${CONNECT_PATH}${token}`;
  return { url, expiresAt: new Date(expiresMs), withdrawn };
}

/**
 * Withdraws the pending links (unused, not withdrawn, unexpired) of
 * `filter.account`, or only its link `filter.id`: opening one afterwards
 * shows "This link was withdrawn" (410), and a callback of an opening made
 * before is refused the same way. Returns the ids withdrawn.
 */
async function markWithdrawn(
  db: Kysely<Database>,
  filter: { account: string; id?: string },
): Promise<string[]> {
  let update = db
    .withTables<ConnectLinkTables>()
    .updateTable('hiresync.connect_links')
    .set({ withdrawn_at: sql<string>`now()` })
    .where('account', '=', filter.account)
    .where('used_at', 'is', null)
    .where('withdrawn_at', 'is', null)
    .where('expires_at', '>', sql<string>`now()`);
  if (filter.id !== undefined) update = update.where('id', '=', filter.id);
  const rows = await update.returning('id').execute();
  return rows.map((r) => String(r.id));
}

/**
 * Withdraws the pending link `id` of `account` (the console's Withdraw), as a
 * new link withdraws the older ones. False when it is not pending (used,
 * expired, withdrawn already, removed, or not `account`'s): nothing changed.
 */
export async function withdrawConnectLink(
  db: Kysely<Database>,
  account: string,
  id: string,
): Promise<boolean> {
  if (!/^[1-9][0-9]{0,17}$/.test(id)) return false;
  return (await markWithdrawn(db, { account, id })).length > 0;
}

/** A link that can still be used: made, not used, withdrawn or expired. Never its token or URL. */
export interface PendingConnectLink {
  id: string;
  account: string;
  /** A new account (the link registers it) rather than a registered one's re-authorization. */
  newAccount: boolean;
  createdAt: string;
  expiresAt: string;
}

/** The pending links of every account, oldest first; none before the control schema has the table. */
export async function listPendingLinks(db: Kysely<Database>): Promise<PendingConnectLink[]> {
  const { rows } = await sql<{ exists: boolean }>`
    select to_regclass('hiresync.connect_links') is not null as exists`.execute(db);
  if (!rows[0]?.exists) return [];
  const links = await db
    .withTables<ConnectLinkTables>()
    .selectFrom('hiresync.connect_links')
    .select(['id', 'account', 'base_url'])
    .select(sql<string>`to_json(created_at)#>>'{}'`.as('created'))
    .select(sql<string>`to_json(expires_at)#>>'{}'`.as('expires'))
    .where('used_at', 'is', null)
    .where('withdrawn_at', 'is', null)
    .where('expires_at', '>', sql<string>`now()`)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return links.map((l) => ({
    id: String(l.id),
    account: l.account,
    newAccount: l.base_url !== null,
    createdAt: new Date(l.created).toISOString(),
    expiresAt: new Date(l.expires).toISOString(),
  }));
}

/** What the console and `accounts invite` say of the links a new one withdrew; undefined for none. */
export function withdrawnNotice(account: string, withdrawn: number): string | undefined {
  return withdrawn > 0
    ? `older unused links for ${account} were withdrawn: ${withdrawn}`
    : undefined;
}

/** The purpose a state's PKCE verifier is sealed for: bound to the state, it opens for no other row. */
export function connectVerifierPurpose(stateHash: string): string {
  return `connect-state:${stateHash}:code_verifier`;
}

/**
 * Checks, at its callback, that the link `linkId` may register the new
 * account `account` ({@link checkNewAccount}, with the --reuse-data choice
 * stored with the link; rows of an earlier registration may have been stored
 * since the link was made). Throws as checkNewAccount does.
 */
export async function checkLinkedAccount(
  db: Kysely<Database>,
  store: AccountStore,
  linkId: string,
  account: string,
): Promise<FreeSchema> {
  const link = await db
    .withTables<ConnectLinkTables>()
    .selectFrom('hiresync.connect_links')
    .select('reuse_data')
    .where('id', '=', linkId)
    .executeTakeFirst();
  return checkNewAccount(db, store, account, {
    reuseData: link?.reuse_data === true,
    retry: `make a new link with 'hiresync accounts invite ${account}'`,
  });
}

/**
 * Withdraws the unused connect links of `account` (its removal): a link made
 * while it was new would otherwise register it again. Their states go with
 * them; an opening or callback of one is then told the link is not known.
 * Nothing to do before the control schema has the table. Returns how many.
 */
export async function withdrawConnectLinks(db: Kysely<Database>, account: string): Promise<number> {
  const { rows } = await sql<{ exists: boolean }>`
    select to_regclass('hiresync.connect_links') is not null as exists`.execute(db);
  if (!rows[0]?.exists) return 0;
  const deleted = await db
    .withTables<ConnectLinkTables>()
    .deleteFrom('hiresync.connect_links')
    .where('account', '=', account)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
