import { type Kysely, sql } from 'kysely';
import { accountNameProblem } from '../account-name.js';
import { TokenCipher } from '../api/token-cipher.js';
import type { SecretKeys } from '../config/secret-keys.js';
import type { PartnerConfig } from '../config/types.js';
import { HiresyncError, RunInterruptedError } from '../errors.js';
import type { Secret } from '../secret.js';
import type { AccountRow, Database } from '../warehouse/tables.js';
import { type Account, type AccountDirectory, AccountUnavailableError } from './account.js';
import {
  type AccountsContext,
  type AuthorizeOutcome,
  authConfig,
  authorizePartner,
  partnerAuth,
  requireBox,
  requirePartner,
  resolveAccount,
  secretPurpose,
} from './account-credentials.js';
import { type RekeyOutcome, resealAccounts } from './account-rekey.js';
import { type AccountChange, type UpdateOutcome, updateAccount } from './account-update.js';
import { keepaliveTickMs } from './keepalive-tick.js';
import { type RefreshTokenTables, refreshTokenPurpose } from './refresh-token-vault.js';
import { SecretBox } from './secret-box.js';
import {
  AccountDisabledError,
  type AccountInfo,
  accountExists,
  infoOf,
  isUndefinedTable,
  type NewAccount,
  type PartnerTokenInfo,
  PUBLIC_COLUMNS,
  ReauthorizationNeededError,
  type StoredAccountState,
  TOKEN_COLUMNS,
  tokenInfoOf,
  UnknownAccountError,
  undefinedWithoutTable,
} from './stored-account.js';

/** Options of {@link AccountStore}. */
export interface AccountStoreOptions {
  /**
   * The partner app (HIRESYNC_PARTNER_CLIENT_ID/_SECRET): needed to resolve
   * and add partner accounts, whose refresh grants use its credentials.
   */
  partner?: PartnerConfig | undefined;
}

/**
 * The registered accounts, in `hiresync.accounts`, and partner accounts'
 * refresh tokens, in `hiresync.refresh_tokens` (migrations/hiresync). Reads
 * and writes through the root instance of the pool (the tables are named with
 * their schema). Secrets are sealed by a SecretBox of `keys` (HIRESYNC_SECRET_KEY) for the
 * purpose `account:<name>:secret` (refresh tokens `account:<name>:refresh_token`),
 * and opened only by {@link resolve} (refresh tokens by the vault it hands
 * out): no other method returns one. The registry's own operations are
 * here; the credentials' are in account-credentials.ts, account-update.ts
 * and account-rekey.ts. Without keys, everything but add,
 * addPartner, authorize, rekey and resolve works.
 */
export class AccountStore implements AccountDirectory {
  readonly #db: Kysely<Database>;
  readonly #context: AccountsContext;

  constructor(db: Kysely<Database>, keys?: SecretKeys, options: AccountStoreOptions = {}) {
    this.#db = db;
    this.#context = {
      db,
      tokens: db.withTables<RefreshTokenTables>(),
      box: keys === undefined ? undefined : new SecretBox(keys.reveal()),
      partner: options.partner,
    };
  }

  /**
   * Registers an account with its credential sealed, in state `enabled`.
   * Throws AccountExistsError when the name is taken, and a ConfigError when
   * no HIRESYNC_SECRET_KEY is configured.
   */
  async add(account: NewAccount): Promise<AccountInfo> {
    const problem = accountNameProblem(account.name);
    if (problem) throw new HiresyncError(problem);
    const box = requireBox(this.#context, 'seal the credentials of an account');
    const { auth } = account;
    const secret = auth.mode === 'client_credentials' ? auth.clientSecret : auth.apiKey;
    const row = await this.#db
      .insertInto('hiresync.accounts')
      .values({
        name: account.name,
        auth_mode: auth.mode,
        base_url: account.baseUrl,
        auth_url: auth.mode === 'client_credentials' ? auth.authUrl : null,
        client_id: auth.mode === 'client_credentials' ? auth.clientId : null,
        sub: auth.mode === 'client_credentials' ? (auth.sub ?? null) : null,
        secret: box.seal(secret.reveal(), secretPurpose(account.name)),
        credential_namespace: new TokenCipher(authConfig(account.baseUrl, auth, secret)).namespace,
      })
      .onConflict((oc) => oc.column('name').doNothing())
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirst();
    if (!row) throw accountExists(account.name);
    return infoOf(row);
  }

  /**
   * Registers a partner account (authorization code grant) in state
   * `enabled`, with `refreshToken` sealed in hiresync.refresh_tokens: both
   * rows in one transaction. `authUrl`: its `{auth_url}` (refresh grants go
   * to `authUrl/token`). Throws AccountExistsError when the name is taken, and
   * a ConfigError without HIRESYNC_SECRET_KEY or the partner app. `state`
   * `disabled` registers it disabled (`accounts add` tests it so first).
   */
  async addPartner(
    name: string,
    baseUrl: string,
    authUrl: string,
    refreshToken: Secret,
    state: 'enabled' | 'disabled' = 'enabled',
  ): Promise<AccountInfo> {
    const problem = accountNameProblem(name);
    if (problem) throw new HiresyncError(problem);
    const box = requireBox(this.#context, 'seal the refresh token of a partner account');
    const partner = requirePartner(this.#context, 'add a partner account');
    return this.#context.tokens.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('hiresync.accounts')
        .values({
          name,
          state,
          auth_mode: 'partner',
          base_url: baseUrl,
          auth_url: authUrl,
          client_id: null,
          sub: null,
          secret: null,
          credential_namespace: new TokenCipher(partnerAuth(authUrl, partner, name)).namespace,
        })
        .onConflict((oc) => oc.column('name').doNothing())
        .returning(PUBLIC_COLUMNS)
        .executeTakeFirst();
      if (!row) throw accountExists(name);
      const token = await trx
        .insertInto('hiresync.refresh_tokens')
        .values({
          account: name,
          token: box.seal(refreshToken.reveal(), refreshTokenPurpose(name)),
        })
        .returning(TOKEN_COLUMNS)
        .executeTakeFirstOrThrow();
      return infoOf(row, tokenInfoOf(token));
    });
  }

  /**
   * Stores a new refresh token for the partner account `name`, enabling it
   * when it needs reauthorization: see {@link authorizePartner}.
   */
  authorize(name: string, refreshToken: Secret): Promise<AuthorizeOutcome> {
    return authorizePartner(this.#context, name, refreshToken);
  }

  /** Changes a registered account's credentials in place: see {@link updateAccount}. */
  update(name: string, change: AccountChange): Promise<UpdateOutcome> {
    return updateAccount(this.#context, name, change);
  }

  /**
   * Every registered account, by name, without secrets (a partner account
   * with where its refresh token stands); none before `migrate` made the table.
   */
  async list(): Promise<AccountInfo[]> {
    let rows: Omit<AccountRow, 'secret'>[];
    try {
      rows = await this.#db
        .selectFrom('hiresync.accounts')
        .select(PUBLIC_COLUMNS)
        .orderBy('name')
        .execute();
    } catch (error) {
      if (isUndefinedTable(error)) return [];
      throw error;
    }
    const tokens = await this.#tokenInfo(rows);
    return rows.map((row) => infoOf(row, tokens.get(row.name)));
  }

  /** One registered account, without its secret; undefined when none has the name. */
  async get(name: string): Promise<AccountInfo | undefined> {
    const row = await this.#db
      .selectFrom('hiresync.accounts')
      .select(PUBLIC_COLUMNS)
      .where('name', '=', name)
      .executeTakeFirst()
      .catch(undefinedWithoutTable);
    return row && infoOf(row, (await this.#tokenInfo([row])).get(name));
  }

  /**
   * Where the refresh tokens of the partner accounts among `rows` stand. Read
   * only when there are some: a control schema not yet migrated to
   * hiresync.refresh_tokens has none.
   */
  async #tokenInfo(
    rows: readonly Pick<AccountRow, 'name' | 'auth_mode'>[],
  ): Promise<Map<string, PartnerTokenInfo>> {
    const partners = rows.filter((r) => r.auth_mode === 'partner').map((r) => r.name);
    if (partners.length === 0) return new Map();
    try {
      const tokens = await this.#context.tokens
        .selectFrom('hiresync.refresh_tokens')
        .select(TOKEN_COLUMNS)
        .where('account', 'in', partners)
        .execute();
      return new Map(tokens.map((t) => [t.account, tokenInfoOf(t)]));
    } catch (error) {
      if (isUndefinedTable(error)) return new Map();
      throw error;
    }
  }

  /**
   * Names of the enabled partner accounts whose refresh token was neither
   * refreshed nor authorized within the last `keepaliveMs` less one
   * keep-alive tick, sorted: the worker, ticking every {@link keepaliveTickMs},
   * refreshes them so that none goes unrefreshed longer than `keepaliveMs`
   * (HIRESYNC_REFRESH_KEEPALIVE) and an unused token does not expire. None
   * before `migrate` made the tables.
   */
  async partnerAccountsDue(keepaliveMs: number): Promise<string[]> {
    const dueAfterMs = Math.max(0, keepaliveMs - keepaliveTickMs(keepaliveMs));
    try {
      const { rows } = await sql<{ name: string }>`
        select a.name
        from hiresync.accounts a
        join hiresync.refresh_tokens t on t.account = a.name
        where a.auth_mode = 'partner' and a.state = 'enabled'
          and coalesce(greatest(t.refreshed_at, t.authorized_at), '-infinity')
              <= now() - ${dueAfterMs} * interval '1 millisecond'
        order by a.name`.execute(this.#db);
      return rows.map((r) => r.name);
    } catch (error) {
      if (isUndefinedTable(error)) return [];
      throw error;
    }
  }

  /** The state of every registered account, by name (for a metric, or `status`). */
  async statesByAccount(): Promise<Map<string, StoredAccountState>> {
    return new Map((await this.list()).map((a) => [a.name, a.state] as const));
  }

  /**
   * Sets an account's state; `changed` is false when it was in that state
   * already (the row, and its version, are then left alone). Throws
   * UnknownAccountError, and ReauthorizationNeededError when asked to enable
   * an account in state `needs_reauthorization`: only a new authorization
   * ({@link authorize}) enables it, as its refresh token would be refused again.
   * An account in state `credentials_refused` is enabled (the operator says
   * the vendor's side is fixed) or disabled, its refusal reason cleared.
   */
  async setState(
    name: string,
    state: StoredAccountState,
  ): Promise<{ account: AccountInfo; changed: boolean }> {
    const updated = await this.#db
      .updateTable('hiresync.accounts')
      .set({ state, refusal_reason: null })
      .where('name', '=', name)
      .where('state', 'not in', state === 'enabled' ? [state, 'needs_reauthorization'] : [state])
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirst()
      .catch(undefinedWithoutTable);
    if (updated) return { account: infoOf(updated), changed: true };
    const current = await this.get(name);
    if (!current) throw new UnknownAccountError(name);
    if (current.state !== state) throw new ReauthorizationNeededError(current);
    return { account: current, changed: false };
  }

  /**
   * Deletes an account's row (not its schema), with `db` (default the store's
   * pool; a transaction to make it part of one), and returns what it held.
   * Throws UnknownAccountError.
   */
  async remove(name: string, db: Kysely<Database> = this.#db): Promise<AccountInfo> {
    const row = await db
      .deleteFrom('hiresync.accounts')
      .where('name', '=', name)
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirst()
      .catch(undefinedWithoutTable);
    if (!row) throw new UnknownAccountError(name);
    return infoOf(row);
  }

  /**
   * Seals again, with the first key of HIRESYNC_SECRET_KEY, every secret
   * sealed with another, in one transaction: all or none (a secret no key
   * opens throws SecretKeyError and changes nothing).
   */
  async rekey(): Promise<RekeyOutcome> {
    const box = requireBox(this.#context, 're-seal the credentials of the accounts');
    if ((await this.list()).length === 0) return { resealed: 0, current: 0 };
    return resealAccounts(this.#context.tokens, box);
  }

  /** Names of every registered account (any state), sorted; none before `migrate` made the table. */
  async names(): Promise<string[]> {
    return (await this.list()).map((a) => a.name);
  }

  /**
   * Names of the registered accounts that are enabled, sorted. `default` (the
   * environment's) is not among them: the app's directory puts it first.
   */
  async enabledNames(): Promise<string[]> {
    return (await this.list()).filter((a) => a.state === 'enabled').map((a) => a.name);
  }

  /**
   * A registered account ready to sync, its credential opened: see
   * {@link resolveAccount} (`anyState`: a disabled one too, to test it).
   */
  resolve(name: string, options: { anyState?: boolean } = {}): Promise<Account> {
    return resolveAccount(this.#context, name, options);
  }
}

/**
 * Checked in every page and sweep transaction of a registered account's run:
 * throws AccountUnavailableError when the account was removed or disabled
 * since the run began (the page in hand is not written and the run stops;
 * a disabled account's checkpoint stays for when it is enabled again), and
 * RunInterruptedError when its registration changed (credentials, URLs: the
 * run resumes with the new ones).
 */
export async function assertRegistered(
  db: Kysely<Database>,
  name: string,
  version: string,
): Promise<void> {
  const row = await db
    .selectFrom('hiresync.accounts')
    .select(['state', 'created_at', 'version'])
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row) {
    throw new AccountUnavailableError(
      `account ${name} was removed while its run was in flight; the run stopped before writing its page in hand`,
    );
  }
  if (row.state !== 'enabled') throw new AccountDisabledError(name, row.state);
  if (`${row.created_at}#${row.version}` !== version) {
    throw new RunInterruptedError(
      `account ${name} changed while its run was in flight; the run resumes with its new settings`,
    );
  }
}
