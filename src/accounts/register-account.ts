import type { Kysely } from 'kysely';
import { schemaOf } from '../account-name.js';
import { type AccountSettingsChange, changesSettings } from '../config/account-settings.js';
import { coerceError, HiresyncError } from '../errors.js';
import { ensureAccountAnalytics } from '../warehouse/analytics/analytics-schemas.js';
import { PUBLIC_SCHEMA } from '../warehouse/database.js';
import {
  claimAccountSchema,
  ForeignSchemaError,
  schemaOwner,
} from '../warehouse/layout/account-schema-owner.js';
import {
  describeStoredRows,
  type StoredRows,
  storedRowsOf,
} from '../warehouse/layout/stored-rows.js';
import {
  ensureAllAccountsViews,
  refreshAllAccountsViews,
} from '../warehouse/setup/all-accounts-refresh.js';
import { ensureListResources, migrateSchemas } from '../warehouse/setup/migrate-all.js';
import type { Database } from '../warehouse/tables.js';
import { AccountSettingsStore } from './account-settings-store.js';
import type { AccountStore } from './account-store.js';
import { AccountExistsError, type AccountInfo } from './stored-account.js';

/**
 * The account was registered (or authorized) but its schema or the
 * all_accounts views could not be made ready: something changed, and the
 * message says how to finish ('hiresync migrate', or removing it).
 */
export class AccountNotReadyError extends HiresyncError {}

/** Whose schema NAME is, as {@link schemaOwner} tells it, once it is known not to be another's. */
export type FreeSchema = 'absent' | 'hiresync';

/**
 * Rows of an earlier registration of the name are stored (it was removed
 * without --drop-data): registering it would show them to whoever the name
 * now stands for. Nothing is registered; `stored` says what there is, and
 * the message both ways on, for the command that was refused (`retry`).
 */
export class StoredDataError extends HiresyncError {
  readonly account: string;
  readonly stored: readonly StoredRows[];
  constructor(account: string, stored: readonly StoredRows[], retry: string, refused: string) {
    super(
      `${account}: ${describeStoredRows(stored)} stored from an earlier registration (removed without --drop-data); ${refused}. If it is the same customer back, ${retry} with --reuse-data to show them its data again; if not, drop them first with 'hiresync accounts remove ${account} --drop-data'`,
    );
    this.account = account;
    this.stored = stored;
  }
}

/** Options of {@link checkNewAccount}. */
export interface CheckNewAccountOptions {
  /**
   * Register it even though rows of an earlier registration of the name are
   * stored: the same customer is back, and sees them again (--reuse-data).
   * Default false: such rows refuse it ({@link StoredDataError}).
   */
  reuseData?: boolean | undefined;
  /** What to run again with --reuse-data, as the refusal says it. Default: `run 'hiresync accounts add NAME ...' again`. */
  retry?: string | undefined;
  /** What the refusal left undone, as it says it. Default: `nothing was registered`. */
  refused?: string | undefined;
}

/**
 * Checks that `name` can be registered: no account has it, its schema is
 * absent or hiresync's, and, unless `reuseData`, no rows of an earlier
 * registration of the name are stored (see {@link storedRowsOf}). Every road
 * that registers an account (`accounts add`, `accounts authorize`, a connect
 * link's callback, and `accounts invite` before it makes the link) calls it
 * before writing anything. Throws AccountExistsError, ForeignSchemaError for
 * a schema that is not hiresync's, even an empty one, or StoredDataError;
 * returns whose the schema is.
 */
export async function checkNewAccount(
  db: Kysely<Database>,
  store: AccountStore,
  name: string,
  { reuseData = false, retry, refused }: CheckNewAccountOptions = {},
): Promise<FreeSchema> {
  if (await store.get(name)) {
    throw new AccountExistsError(
      `account ${name} already exists; remove it first ('hiresync accounts remove ${name}') or choose another name`,
    );
  }
  const owner = await schemaOwner(db, schemaOf(name));
  if (owner === 'other') throw new ForeignSchemaError(schemaOf(name));
  if (!reuseData) {
    const stored = await storedRowsOf(db, name);
    if (stored.length > 0) {
      throw new StoredDataError(
        name,
        stored,
        retry ?? `run 'hiresync accounts add ${name} ...' again`,
        refused ?? 'nothing was registered',
      );
    }
  }
  return owner;
}

/**
 * Registers the account `name` with `insert` (which writes its rows) and its
 * own `settings`, then makes it ready: migrates `public`, claims its schema
 * and makes its views (with those of the list resources public holds and of
 * those only its settings name), a few statements whatever the number of
 * accounts (the all_accounts views show it at once: they read the shared
 * tables, see all-accounts-views.ts). When its schema cannot be made ready and
 * was not hiresync's before (`owner`), the registration is undone: an account
 * is registered only once its schema is ready; with `keep`, it is kept (a
 * partner account whose refresh token a test has rotated: deleting the row
 * would lose the only valid one). Warnings go to `warn`.
 */
export async function registerAccount(
  db: Kysely<Database>,
  store: AccountStore,
  name: string,
  owner: FreeSchema,
  insert: () => Promise<AccountInfo>,
  warn: (warning: string) => void,
  {
    settings,
    ownResources = [],
    keep = false,
  }: {
    settings?: AccountSettingsChange | undefined;
    /** The list resources only its settings name (not declared): their tables go in its schema only. */
    ownResources?: readonly string[];
    /** Keep the row when its schema cannot be made ready (see above). */
    keep?: boolean;
  } = {},
): Promise<AccountInfo> {
  const added = await insert();
  try {
    // Its own settings (--resources, --incremental-every, --full-cron), if any.
    if (settings && changesSettings(settings)) {
      await new AccountSettingsStore(db).set(name, settings);
    }
    await migrateSchemas(db, [PUBLIC_SCHEMA], { warn });
    await claimAccountSchema(db, added.schema);
    await migrateSchemas(db, [added.schema], { warn });
    // The list resources public holds (HIRESYNC_RESOURCES beyond the
    // built-in ones), and those only its settings name: in its schema only.
    await ensureListResources(db, [...ownResources], { schema: added.schema });
    // Its analytics views (schema NAME_analytics), over the shared tables.
    const analytics = await ensureAccountAnalytics(db, [name]);
    for (const warning of analytics.warnings) warn(warning);
    const views = analytics.tablesMade
      ? await refreshAllAccountsViews(db)
      : await ensureAllAccountsViews(db);
    for (const warning of views.warnings) warn(warning);
    return added;
  } catch (error) {
    const reason = coerceError(error).message;
    // A schema that was not hiresync's before this registration is not
    // taken: the account is registered only once its schema is ready.
    const undone = owner === 'hiresync' || keep ? undefined : await unregister(store, name);
    // Undone: nothing is registered. Else the account is, and not ready.
    throw new (undone ? HiresyncError : AccountNotReadyError)(
      undone === undefined
        ? `account ${name} is registered, but its schema could not be made ready (${reason}); run 'hiresync migrate' to finish`
        : undone
          ? `account ${name} was not added: its schema could not be made ready (${reason}); nothing is registered`
          : `account ${name} could not be added: its schema could not be made ready (${reason}), and its registration could not be undone: run 'hiresync accounts remove ${name}' (without --drop-data)`,
      { cause: error },
    );
  }
}

/** Deletes the row just inserted; false when that fails too. */
async function unregister(store: AccountStore, name: string): Promise<boolean> {
  try {
    await store.remove(name);
    return true;
  } catch {
    return false;
  }
}
