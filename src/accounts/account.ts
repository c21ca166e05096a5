import type { RefreshTokenVault } from '../api/refresh-token-port.js';
import type { AuthConfig } from '../config.js';
import { HiresyncError } from '../errors.js';
import { PUBLIC_SCHEMA } from '../warehouse/database.js';

/** The account of the environment's credentials; its tables stay in schema `public`. */
export const DEFAULT_ACCOUNT = 'default';

/** What an account name must look like (../shared/interface.md, "Accounts"). */
export const ACCOUNT_NAME = /^[a-z][a-z0-9_]{0,39}$/;

/** Names an account may not take: they are schemas of Postgres or of hiresync. */
const RESERVED = new Set(['default', 'public', 'hiresync', 'all_accounts', 'information_schema']);

/** Why `name` cannot name a registered account, or undefined when it can. */
export function accountNameProblem(name: string): string | undefined {
  if (!ACCOUNT_NAME.test(name)) {
    return `account name ${JSON.stringify(name)} must be 1 to 40 lowercase letters, digits or _, starting with a letter`;
  }
  if (RESERVED.has(name) || name.startsWith('pg_')) {
    return `account name ${JSON.stringify(name)} is reserved; choose another`;
  }
  return undefined;
}

/** The Postgres schema holding an account's tables: `public` for `default`, else the account's name. */
export function schemaOf(account: string): string {
  return account === DEFAULT_ACCOUNT ? PUBLIC_SCHEMA : account;
}

/**
 * The name of one (account, resource) in keys and locks: the resource alone for
 * `default` (the keys a single-account deployment always had, so an upgrade
 * resumes its checkpoints), else `account:resource`. Neither part holds `:`.
 */
export function runKey(account: string, resource: string): string {
  return account === DEFAULT_ACCOUNT ? resource : `${account}:${resource}`;
}

/** How an account authenticates: the grants of ../shared/api-spec.md. */
export type AuthMode = AuthConfig['mode'];

/**
 * The life of a registered account: `enabled` accounts are synced and
 * scheduled; `disabled` ones keep their data and credentials but run nothing.
 */
export type AccountState = 'enabled' | 'disabled';

/** An account ready to sync: where its API is, how it authenticates, where its tables are. */
export interface Account {
  name: string;
  schema: string;
  /** Its `{base_url}`, without a trailing slash. */
  baseUrl: string;
  auth: AuthConfig;
  /** Where a partner account's refresh token is kept (its auth mode is `partner`). */
  refreshTokens?: RefreshTokenVault;
  /**
   * Changes whenever the account's row does (credentials, URLs, state):
   * runtimes built for an older version are rebuilt.
   */
  version: string;
}

/**
 * An account cannot run now: disabled, or no longer registered. Its queued
 * jobs are skipped, not failed; `sync --account` names it as the cause.
 */
export class AccountUnavailableError extends HiresyncError {}

/** Where accounts come from: the environment's `default`, and the registered ones (hiresync.accounts). */
export interface AccountDirectory {
  /** The account ready to sync; throws AccountUnavailableError when it is disabled or unknown. */
  resolve(name: string): Promise<Account>;
  /** Names of the accounts to sync and schedule: `default` first, then every enabled account. */
  enabledNames(): Promise<string[]>;
}
