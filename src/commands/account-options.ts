import { accountNameProblem, DEFAULT_ACCOUNT, NO_DEFAULT_ACCOUNT } from '../account-name.js';
import { type AccountDirectory, AccountUnavailableError } from '../accounts/account.js';
import { AccountStore } from '../accounts/account-store.js';
import type { AccountInfo } from '../accounts/stored-account.js';
import type { Config, PartnerConfig, StatusConfig } from '../config/types.js';
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
 * Why a deployment has no account to run: the environment sets no
 * credentials and `registered` accounts are registered, none enabled.
 * Undefined when the worker may start anyway: a partner app's accounts
 * connect later (`waitForConnects`), or some account is registered.
 */
function nothingToRun(
  registered: readonly AccountInfo[],
  partner: boolean,
  waitForConnects: boolean,
): string | undefined {
  const fix =
    "register one with 'hiresync accounts add NAME --client-id ID' (or --api-key; the secret on standard input), or set the environment's credentials (HIRESYNC_CLIENT_ID and HIRESYNC_CLIENT_SECRET, or HIRESYNC_API_KEY) for the account default";
  if (registered.length === 0) {
    if (partner) {
      return waitForConnects
        ? undefined
        : "no account to sync yet: no customer has connected the partner app; send a connect link ('hiresync accounts invite NAME'), or run 'hiresync accounts authorize NAME'";
    }
    return `no account to sync: the environment sets no credentials and no account is registered in this database; ${fix}`;
  }
  if (waitForConnects) return undefined;
  return `no account to sync: the environment sets no credentials and every registered account is disabled, needs reauthorization or had its credentials refused (${registered
    .slice(0, 3)
    .map((a) => `${a.name}: ${a.state}`)
    .join(', ')}${registered.length > 3 ? ', …' : ''}); see 'hiresync accounts list'`;
}

/**
 * The accounts a command runs: those named (each must exist and be enabled),
 * else `default` (when the environment sets credentials) and every enabled
 * account. Registered accounts need HIRESYNC_SECRET_KEY to open their
 * credentials: a configuration error (exit 2). With none to run and no
 * environment credentials, a usage error saying what to do (exit 2), unless
 * `waitForConnects` (the worker) and a partner app or registered accounts
 * may yet give it some: then none. A named account is looked up with
 * `resolve` (default: the directory's), which `sync` shares with its token
 * check so that the account is read once for both.
 */
export async function resolveAccounts(
  app: { accounts: AccountDirectory; db: ConstructorParameters<typeof AccountStore>[0] },
  named: readonly string[] | undefined,
  config: Pick<Config, 'secretKeys' | 'partner'> & { api: { auth: unknown } },
  {
    waitForConnects = false,
    resolve = (name) => app.accounts.resolve(name),
  }: { waitForConnects?: boolean; resolve?: (name: string) => Promise<unknown> } = {},
): Promise<string[]> {
  const directory = app.accounts;
  const hasDefault = config.api.auth !== undefined;
  if (named?.includes(DEFAULT_ACCOUNT) && !hasDefault) throw new UsageError(NO_DEFAULT_ACCOUNT);
  const names = named ?? (await directory.enabledNames());
  const registered = names.filter((n) => n !== DEFAULT_ACCOUNT);
  if (registered.length > 0 && !config.secretKeys) {
    throw new ConfigError([
      {
        variable: 'HIRESYNC_SECRET_KEY',
        message: `is required: ${registered.length} registered account(s) (${registered.slice(0, 3).join(', ')}${registered.length > 3 ? ', …' : ''}) have sealed credentials; set it${hasDefault ? ', or name --account default' : ''}`,
      },
    ]);
  }
  if (names.length === 0) {
    const problem = nothingToRun(
      await new AccountStore(app.db).list(),
      config.partner !== undefined,
      waitForConnects,
    );
    if (problem) throw new UsageError(problem);
  }
  if (named) {
    for (const name of named) {
      try {
        await resolve(name);
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
