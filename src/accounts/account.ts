import type { CredentialRefusals } from '../api/credential-refusal.js';
import type { RefreshTokenVault } from '../api/refresh-token-port.js';
import type { AuthConfig } from '../config/types.js';
import { HiresyncError } from '../errors.js';

/** An account ready to sync: where its API is, how it authenticates, where its tables are. */
export interface Account {
  name: string;
  schema: string;
  /** Its `{base_url}`, without a trailing slash. */
  baseUrl: string;
  auth: AuthConfig;
  /** Where a partner account's refresh token is kept (its auth mode is `partner`). */
  refreshTokens?: RefreshTokenVault;
  /** Where a refusal of a registered client-credentials or API-key account's credential is recorded. */
  credentialRefusals?: CredentialRefusals;
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
