import type { Kysely } from 'kysely';
import { schemaOf } from '../account-name.js';
import { coerceError } from '../errors.js';
import type { Secret } from '../secret.js';
import { PUBLIC_SCHEMA } from '../warehouse/database.js';
import { migrateSchemas } from '../warehouse/setup/migrate-all.js';
import type { Database } from '../warehouse/tables.js';
import type { AccountStore } from './account-store.js';
import { AccountNotReadyError, type FreeSchema, registerAccount } from './register-account.js';
import type { AccountInfo } from './stored-account.js';

/** The account authorized, and its state before (undefined for a new account). */
export interface PartnerAuthorization {
  account: AccountInfo | undefined;
  previousState: AccountInfo['state'] | undefined;
}

/** A partner account to register: its URLs, and whose its schema is ({@link checkNewAccount}). */
export interface NewPartnerAccount {
  baseUrl: string;
  authUrl: string;
  owner: FreeSchema;
}

/**
 * Stores the refresh token an authorization code yielded for the partner
 * account `name`, as `accounts authorize` and a connect link's callback do:
 * with `register`, a new account is registered with it and its schema
 * migrated (as by `accounts add`; undone when the schema cannot be made
 * ready); without, the registered account's token is replaced, the account
 * enabled again if it needed reauthorization (a disabled one stays
 * disabled), and its schema brought up to date. Throws AccountNotReadyError
 * when the account is stored but its schema is not ready. Warnings (views leaving an
 * account out) go to `warn`.
 */
export async function savePartnerAuthorization(
  db: Kysely<Database>,
  store: AccountStore,
  name: string,
  refreshToken: Secret,
  register: NewPartnerAccount | undefined,
  warn: (warning: string) => void,
): Promise<PartnerAuthorization> {
  if (register) {
    const account = await registerAccount(
      db,
      store,
      name,
      register.owner,
      () => store.addPartner(name, register.baseUrl, register.authUrl, refreshToken),
      warn,
    );
    return { account, previousState: undefined };
  }
  const outcome = await store.authorize(name, refreshToken);
  await migrateExisting(db, name, warn);
  return { account: outcome.account, previousState: outcome.previousState };
}

/** Brings an existing account's schema up to date, and rebuilds the views if a migration ran. */
async function migrateExisting(
  db: Kysely<Database>,
  name: string,
  warn: (warning: string) => void,
): Promise<void> {
  try {
    await migrateSchemas(db, [PUBLIC_SCHEMA, schemaOf(name)], { warn });
  } catch (error) {
    throw new AccountNotReadyError(
      `account ${name} is authorized, but its schema could not be brought up to date (${coerceError(error).message}); run 'hiresync migrate' to finish`,
      { cause: error },
    );
  }
}
