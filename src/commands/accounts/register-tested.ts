import type { Kysely } from 'kysely';
import { schemaOf } from '../../account-name.js';
import type { Account } from '../../accounts/account.js';
import { authConfig } from '../../accounts/account-credentials.js';
import type { AccountStore } from '../../accounts/account-store.js';
import { type FreeSchema, registerAccount } from '../../accounts/register-account.js';
import {
  type AccountInfo,
  type NewAccount,
  UnknownAccountError,
} from '../../accounts/stored-account.js';
import type { Config } from '../../config/types.js';
import { coerceError, HiresyncError, ReauthorizationRequiredError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { Secret } from '../../secret.js';
import type { TokenProbe } from '../../sync/probe-account.js';
import type { Database } from '../../warehouse/tables.js';
import {
  type AccountProbe,
  mintAccountToken,
  openProbeApp,
  readAccountResources,
} from './account-probe.js';

/** A partner account being added: its URLs and the customer's refresh token. */
export interface NewPartnerAccount {
  name: string;
  baseUrl: string;
  authUrl: string;
  refreshToken: Secret;
}

/** Options of {@link registerTestedAccount}. */
export interface RegisterTestedOptions {
  db: Kysely<Database>;
  /** With HIRESYNC_SECRET_KEY and (for a partner account) the partner app. */
  store: AccountStore;
  /** What {@link checkNewAccount} found of its schema. */
  owner: FreeSchema;
  account: { credentials: NewAccount } | { partner: NewPartnerAccount };
  /** The configuration tests run with (loadProbeConfig). */
  config: Config;
  logger: Logger;
  warn: (warning: string) => void;
  /** Its own settings, and the list resources only they name, as {@link registerAccount} takes them. */
  settings?: Parameters<typeof registerAccount>[6];
}

/**
 * Registers an account as `accounts add` does ({@link registerAccount}), once
 * a token has been minted with its credentials, then reads the first page of
 * each of its resources. A credential that cannot mint a token is refused
 * (HiresyncError) and nothing is registered: client credentials and API keys
 * are tried before their row is written; a partner account's refresh grant
 * needs its stored refresh token (a rotated one is stored at once, never
 * lost), so its rows are written first, disabled (no worker schedules it),
 * and deleted when the grant is refused, else enabled once its schema is
 * ready (a schema that cannot be made ready leaves it registered, disabled:
 * the row holds the refresh token the grant rotated). A resource the test
 * finds failing or not permitted is returned, not refused.
 */
export async function registerTestedAccount(
  options: RegisterTestedOptions,
): Promise<{ added: AccountInfo; probe: AccountProbe }> {
  const { db, store, owner, account, config, logger, warn, settings } = options;
  const name = 'credentials' in account ? account.credentials.name : account.partner.name;
  // Until it is registered, errors about its token name the flags of `add`;
  // after, its pages are read by a context of the registered account (the
  // token minted is shared through Redis: it is not minted again).
  let registered = false;
  const app = await openProbeApp(config, logger, async (wanted) => {
    if (wanted !== name) throw new UnknownAccountError(wanted);
    const resolved =
      'credentials' in account
        ? candidateOf(account.credentials, registered)
        : await store.resolve(wanted, { anyState: true });
    return { ...resolved, auth: { ...resolved.auth, adding: !registered } };
  });
  try {
    let added: AccountInfo;
    if ('credentials' in account) {
      const { token } = await mintAccountToken(app, name);
      if (!token.ok) throw notAdded(name, token);
      added = await registerAccount(
        db,
        store,
        name,
        owner,
        () => store.add(account.credentials),
        warn,
        settings,
      );
    } else {
      const { baseUrl, authUrl, refreshToken } = account.partner;
      const inserted = await store.addPartner(name, baseUrl, authUrl, refreshToken, 'disabled');
      const { token } = await mintAccountToken(app, name).catch((error: unknown) =>
        unregisterPartner(store, name, {
          ok: false,
          error: coerceError(error).message,
          cause: error,
        }),
      );
      if (!token.ok) await unregisterPartner(store, name, token);
      // Its refresh token may have been rotated by the test: the row holds the
      // only valid one now, so it is kept (disabled) whatever happens next.
      await registerAccount(db, store, name, owner, async () => inserted, warn, {
        ...settings,
        keep: true,
      }).catch((error: unknown) => {
        throw new HiresyncError(
          `account ${name} is registered, disabled, with the refresh token its test obtained (the one given may be spent), but it is not ready: ${coerceError(error).message}; once that is fixed, run 'hiresync accounts enable ${name}'`,
          { cause: error },
        );
      });
      added = await enable(store, name);
    }
    registered = true;
    const resources = await readAccountResources(app, name, await app.contextOf(name));
    return { added, probe: { token: { ok: true }, resources } };
  } finally {
    await app.close();
  }
}

/** The account `credentials` make, as its runs resolve it once `registered`. */
function candidateOf(credentials: NewAccount, registered: boolean): Account {
  const { auth } = credentials;
  const secret = auth.mode === 'client_credentials' ? auth.clientSecret : auth.apiKey;
  return {
    name: credentials.name,
    schema: schemaOf(credentials.name),
    baseUrl: credentials.baseUrl,
    auth: authConfig(credentials.baseUrl, auth, secret, credentials.name),
    version: registered ? 'registered' : 'adding',
  };
}

/** Enables the partner account registered disabled for its test. */
async function enable(store: AccountStore, name: string): Promise<AccountInfo> {
  try {
    return (await store.setState(name, 'enabled')).account;
  } catch (error) {
    throw new HiresyncError(
      `account ${name} is registered, tested and its schema ready, but it could not be enabled (${coerceError(error).message}); run 'hiresync accounts enable ${name}'`,
      { cause: error },
    );
  }
}

/** Deletes the partner account just inserted (its refresh token goes with it), and throws why. */
async function unregisterPartner(
  store: AccountStore,
  name: string,
  failed: Extract<TokenProbe, { ok: false }>,
): Promise<never> {
  try {
    await store.remove(name);
  } catch (error) {
    throw new HiresyncError(
      `account ${name} could not be added: no access token could be minted with the refresh token given (${whyNoToken(failed)}), and its registration could not be undone (${coerceError(error).message}): run 'hiresync accounts remove ${name}'`,
      { cause: error },
    );
  }
  throw notAdded(name, failed);
}

/** The refusal of an account whose credentials cannot mint a token. */
function notAdded(name: string, failed: Extract<TokenProbe, { ok: false }>): HiresyncError {
  return new HiresyncError(
    `account ${name} was not added, and nothing is registered: no access token could be minted with the credentials given (${whyNoToken(failed)}); give the right ones to 'hiresync accounts add ${name}' again (with --no-test it registers them untested)`,
    { cause: failed.cause },
  );
}

/**
 * Why no token came, for an account not added: a refused refresh token's
 * reason alone (re-authorizing an account that is not there means nothing).
 */
function whyNoToken(failed: Extract<TokenProbe, { ok: false }>): string {
  return failed.cause instanceof ReauthorizationRequiredError ? failed.cause.reason : failed.error;
}
