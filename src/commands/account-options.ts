import { accountNameProblem, DEFAULT_ACCOUNT } from '../account-name.js';
import { type AccountDirectory, AccountUnavailableError } from '../accounts/account.js';
import { AccountStore } from '../accounts/account-store.js';
import type { PartnerConfig, StatusConfig } from '../config/types.js';
import { ConfigError, UsageError } from '../errors.js';

/** The accounts named by `--account` (repeated or comma-separated), or undefined when none. */
export function parseAccounts(values: readonly string[] | undefined): string[] | undefined {
  if (!values || values.length === 0) return undefined;
  const names = values.flatMap((v) => v.split(',')).map((v) => v.trim());
  for (const name of names) {
    if (name === '') throw new UsageError('--account was given an empty account name');
    const problem = name === DEFAULT_ACCOUNT ? undefined : accountNameProblem(name);
    if (problem) throw new UsageError(problem);
  }
  return [...new Set(names)];
}

/**
 * The registered accounts of a deployment, for createApp: their credentials
 * open with `secretKeys`; partner accounts refresh with the partner app of
 * `partner` (HIRESYNC_PARTNER_CLIENT_ID/_SECRET).
 */
export function registryOf(
  config: Pick<StatusConfig, 'secretKeys'> & { partner?: PartnerConfig | undefined },
) {
  return (db: ConstructorParameters<typeof AccountStore>[0]): AccountDirectory =>
    new AccountStore(db, config.secretKeys, { partner: config.partner });
}

/**
 * The accounts a command runs: those named (each must exist and be enabled),
 * else `default` and every enabled account. Registered accounts need
 * HIRESYNC_SECRET_KEY to open their credentials: a configuration error (exit 2).
 */
export async function resolveAccounts(
  directory: AccountDirectory,
  named: readonly string[] | undefined,
  config: Pick<StatusConfig, 'secretKeys'>,
): Promise<string[]> {
  const names = named ?? (await directory.enabledNames());
  const registered = names.filter((n) => n !== DEFAULT_ACCOUNT);
  if (registered.length > 0 && !config.secretKeys) {
    throw new ConfigError([
      {
        variable: 'HIRESYNC_SECRET_KEY',
        message: `is required: ${registered.length} registered account(s) (${registered.slice(0, 3).join(', ')}${registered.length > 3 ? ', …' : ''}) have sealed credentials; set it, or name --account default`,
      },
    ]);
  }
  if (named) {
    for (const name of named) {
      try {
        await directory.resolve(name);
      } catch (error) {
        if (error instanceof AccountUnavailableError) {
          throw new UsageError(`${error.message}; see 'hiresync accounts list'`);
        }
        // Anything else (a credential no configured key opens, Postgres
        // trouble) fails that account's runs, with its message, not the others'.
      }
    }
  }
  return [...names];
}
