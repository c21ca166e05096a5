import type { Kysely } from 'kysely';
import { schemaOf } from '../account-name.js';
import { coerceError, HiresyncError, ReauthorizationRequiredError } from '../errors.js';
import type { Secret } from '../secret.js';
import { migrateControl } from '../warehouse/setup/migrate-all.js';
import type { Database } from '../warehouse/tables.js';
import type { Account } from './account.js';
import { authConfig } from './account-credentials.js';
import type { AccountStore } from './account-store.js';
import { checkNewAccount, type FreeSchema, registerAccount } from './register-account.js';
import { type AccountInfo, type NewAccount, UnknownAccountError } from './stored-account.js';

/** A partner account being added: its URLs and the customer's refresh token. */
export interface PartnerCredentials {
  name: string;
  baseUrl: string;
  authUrl: string;
  refreshToken: Secret;
}

/** Whether a token could be minted with an account's credentials (as sync/probe-account.ts's TokenProbe). */
export type TokenTest = { ok: true } | { ok: false; error: string; cause: unknown };

/**
 * Tests an account as its runs would reach the API (`accounts test`): a new
 * access token minted with its credentials, the first page of each of its
 * resources read (`R`: what one read found). Closed by the operation.
 */
export interface AccountTester<R> {
  mintToken(name: string): Promise<TokenTest>;
  readResources(name: string): Promise<R[]>;
  close(): Promise<unknown>;
}

/** Opens a tester resolving the account under test with `resolve` (its runs' view of it). */
export type OpenTester<R> = (
  resolve: (name: string) => Promise<Account>,
) => Promise<AccountTester<R>>;

/** What `accounts add NAME` registers, and how. */
export interface AddAccountOptions<R> {
  db: Kysely<Database>;
  /** With HIRESYNC_SECRET_KEY and (for a partner account) the partner app. */
  store: AccountStore;
  account: { credentials: NewAccount } | { partner: PartnerCredentials };
  /** Register it even though rows of an earlier registration of its name are stored (--reuse-data). */
  reuseData: boolean;
  /** Test it before it is registered; undefined: registered untested (--no-test). */
  openTester: OpenTester<R> | undefined;
  warn: (warning: string) => void;
  /** Its own settings, and the list resources only they name, as {@link registerAccount} takes them. */
  settings?: Parameters<typeof registerAccount>[6];
}

/** What became of adding an account. Failures of Postgres, Redis or the schema are thrown. */
export type AddAccountOutcome<R> =
  /** Registered, its schema ready; `resources`: what its test read (undefined when untested). */
  | { kind: 'added'; account: AccountInfo; resources: R[] | undefined }
  /** No token could be minted with its credentials: nothing is registered (`error` says so). */
  | { kind: 'refused'; error: HiresyncError };

/** The outcome of a credential that minted no token: nothing registered. */
class Refused extends HiresyncError {}

/**
 * `accounts add NAME`: checks the name is free ({@link checkNewAccount}),
 * then registers the account and makes its schema ready
 * ({@link registerAccount}), once a token has been minted with its
 * credentials when it is tested; then reads the first page of each of its
 * resources. Client credentials and API keys are tried before their row is
 * written; a partner account's refresh grant needs its stored refresh token
 * (a rotated one is stored at once, never lost), so its rows are written
 * first, disabled (no worker schedules it), and deleted when the grant is
 * refused, else enabled once its schema is ready (a schema that cannot be
 * made ready leaves it registered, disabled: the row holds the refresh token
 * the grant rotated). A resource found failing or not permitted is returned,
 * not refused.
 */
export async function addAccount<R>(options: AddAccountOptions<R>): Promise<AddAccountOutcome<R>> {
  const { db, store, account, warn, settings } = options;
  const name = nameOf(account);
  await migrateControl(db);
  const owner = await checkNewAccount(db, store, name, { reuseData: options.reuseData });
  if (!options.openTester) {
    const insert = () =>
      'credentials' in account
        ? store.add(account.credentials)
        : store.addPartner(
            name,
            account.partner.baseUrl,
            account.partner.authUrl,
            account.partner.refreshToken,
          );
    const added = await registerAccount(db, store, name, owner, insert, warn, settings);
    return { kind: 'added', account: added, resources: undefined };
  }
  try {
    return await registerTested({ ...options, openTester: options.openTester }, owner);
  } catch (error) {
    if (error instanceof Refused) return { kind: 'refused', error };
    throw error;
  }
}

function nameOf(account: AddAccountOptions<unknown>['account']): string {
  return 'credentials' in account ? account.credentials.name : account.partner.name;
}

/** Registers the account once its credentials minted a token, then reads its resources. */
async function registerTested<R>(
  options: AddAccountOptions<R> & { openTester: OpenTester<R> },
  owner: FreeSchema,
): Promise<AddAccountOutcome<R>> {
  const { store, account } = options;
  const name = nameOf(account);
  // Until it is registered, errors about its token name the flags of `add`;
  // after, its pages are read by a context of the registered account (the
  // token minted is shared through Redis: it is not minted again).
  let registered = false;
  const tester = await options.openTester(async (wanted) => {
    if (wanted !== name) throw new UnknownAccountError(wanted);
    const resolved =
      'credentials' in account
        ? candidateOf(account.credentials, registered)
        : await store.resolve(wanted, { anyState: true });
    return { ...resolved, auth: { ...resolved.auth, adding: !registered } };
  });
  try {
    const added =
      'credentials' in account
        ? await registerCredentials(options, tester, account.credentials, owner)
        : await registerPartner(options, tester, account.partner, owner);
    registered = true;
    return { kind: 'added', account: added, resources: await tester.readResources(name) };
  } finally {
    await tester.close();
  }
}

/** Client credentials or an API key: tried, then registered. */
async function registerCredentials<R>(
  options: AddAccountOptions<R>,
  tester: AccountTester<R>,
  credentials: NewAccount,
  owner: FreeSchema,
): Promise<AccountInfo> {
  const { db, store, warn, settings } = options;
  const token = await tester.mintToken(credentials.name);
  if (!token.ok) throw notAdded(credentials.name, token);
  const insert = () => store.add(credentials);
  return registerAccount(db, store, credentials.name, owner, insert, warn, settings);
}

/** A partner account: stored disabled, its refresh grant tried, then made ready and enabled. */
async function registerPartner<R>(
  options: AddAccountOptions<R>,
  tester: AccountTester<R>,
  partner: PartnerCredentials,
  owner: FreeSchema,
): Promise<AccountInfo> {
  const { db, store, warn, settings } = options;
  const { name, baseUrl, authUrl, refreshToken } = partner;
  const inserted = await store.addPartner(name, baseUrl, authUrl, refreshToken, 'disabled');
  const token = await tester.mintToken(name).catch(
    (error: unknown): TokenTest => ({
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
  return enable(store, name);
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
  failed: Extract<TokenTest, { ok: false }>,
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
function notAdded(name: string, failed: Extract<TokenTest, { ok: false }>): Refused {
  return new Refused(
    `account ${name} was not added, and nothing is registered: no access token could be minted with the credentials given (${whyNoToken(failed)}); give the right ones to 'hiresync accounts add ${name}' again (with --no-test it registers them untested)`,
    { cause: failed.cause },
  );
}

/**
 * Why no token came, for an account not added: a refused refresh token's
 * reason alone (re-authorizing an account that is not there means nothing).
 */
function whyNoToken(failed: Extract<TokenTest, { ok: false }>): string {
  return failed.cause instanceof ReauthorizationRequiredError ? failed.cause.reason : failed.error;
}
