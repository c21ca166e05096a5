/**
 * A registered account as hiresync.accounts stores it and the registry and
 * the credentials read it: its public columns, where a partner account's
 * refresh token stands (hiresync.refresh_tokens), and the errors of a name
 * that is not registered, not enabled, or taken.
 */
import { schemaOf } from '../account-name.js';
import { HiresyncError } from '../errors.js';
import type { Secret } from '../secret.js';
import type { AccountRow, AccountsTable } from '../warehouse/tables.js';
import { AccountUnavailableError } from './account.js';

/**
 * The state of a registered account as stored: `needs_reauthorization` comes
 * with partner accounts, `credentials_refused` with the others.
 */
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
  /** Why it is in state credentials_refused (the token endpoint's refusal); null otherwise. */
  refusalReason: string | null;
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
        ? `account ${account} needs reauthorization: send the customer's administrator a connect link ('hiresync accounts invite ${account}'), or run 'hiresync accounts authorize ${account}'`
        : state === 'credentials_refused'
          ? `account ${account}'s credentials were refused by the token service: store the right ones with 'hiresync accounts update ${account}'`
          : `account ${account} is disabled: run 'hiresync accounts enable ${account}' to sync it again`,
    );
    this.account = account;
    this.state = state;
  }
}

/** `accounts add` of a name already registered. */
export class AccountExistsError extends HiresyncError {}

/** `accounts enable` of an account waiting for reauthorization: only a new authorization (a connect link, `accounts authorize`) enables it. */
export class ReauthorizationNeededError extends HiresyncError {
  readonly account: string;
  constructor(account: AccountInfo) {
    const reason = account.partner?.reauthorizationReason;
    super(
      `account ${account.name} needs reauthorization${reason ? ` (${reason})` : ''}: send the customer's administrator a connect link ('hiresync accounts invite ${account.name}'), or run 'hiresync accounts authorize ${account.name}'; enabling it would not make its refresh token work`,
    );
    this.account = account.name;
  }
}

const UNDEFINED_TABLE = '42P01';

/** Whether `error` is Postgres's: the table does not exist (before `migrate` made it). */
export function isUndefinedTable(error: unknown): boolean {
  return (error as { code?: unknown }).code === UNDEFINED_TABLE;
}

/** For `.catch`: undefined when the table is missing (never migrated); any other error thrown. */
export function undefinedWithoutTable(error: unknown): undefined {
  if (isUndefinedTable(error)) return undefined;
  throw error;
}

/** A row of hiresync.accounts as {@link AccountInfo}, with its refresh token's standing. */
export function infoOf(
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
    refusalReason: row.refusal_reason,
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
export const PUBLIC_COLUMNS = [
  'name',
  'auth_mode',
  'base_url',
  'auth_url',
  'client_id',
  'sub',
  'credential_namespace',
  'state',
  'refusal_reason',
  'created_at',
  'updated_at',
  'version',
] as const satisfies ReadonlyArray<keyof AccountsTable>;

/** The columns of hiresync.refresh_tokens but the token. */
export const TOKEN_COLUMNS = [
  'account',
  'authorized_at',
  'refreshed_at',
  'refresh_started_at',
  'reauthorization_reason',
] as const;

/** Where a refresh token stands, from its row. */
export function tokenInfoOf(row: {
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

/** The error of `accounts add` under a name already registered. */
export function accountExists(name: string): AccountExistsError {
  return new AccountExistsError(
    `account ${name} already exists; remove it first ('hiresync accounts remove ${name}') or choose another name`,
  );
}
