import type { Kysely } from 'kysely';
import { schemaOf } from '../account-name.js';
import { type ExchangeCodeOptions, exchangeCode } from '../api/exchange-code.js';
import { authUrlSetting } from '../api/url-setting.js';
import type { PartnerConfig } from '../config/types.js';
import { coerceError } from '../errors.js';
import type { Secret } from '../secret.js';
import { PUBLIC_SCHEMA } from '../warehouse/database.js';
import { migrateSchemas } from '../warehouse/setup/migrate-all.js';
import type { Database } from '../warehouse/tables.js';
import type { AccountStore } from './account-store.js';
import { AccountNotReadyError, type FreeSchema, registerAccount } from './register-account.js';
import type { AccountInfo } from './stored-account.js';

/** What completing an authorization reaches: Postgres, and the token service through `http`. */
export interface AuthorizationPorts {
  db: Kysely<Database>;
  /** The account registry on `db`, with the secret box and the partner app. */
  store: AccountStore;
  partner: PartnerConfig;
  /** The got instance of src/api/http.ts the code is exchanged with. */
  http: ExchangeCodeOptions['http'];
  logger: ExchangeCodeOptions['logger'];
  /** Timeout of the exchange's request. */
  exchangeTimeoutMs: number;
  /** Warnings, such as an account the all_accounts views leave out. */
  warn: (warning: string) => void;
}

/** A partner account to register: its URLs, and whose its schema is ({@link checkNewAccount}). */
export interface NewPartnerAccount {
  baseUrl: string;
  authUrl: string;
  owner: FreeSchema;
}

/**
 * The account an authorization is for: a registered partner account (whose
 * token service is `authUrl`; it keeps its data and URLs), or a new one to
 * register (its schema checked free, {@link checkNewAccount}).
 */
export type AuthorizationTarget =
  | { existing: AccountInfo; authUrl: string }
  | { register: NewPartnerAccount };

/** The code an authorization request brought back, and what the exchange must repeat of the request. */
export interface AuthorizationCode {
  name: string;
  /** Never logged or printed. */
  code: string;
  redirectUri: string;
  /** The PKCE verifier of the authorization request. */
  codeVerifier: string;
}

/** What became of a code. */
export type AuthorizationOutcome =
  /** Its refresh token stored, the account registered or reauthorized, its schema up to date. */
  | {
      kind: 'authorized';
      account: AccountInfo | undefined;
      previousState: AccountInfo['state'] | undefined;
    }
  /** Its refresh token stored, but its schema is not ready (`error` says what is left to do). */
  | {
      kind: 'not ready';
      account: AccountInfo | undefined;
      previousState: AccountInfo['state'] | undefined;
      error: AccountNotReadyError;
    }
  /** The token service did not give a refresh token for the code: nothing stored. */
  | { kind: 'exchange failed'; error: Error };

/**
 * Completes a partner authorization, as `accounts authorize` and a connect
 * link's callback do: exchanges the code (once) at the target's token
 * service, then stores the refresh token sealed ({@link save}). Failures of
 * Postgres while storing are thrown.
 */
export async function completeAuthorization(
  ports: AuthorizationPorts,
  target: AuthorizationTarget,
  grant: AuthorizationCode,
): Promise<AuthorizationOutcome> {
  const { store } = ports;
  const { name } = grant;
  const existing = 'existing' in target ? target.existing : undefined;
  const authUrl = 'existing' in target ? target.authUrl : target.register.authUrl;
  let refreshToken: Awaited<ReturnType<typeof exchangeCode>>;
  try {
    refreshToken = await exchangeCode({
      http: ports.http,
      tokenUrl: `${authUrl}/token`,
      partner: ports.partner,
      code: grant.code,
      redirectUri: grant.redirectUri,
      codeVerifier: grant.codeVerifier,
      logger: ports.logger,
      timeoutMs: ports.exchangeTimeoutMs,
      ...(existing ? { authUrlSetting: authUrlSetting(name) } : {}),
    });
  } catch (error) {
    return { kind: 'exchange failed', error: coerceError(error) };
  }
  try {
    const saved = await save(ports, name, refreshToken, target);
    return { kind: 'authorized', ...saved };
  } catch (error) {
    if (!(error instanceof AccountNotReadyError)) throw error;
    // The token is stored: what is left to do is the schema's.
    const account = await store.get(name);
    return { kind: 'not ready', account, previousState: existing?.state, error };
  }
}

/**
 * Stores the refresh token of the partner account `name`: a new account is
 * registered with it and its schema migrated (as by `accounts add`; undone
 * when the schema cannot be made ready); a registered one has its token
 * replaced, is enabled again if it needed reauthorization (a disabled one
 * stays disabled), and its schema brought up to date. Throws
 * AccountNotReadyError when the account is stored but its schema is not ready.
 */
async function save(
  { db, store, warn }: AuthorizationPorts,
  name: string,
  refreshToken: Secret,
  target: AuthorizationTarget,
): Promise<Omit<Extract<AuthorizationOutcome, { kind: 'authorized' }>, 'kind'>> {
  if ('register' in target) {
    const { baseUrl, authUrl, owner } = target.register;
    const insert = () => store.addPartner(name, baseUrl, authUrl, refreshToken);
    const account = await registerAccount(db, store, name, owner, insert, warn);
    return { account, previousState: undefined };
  }
  const outcome = await store.authorize(name, refreshToken);
  try {
    await migrateSchemas(db, [PUBLIC_SCHEMA, schemaOf(name)], { warn });
  } catch (error) {
    throw new AccountNotReadyError(
      `account ${name} is authorized, but its schema could not be brought up to date (${coerceError(error).message}); run 'hiresync migrate' to finish`,
      { cause: error },
    );
  }
  return { account: outcome.account, previousState: outcome.previousState };
}
