import { type Kysely, sql, type Transaction } from 'kysely';
import { accountNameProblem, DEFAULT_ACCOUNT, schemaOf } from '../account-name.js';
import { TokenCipher } from '../api/token-cipher.js';
import type { SecretKeys } from '../config/secret-keys.js';
import type { AuthConfig, PartnerConfig } from '../config/types.js';
import { ConfigError, HiresyncError, RunInterruptedError } from '../errors.js';
import { Secret } from '../secret.js';
import { inSchema } from '../warehouse/database.js';
import type { AccountRow, AccountsTable, Database } from '../warehouse/schema.js';
import { type Account, type AccountDirectory, AccountUnavailableError } from './account.js';
import { keepaliveTickMs } from './keepalive-tick.js';
import {
  PostgresRefreshTokenVault,
  type RefreshTokenTables,
  refreshLockKey,
  refreshTokenPurpose,
} from './refresh-token-vault.js';
import { SecretBox, SecretKeyError } from './secret-box.js';

/** The state of a registered account as stored: `needs_reauthorization` comes with partner accounts. */
export type StoredAccountState = AccountRow['state'];

/** A registered account as `accounts list` shows it: everything but its secret. */
export interface AccountInfo {
  name: string;
  /** The schema of its tables: its name. */
  schema: string;
  authMode: AccountRow['auth_mode'];
  baseUrl: string;
  authUrl: string | null;
  clientId: string | null;
  sub: string | null;
  /** Names its token, token lock and pacing keys in Redis (not secret). */
  credentialNamespace: string | null;
  state: StoredAccountState;
  createdAt: string;
  updatedAt: string;
  version: string;
  /** A partner account's refresh token: where it stands; null for the other auth modes. */
  partner: PartnerTokenInfo | null;
}

/** Where a partner account's refresh token stands (hiresync.refresh_tokens), without the token. */
export interface PartnerTokenInfo {
  /** When the customer last authorized the partner app for it; null when no token is stored. */
  authorizedAt: string | null;
  /** When a refresh last succeeded; null before the first. */
  refreshedAt: string | null;
  /** A refresh was sent and its outcome never recorded (it may have rotated the token). */
  refreshInterrupted: boolean;
  /** Why it is in state needs_reauthorization; null otherwise. */
  reauthorizationReason: string | null;
}

/** What {@link AccountStore.authorize} did. */
export interface AuthorizeOutcome {
  account: AccountInfo;
  /** The state the account was in before: needs_reauthorization is now enabled, disabled stays so. */
  previousState: StoredAccountState;
}

/** An account to register. The secret is sealed before it leaves the process. */
export interface NewAccount {
  name: string;
  /** Its `{base_url}`, validated, without a trailing slash. */
  baseUrl: string;
  auth:
    | {
        mode: 'client_credentials';
        /** Its `{auth_url}`, validated, without a trailing slash: tokens come from `authUrl/token`. */
        authUrl: string;
        clientId: string;
        clientSecret: Secret;
        sub?: string | undefined;
      }
    | { mode: 'api_key'; apiKey: Secret };
}

/** No registered account has this name. */
export class UnknownAccountError extends AccountUnavailableError {
  readonly account: string;
  constructor(account: string) {
    super(`no account ${account} is registered; see 'hiresync accounts list'`);
    this.account = account;
  }
}

/** The account is registered but must run nothing now: disabled, or waiting for reauthorization. */
export class AccountDisabledError extends AccountUnavailableError {
  readonly account: string;
  readonly state: StoredAccountState;
  constructor(account: string, state: StoredAccountState) {
    super(
      state === 'needs_reauthorization'
        ? `account ${account} needs reauthorization: run 'hiresync accounts authorize ${account}'`
        : `account ${account} is disabled: run 'hiresync accounts enable ${account}' to sync it again`,
    );
    this.account = account;
    this.state = state;
  }
}

/** `accounts add` of a name already registered. */
export class AccountExistsError extends HiresyncError {}

/** `accounts enable` of an account waiting for reauthorization: only `accounts authorize` enables it. */
export class ReauthorizationNeededError extends HiresyncError {
  readonly account: string;
  constructor(account: AccountInfo) {
    const reason = account.partner?.reauthorizationReason;
    super(
      `account ${account.name} needs reauthorization${reason ? ` (${reason})` : ''}: run 'hiresync accounts authorize ${account.name}'; enabling it would not make its refresh token work`,
    );
    this.account = account.name;
  }
}

/** What `accounts update` changes of a registered account; what is absent stays. */
export interface AccountChange {
  /** A new client secret, API key, or (partner accounts) refresh token. */
  secret?: Secret | undefined;
  /** A new `sub` (client credentials), digits. */
  sub?: string | undefined;
  /** A new `{base_url}`, validated, without a trailing slash. */
  baseUrl?: string | undefined;
  /** A new `{auth_url}` (client credentials, partner), validated, without a trailing slash. */
  authUrl?: string | undefined;
}

/** What {@link AccountStore.update} did. */
export interface UpdateOutcome {
  account: AccountInfo;
  /** What changed, as people name it (`client secret`, `sub`, `base URL`, ...), in that order. */
  changed: string[];
  /** The credential namespace before: its cached token is to be dropped too. */
  previousNamespace: string | null;
  /** The state before: `needs_reauthorization` is enabled by a new refresh token. */
  previousState: StoredAccountState;
}

/** An auth mode as messages name it. */
function describeMode(mode: AccountRow['auth_mode']): string {
  return mode === 'client_credentials'
    ? 'client credentials'
    : mode === 'api_key'
      ? 'an API key'
      : 'partner authorization';
}

/** What {@link AccountStore.rekey} did. */
export interface RekeyOutcome {
  /** Secrets sealed again with the first key of HIRESYNC_SECRET_KEY. */
  resealed: number;
  /** Secrets already sealed with it, left alone. */
  current: number;
}

/** The purpose a registered account's secret is sealed for: it opens in no other row. */
export function secretPurpose(account: string): string {
  return `account:${account}:secret`;
}

const UNDEFINED_TABLE = '42P01';

function isUndefinedTable(error: unknown): boolean {
  return (error as { code?: unknown }).code === UNDEFINED_TABLE;
}

function infoOf(
  row: Omit<AccountRow, 'secret'>,
  partner: PartnerTokenInfo | null = null,
): AccountInfo {
  return {
    name: row.name,
    schema: schemaOf(row.name),
    authMode: row.auth_mode,
    baseUrl: row.base_url,
    authUrl: row.auth_url,
    clientId: row.client_id,
    sub: row.sub,
    credentialNamespace: row.credential_namespace,
    state: row.state,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
    partner:
      partner ??
      (row.auth_mode === 'partner'
        ? {
            authorizedAt: null,
            refreshedAt: null,
            refreshInterrupted: false,
            reauthorizationReason: null,
          }
        : null),
  };
}

/** Every column of hiresync.accounts but the secret. */
const PUBLIC_COLUMNS = [
  'name',
  'auth_mode',
  'base_url',
  'auth_url',
  'client_id',
  'sub',
  'credential_namespace',
  'state',
  'created_at',
  'updated_at',
  'version',
] as const satisfies ReadonlyArray<keyof AccountsTable>;

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
 * out): no other method returns one. Without keys, everything but add,
 * addPartner, authorize, rekey and resolve works.
 */
export class AccountStore implements AccountDirectory {
  readonly #db: Kysely<Database>;
  readonly #box: SecretBox | undefined;
  readonly #partner: PartnerConfig | undefined;

  constructor(db: Kysely<Database>, keys?: SecretKeys, options: AccountStoreOptions = {}) {
    this.#db = db;
    this.#box = keys === undefined ? undefined : new SecretBox(keys.reveal());
    this.#partner = options.partner;
  }

  /** The same pool, knowing hiresync.refresh_tokens. */
  get #tokens(): Kysely<Database & RefreshTokenTables> {
    return this.#db.withTables<RefreshTokenTables>();
  }

  #requirePartner(why: string): PartnerConfig {
    if (!this.#partner) {
      throw new ConfigError(
        (['HIRESYNC_PARTNER_CLIENT_ID', 'HIRESYNC_PARTNER_CLIENT_SECRET'] as const).map(
          (variable) => ({
            variable,
            message: `is required to ${why} (the partner app's credentials, shared by every partner account)`,
          }),
        ),
      );
    }
    return this.#partner;
  }

  #requireBox(why: string): SecretBox {
    if (!this.#box) {
      throw new ConfigError([
        { variable: 'HIRESYNC_SECRET_KEY', message: `is required to ${why}` },
      ]);
    }
    return this.#box;
  }

  /**
   * Registers an account with its credential sealed, in state `enabled`.
   * Throws AccountExistsError when the name is taken, and a ConfigError when
   * no HIRESYNC_SECRET_KEY is configured.
   */
  async add(account: NewAccount): Promise<AccountInfo> {
    const problem = accountNameProblem(account.name);
    if (problem) throw new HiresyncError(problem);
    const box = this.#requireBox('seal the credentials of an account');
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
   * a ConfigError without HIRESYNC_SECRET_KEY or the partner app.
   */
  async addPartner(
    name: string,
    baseUrl: string,
    authUrl: string,
    refreshToken: Secret,
  ): Promise<AccountInfo> {
    const problem = accountNameProblem(name);
    if (problem) throw new HiresyncError(problem);
    const box = this.#requireBox('seal the refresh token of a partner account');
    const partner = this.#requirePartner('add a partner account');
    return this.#tokens.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('hiresync.accounts')
        .values({
          name,
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
   * Stores a new refresh token for the partner account `name` (the customer
   * authorized the partner app again): its token, sealed, replaces the old
   * one; the marks of an interrupted refresh and of a refusal are cleared; an
   * account in state `needs_reauthorization` is enabled again, a disabled one
   * stays disabled (`accounts enable` decides that). Its data, schema and
   * version are kept (an enabled account's row is not touched). Waits for a
   * refresh in progress to end, so that it cannot store its rotated token over
   * this one. Throws UnknownAccountError, and HiresyncError for an account
   * that is not a partner account.
   */
  async authorize(name: string, refreshToken: Secret): Promise<AuthorizeOutcome> {
    const box = this.#requireBox('seal the refresh token of a partner account');
    const sealed = box.seal(refreshToken.reveal(), refreshTokenPurpose(name));
    return this.#tokens.transaction().execute(async (trx) => {
      await lockRefreshes(trx, name);
      const current = await trx
        .selectFrom('hiresync.accounts')
        .select(PUBLIC_COLUMNS)
        .where('name', '=', name)
        .forUpdate()
        .executeTakeFirst();
      if (!current) throw new UnknownAccountError(name);
      if (current.auth_mode !== 'partner') {
        throw new HiresyncError(
          `account ${name} authenticates with ${current.auth_mode === 'client_credentials' ? 'client credentials' : 'an API key'}, not partner authorization: 'accounts authorize' applies to partner accounts only`,
        );
      }
      const token = await trx
        .insertInto('hiresync.refresh_tokens')
        .values({ account: name, token: sealed })
        .onConflict((oc) =>
          oc.column('account').doUpdateSet({
            token: sealed,
            authorized_at: sql<string>`now()`,
            refreshed_at: null,
            refresh_started_at: null,
            reauthorization_reason: null,
          }),
        )
        .returning(TOKEN_COLUMNS)
        .executeTakeFirstOrThrow();
      const row =
        current.state === 'needs_reauthorization'
          ? await trx
              .updateTable('hiresync.accounts')
              .set({ state: 'enabled' })
              .where('name', '=', name)
              .returning(PUBLIC_COLUMNS)
              .executeTakeFirstOrThrow()
          : current;
      return { account: infoOf(row, tokenInfoOf(token)), previousState: current.state };
    });
  }

  /**
   * Changes a registered account's credentials in place, in one transaction:
   * a new `secret` (client secret, API key, or a partner account's refresh
   * token), `sub`, `baseUrl`, `authUrl`. Its data, schema, state and
   * schedules are kept; its row's version changes (runs in flight resume with
   * the new settings), and its credential namespace follows the credential.
   * A partner account's new refresh token replaces the old one as
   * {@link authorize} stores it, enabling an account in state
   * `needs_reauthorization` (nothing else does). Waits, as authorize does,
   * for a refresh in progress to end. Throws UnknownAccountError,
   * HiresyncError for a change its auth mode does not have (a sub without
   * client credentials, an auth URL with an API key), and ConfigError without
   * HIRESYNC_SECRET_KEY (or, to move a partner account's auth URL, the
   * partner app).
   */
  async update(name: string, change: AccountChange): Promise<UpdateOutcome> {
    const box = this.#requireBox('seal the credentials of an account');
    return this.#tokens.transaction().execute(async (trx) => {
      // The refresh lock before the row, in the order authorize() and the
      // refresh-token vault take them (a refused refresh updates the row while
      // holding it): the other order deadlocks with a worker's refresh.
      await lockRefreshes(trx, name);
      const current = await trx
        .selectFrom('hiresync.accounts')
        .selectAll()
        .where('name', '=', name)
        .forUpdate()
        .executeTakeFirst();
      if (!current) throw new UnknownAccountError(name);
      const mode = current.auth_mode;
      if (change.sub !== undefined && mode !== 'client_credentials') {
        throw new HiresyncError(
          `account ${name} authenticates with ${describeMode(mode)}: --sub applies only to client credentials`,
        );
      }
      if (change.authUrl !== undefined && mode === 'api_key') {
        throw new HiresyncError(
          `account ${name} authenticates with an API key, whose token endpoint is its base URL + /auth/token: --auth-url does not apply (use --base-url)`,
        );
      }
      const baseUrl = change.baseUrl ?? current.base_url;
      const authUrl = change.authUrl ?? current.auth_url;
      const sub = change.sub ?? current.sub;
      const changed = [
        change.secret !== undefined &&
          (mode === 'client_credentials'
            ? 'client secret'
            : mode === 'api_key'
              ? 'API key'
              : 'refresh token'),
        change.sub !== undefined && 'sub',
        change.baseUrl !== undefined && 'base URL',
        change.authUrl !== undefined && 'auth URL',
      ].filter((c): c is string => typeof c === 'string');

      let token: Parameters<typeof tokenInfoOf>[0] | undefined;
      let state = current.state;
      let namespace = current.credential_namespace;
      let sealed = current.secret;
      if (mode === 'partner') {
        if (change.secret !== undefined) {
          const refreshToken = box.seal(change.secret.reveal(), refreshTokenPurpose(name));
          token = await trx
            .insertInto('hiresync.refresh_tokens')
            .values({ account: name, token: refreshToken })
            .onConflict((oc) =>
              oc.column('account').doUpdateSet({
                token: refreshToken,
                authorized_at: sql<string>`now()`,
                refreshed_at: null,
                refresh_started_at: null,
                reauthorization_reason: null,
              }),
            )
            .returning(TOKEN_COLUMNS)
            .executeTakeFirstOrThrow();
          if (state === 'needs_reauthorization') state = 'enabled';
        }
        if (change.authUrl !== undefined) {
          const partner = this.#requirePartner("move a partner account's auth URL");
          namespace = new TokenCipher(partnerAuth(authUrl ?? '', partner, name)).namespace;
        }
      } else {
        if (current.secret === null) {
          throw new SecretKeyError(`account ${name} has no stored credential; add it again`);
        }
        const secret = change.secret ?? new Secret(box.open(current.secret, secretPurpose(name)));
        if (change.secret !== undefined) sealed = box.seal(secret.reveal(), secretPurpose(name));
        const auth: NewAccount['auth'] =
          mode === 'client_credentials'
            ? {
                mode,
                authUrl: authUrl ?? '',
                clientId: current.client_id ?? '',
                clientSecret: secret,
                sub: sub ?? undefined,
              }
            : { mode: 'api_key', apiKey: secret };
        namespace = new TokenCipher(authConfig(baseUrl, auth, secret)).namespace;
      }
      const rowChanges = {
        ...(change.baseUrl !== undefined ? { base_url: baseUrl } : {}),
        ...(change.authUrl !== undefined ? { auth_url: authUrl } : {}),
        ...(change.sub !== undefined ? { sub } : {}),
        ...(sealed !== current.secret ? { secret: sealed } : {}),
        ...(namespace !== current.credential_namespace ? { credential_namespace: namespace } : {}),
        ...(state !== current.state ? { state } : {}),
      };
      // A new refresh token lives in refresh_tokens, but the row is updated all
      // the same: its version changes (trigger accounts_touch), so workers drop
      // the account's client, whose access token came from the old grant, and
      // a run in flight resumes with the new one, as after any credential change.
      const touch = change.secret !== undefined;
      const row =
        Object.keys(rowChanges).length === 0 && !touch
          ? current
          : await trx
              .updateTable('hiresync.accounts')
              .set({ state, ...rowChanges })
              .where('name', '=', name)
              .returning(PUBLIC_COLUMNS)
              .executeTakeFirstOrThrow();
      const partnerToken =
        token ??
        (mode === 'partner'
          ? await trx
              .selectFrom('hiresync.refresh_tokens')
              .select(TOKEN_COLUMNS)
              .where('account', '=', name)
              .executeTakeFirst()
          : undefined);
      return {
        account: infoOf(row, partnerToken ? tokenInfoOf(partnerToken) : null),
        changed,
        previousNamespace: current.credential_namespace,
        previousState: current.state,
      };
    });
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
      .catch((error: unknown) => {
        if (isUndefinedTable(error)) return undefined;
        throw error;
      });
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
      const tokens = await this.#tokens
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
   */
  async setState(
    name: string,
    state: StoredAccountState,
  ): Promise<{ account: AccountInfo; changed: boolean }> {
    const updated = await this.#db
      .updateTable('hiresync.accounts')
      .set({ state })
      .where('name', '=', name)
      .where('state', 'not in', state === 'enabled' ? [state, 'needs_reauthorization'] : [state])
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirst()
      .catch((error: unknown) => {
        if (isUndefinedTable(error)) return undefined;
        throw error;
      });
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
      .catch((error: unknown) => {
        if (isUndefinedTable(error)) return undefined;
        throw error;
      });
    if (!row) throw new UnknownAccountError(name);
    return infoOf(row);
  }

  /**
   * Seals again, with the first key of HIRESYNC_SECRET_KEY, every secret
   * sealed with another, in one transaction: all or none (a secret no key
   * opens throws SecretKeyError and changes nothing).
   */
  async rekey(): Promise<RekeyOutcome> {
    const box = this.#requireBox('re-seal the credentials of the accounts');
    if ((await this.list()).length === 0) return { resealed: 0, current: 0 };
    return this.#tokens.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('hiresync.accounts')
        .select(['name', 'secret'])
        .where('secret', 'is not', null)
        .orderBy('name')
        .forUpdate()
        .execute();
      let resealed = 0;
      for (const { name, secret } of rows) {
        if (secret === null || box.isCurrent(secret)) continue;
        const purpose = secretPurpose(name);
        const sealed = box.seal(box.open(secret, purpose), purpose);
        await trx
          .updateTable('hiresync.accounts')
          .set({ secret: sealed })
          .where('name', '=', name)
          .execute();
        resealed += 1;
      }
      const tokens = await rekeyRefreshTokens(trx, box);
      return {
        resealed: resealed + tokens.resealed,
        current: rows.length - resealed + tokens.current,
      };
    });
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
   * A registered account ready to sync, its credential opened. Throws
   * UnknownAccountError, AccountDisabledError (both AccountUnavailableError:
   * its runs are skipped), or SecretKeyError when HIRESYNC_SECRET_KEY is unset
   * or holds no key that opens the credential.
   */
  async resolve(name: string): Promise<Account> {
    const row = await this.#db
      .selectFrom('hiresync.accounts')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst()
      .catch((error: unknown) => {
        if (isUndefinedTable(error)) return undefined;
        throw error;
      });
    if (!row || name === DEFAULT_ACCOUNT) throw new UnknownAccountError(name);
    if (row.state !== 'enabled') throw new AccountDisabledError(name, row.state);
    // The row's version restarts at 1 when a removed name is added again:
    // its creation time tells the two registrations apart.
    const version = `${row.created_at}#${row.version}`;
    if (row.auth_mode === 'partner') {
      const partner = this.#requirePartner(`run the partner account ${name}`);
      if (!this.#box) {
        throw new SecretKeyError(
          `account ${name}'s refresh token is sealed: set HIRESYNC_SECRET_KEY`,
        );
      }
      if (row.auth_url === null) {
        throw new HiresyncError(`partner account ${name} has no auth_url; add it again`);
      }
      return {
        name,
        schema: schemaOf(name),
        baseUrl: row.base_url,
        auth: partnerAuth(row.auth_url, partner, name),
        refreshTokens: new PostgresRefreshTokenVault(this.#db, this.#box, name),
        version,
      };
    }
    if (!this.#box) {
      throw new SecretKeyError(`account ${name}'s credentials are sealed: set HIRESYNC_SECRET_KEY`);
    }
    if (row.secret === null) {
      throw new SecretKeyError(`account ${name} has no stored credential`);
    }
    const secret = new Secret(this.#box.open(row.secret, secretPurpose(name)));
    const auth: NewAccount['auth'] =
      row.auth_mode === 'client_credentials'
        ? {
            mode: 'client_credentials',
            authUrl: row.auth_url ?? '',
            clientId: row.client_id ?? '',
            clientSecret: secret,
            sub: row.sub ?? undefined,
          }
        : { mode: 'api_key', apiKey: secret };
    return {
      name,
      schema: schemaOf(name),
      baseUrl: row.base_url,
      auth: authConfig(row.base_url, auth, secret, name),
      version,
    };
  }

  /**
   * When the account's newest successful run finished (its schema's
   * sync_runs), as Postgres prints it; undefined when it has none, or no
   * schema yet.
   */
  async lastSuccess(name: string): Promise<string | undefined> {
    try {
      const row = await inSchema(this.#db, schemaOf(name))
        .selectFrom('sync_runs')
        .select(sql<string | null>`max(finished_at)`.as('finished_at'))
        .where('outcome', '=', 'succeeded')
        .executeTakeFirst();
      return row?.finished_at ?? undefined;
    } catch (error) {
      if (isUndefinedTable(error)) return undefined;
      throw error;
    }
  }
}

/** The AuthConfig of a partner account: refresh grants at `authUrl/token` with the partner app's client. */
function partnerAuth(authUrl: string, partner: PartnerConfig, account: string): AuthConfig {
  return {
    mode: 'partner',
    tokenUrl: `${authUrl}/token`,
    clientId: partner.clientId,
    clientSecret: partner.clientSecret,
    account,
  };
}

/** The columns of hiresync.refresh_tokens but the token. */
const TOKEN_COLUMNS = [
  'account',
  'authorized_at',
  'refreshed_at',
  'refresh_started_at',
  'reauthorization_reason',
] as const;

function tokenInfoOf(row: {
  authorized_at: string;
  refreshed_at: string | null;
  refresh_started_at: string | null;
  reauthorization_reason: string | null;
}): PartnerTokenInfo {
  return {
    authorizedAt: row.authorized_at,
    refreshedAt: row.refreshed_at,
    refreshInterrupted: row.refresh_started_at !== null,
    reauthorizationReason: row.reauthorization_reason,
  };
}

function accountExists(name: string): AccountExistsError {
  return new AccountExistsError(
    `account ${name} already exists; remove it first ('hiresync accounts remove ${name}') or choose another name`,
  );
}

/**
 * Takes, for the rest of `trx`, the lock under which the account's refresh
 * grants run (see PostgresRefreshTokenVault), waiting at most a minute for one
 * in progress.
 */
async function lockRefreshes(
  trx: Transaction<Database & RefreshTokenTables>,
  name: string,
): Promise<void> {
  await sql`select set_config('lock_timeout', '60s', true)`.execute(trx);
  await sql`select pg_advisory_xact_lock(${refreshLockKey(name).toString()}::bigint)`.execute(trx);
}

/** Re-seals, in `trx`, every refresh token sealed with a key other than the first. */
async function rekeyRefreshTokens(
  trx: Transaction<Database & RefreshTokenTables>,
  box: SecretBox,
): Promise<RekeyOutcome> {
  const { rows: present } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.refresh_tokens') is not null as present`.execute(trx);
  if (!present[0]?.present) return { resealed: 0, current: 0 };
  const rows = await trx
    .selectFrom('hiresync.refresh_tokens')
    .select(['account', 'token'])
    .orderBy('account')
    .forUpdate()
    .execute();
  let resealed = 0;
  for (const { account, token } of rows) {
    if (box.isCurrent(token)) continue;
    const purpose = refreshTokenPurpose(account);
    await trx
      .updateTable('hiresync.refresh_tokens')
      .set({ token: box.seal(box.open(token, purpose), purpose) })
      .where('account', '=', account)
      .execute();
    resealed += 1;
  }
  return { resealed, current: rows.length - resealed };
}

/**
 * The AuthConfig of an account, exactly as loadConfig builds the environment's,
 * naming the registered `account` it belongs to (when given: its errors then
 * name it, not the environment's variables).
 */
function authConfig(
  baseUrl: string,
  auth: NewAccount['auth'],
  secret: Secret,
  account?: string,
): AuthConfig {
  return auth.mode === 'client_credentials'
    ? {
        mode: 'client_credentials',
        tokenUrl: `${auth.authUrl}/token`,
        clientId: auth.clientId,
        clientSecret: secret,
        sub: auth.sub,
        ...(account === undefined ? {} : { account }),
      }
    : {
        mode: 'api_key',
        tokenUrl: `${baseUrl}/auth/token`,
        apiKey: secret,
        ...(account === undefined ? {} : { account }),
      };
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
