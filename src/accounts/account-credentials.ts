/**
 * The credentials of registered accounts: sealed with the SecretBox of
 * HIRESYNC_SECRET_KEY, opened only to run an account ({@link resolveAccount});
 * a partner account's new refresh token ({@link authorizePartner}), which
 * also ends its state `needs_reauthorization`; and the AuthConfig an
 * account's credentials make.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import { DEFAULT_ACCOUNT, schemaOf } from '../account-name.js';
import type { AuthConfig, PartnerConfig } from '../config/types.js';
import { ConfigError, CredentialsRefusedError, HiresyncError } from '../errors.js';
import { Secret } from '../secret.js';
import type { Database } from '../warehouse/tables.js';
import type { Account } from './account.js';
import { credentialRefusals } from './credential-refusals.js';
import {
  PostgresRefreshTokenVault,
  type RefreshTokenTables,
  refreshLockKey,
  refreshTokenPurpose,
} from './refresh-token-vault.js';
import { type SecretBox, SecretKeyError } from './secret-box.js';
import {
  AccountDisabledError,
  type AccountInfo,
  infoOf,
  type NewAccount,
  PUBLIC_COLUMNS,
  type StoredAccountState,
  TOKEN_COLUMNS,
  tokenInfoOf,
  UnknownAccountError,
  undefinedWithoutTable,
} from './stored-account.js';

/**
 * What the operations on registered accounts share: the pool (its root
 * instance: the tables are named with their schema), the SecretBox of
 * HIRESYNC_SECRET_KEY (undefined when it is unset) and the partner app.
 */
export interface AccountsContext {
  readonly db: Kysely<Database>;
  /** The same pool, knowing hiresync.refresh_tokens. */
  readonly tokens: Kysely<Database & RefreshTokenTables>;
  readonly box: SecretBox | undefined;
  readonly partner: PartnerConfig | undefined;
}

/** The partner app, or a ConfigError naming its variables and `why` they are needed. */
export function requirePartner(context: AccountsContext, why: string): PartnerConfig {
  if (!context.partner) {
    throw new ConfigError(
      (['HIRESYNC_PARTNER_CLIENT_ID', 'HIRESYNC_PARTNER_CLIENT_SECRET'] as const).map(
        (variable) => ({
          variable,
          message: `is required to ${why} (the partner app's credentials, shared by every partner account)`,
        }),
      ),
    );
  }
  return context.partner;
}

/** The SecretBox, or a ConfigError naming HIRESYNC_SECRET_KEY and `why` it is needed. */
export function requireBox(context: AccountsContext, why: string): SecretBox {
  if (!context.box) {
    throw new ConfigError([{ variable: 'HIRESYNC_SECRET_KEY', message: `is required to ${why}` }]);
  }
  return context.box;
}

/** The purpose a registered account's secret is sealed for: it opens in no other row. */
export function secretPurpose(account: string): string {
  return `account:${account}:secret`;
}

/**
 * Puts `sealed` in place as account `name`'s refresh token, as a new
 * authorization: the times and the re-authorization reason of the one it
 * replaces are cleared. In the caller's transaction (which holds the refresh lock).
 */
export async function replaceRefreshToken(
  trx: Transaction<Database & RefreshTokenTables>,
  name: string,
  sealed: string,
) {
  return trx
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
}

/** What {@link AccountStore.authorize} did. */
export interface AuthorizeOutcome {
  account: AccountInfo;
  /** The state the account was in before: needs_reauthorization is now enabled, disabled stays so. */
  previousState: StoredAccountState;
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
export async function authorizePartner(
  context: AccountsContext,
  name: string,
  refreshToken: Secret,
): Promise<AuthorizeOutcome> {
  const box = requireBox(context, 'seal the refresh token of a partner account');
  const sealed = box.seal(refreshToken.reveal(), refreshTokenPurpose(name));
  return context.tokens.transaction().execute(async (trx) => {
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
    const token = await replaceRefreshToken(trx, name, sealed);
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
 * A registered account ready to sync, its credential opened. Throws
 * UnknownAccountError, AccountDisabledError (both AccountUnavailableError:
 * its runs are skipped; with `anyState`, a disabled account or one needing
 * reauthorization is resolved too, for `accounts test`),
 * CredentialsRefusedError for an account in state credentials_refused (its
 * runs fail at once, without a token request), or SecretKeyError
 * when HIRESYNC_SECRET_KEY is unset or holds no key that opens the credential.
 */
export async function resolveAccount(
  context: AccountsContext,
  name: string,
  options: { anyState?: boolean } = {},
): Promise<Account> {
  const row = await context.db
    .selectFrom('hiresync.accounts')
    .selectAll()
    .where('name', '=', name)
    .executeTakeFirst()
    .catch(undefinedWithoutTable);
  if (!row || name === DEFAULT_ACCOUNT) throw new UnknownAccountError(name);
  if (row.state === 'credentials_refused' && options.anyState !== true) {
    // Fails the run at once, without a token request: the same credential
    // would be refused again.
    throw new CredentialsRefusedError(
      name,
      row.auth_mode,
      row.refusal_reason ?? 'the token service refused its credential',
    );
  }
  if (row.state !== 'enabled' && options.anyState !== true) {
    throw new AccountDisabledError(name, row.state);
  }
  // The row's version restarts at 1 when a removed name is added again:
  // its creation time tells the two registrations apart.
  const version = `${row.created_at}#${row.version}`;
  if (row.auth_mode === 'partner') {
    const partner = requirePartner(context, `run the partner account ${name}`);
    if (!context.box) {
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
      refreshTokens: new PostgresRefreshTokenVault(context.db, context.box, name),
      version,
    };
  }
  if (!context.box) {
    throw new SecretKeyError(`account ${name}'s credentials are sealed: set HIRESYNC_SECRET_KEY`);
  }
  if (row.secret === null) {
    throw new SecretKeyError(`account ${name} has no stored credential`);
  }
  const secret = new Secret(context.box.open(row.secret, secretPurpose(name)));
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
    credentialRefusals: credentialRefusals(context.db, name, row),
    version,
  };
}

/** The AuthConfig of a partner account: refresh grants at `authUrl/token` with the partner app's client. */
export function partnerAuth(authUrl: string, partner: PartnerConfig, account: string): AuthConfig {
  return {
    mode: 'partner',
    tokenUrl: `${authUrl}/token`,
    clientId: partner.clientId,
    clientSecret: partner.clientSecret,
    account,
  };
}

/**
 * Takes, for the rest of `trx`, the lock under which the account's refresh
 * grants run (see PostgresRefreshTokenVault), waiting at most a minute for one
 * in progress.
 */
export async function lockRefreshes(
  trx: Transaction<Database & RefreshTokenTables>,
  name: string,
): Promise<void> {
  await sql`select set_config('lock_timeout', '60s', true)`.execute(trx);
  await sql`select pg_advisory_xact_lock(${refreshLockKey(name).toString()}::bigint)`.execute(trx);
}

/**
 * The AuthConfig of an account, exactly as loadConfig builds the environment's,
 * naming the registered `account` it belongs to (when given: its errors then
 * name it, not the environment's variables).
 */
export function authConfig(
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
