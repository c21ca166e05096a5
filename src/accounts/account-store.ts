import { type Kysely, sql } from 'kysely';
import { TokenCipher } from '../api/token-cipher.js';
import type { AuthConfig } from '../config.js';
import { ConfigError, HiresyncError, RunInterruptedError } from '../errors.js';
import { Secret } from '../secret.js';
import { inSchema } from '../warehouse/database.js';
import type { AccountRow, AccountsTable, Database } from '../warehouse/schema.js';
import {
  type Account,
  type AccountDirectory,
  AccountUnavailableError,
  accountNameProblem,
  DEFAULT_ACCOUNT,
  schemaOf,
} from './account.js';
import { type SecretBox, SecretKeyError } from './secret-box.js';

/** The state of a registered account as stored: `needs_reauthorization` comes with partner accounts. */
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
  createdAt: string;
  updatedAt: string;
  version: string;
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
        ? `account ${account} needs reauthorization: run 'hiresync accounts authorize ${account}'`
        : `account ${account} is disabled: run 'hiresync accounts enable ${account}' to sync it again`,
    );
    this.account = account;
    this.state = state;
  }
}

/** `accounts add` of a name already registered. */
export class AccountExistsError extends HiresyncError {}

/** What {@link AccountStore.rekey} did. */
export interface RekeyOutcome {
  /** Secrets sealed again with the first key of HIRESYNC_SECRET_KEY. */
  resealed: number;
  /** Secrets already sealed with it, left alone. */
  current: number;
}

/** The purpose a registered account's secret is sealed for: it opens in no other row. */
export function secretPurpose(account: string): string {
  return `account:${account}:secret`;
}

const UNDEFINED_TABLE = '42P01';

function isUndefinedTable(error: unknown): boolean {
  return (error as { code?: unknown }).code === UNDEFINED_TABLE;
}

function infoOf(row: Omit<AccountRow, 'secret'>): AccountInfo {
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
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

/** Every column of hiresync.accounts but the secret. */
const PUBLIC_COLUMNS = [
  'name',
  'auth_mode',
  'base_url',
  'auth_url',
  'client_id',
  'sub',
  'credential_namespace',
  'state',
  'created_at',
  'updated_at',
  'version',
] as const satisfies ReadonlyArray<keyof AccountsTable>;

/**
 * The registered accounts, in `hiresync.accounts` (migrations/hiresync). Reads
 * and writes through the root instance of the pool (the table is named with
 * its schema). Secrets are sealed with `box` (HIRESYNC_SECRET_KEY) for the
 * purpose `account:<name>:secret`, and opened only by {@link resolve}: no
 * other method returns one. Without a box, everything but add, rekey and
 * resolve works.
 */
export class AccountStore implements AccountDirectory {
  readonly #db: Kysely<Database>;
  readonly #box: SecretBox | undefined;

  constructor(db: Kysely<Database>, box?: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  #requireBox(why: string): SecretBox {
    if (!this.#box) {
      throw new ConfigError([
        { variable: 'HIRESYNC_SECRET_KEY', message: `is required to ${why}` },
      ]);
    }
    return this.#box;
  }

  /**
   * Registers an account with its credential sealed, in state `enabled`.
   * Throws AccountExistsError when the name is taken, and a ConfigError when
   * no HIRESYNC_SECRET_KEY is configured.
   */
  async add(account: NewAccount): Promise<AccountInfo> {
    const problem = accountNameProblem(account.name);
    if (problem) throw new HiresyncError(problem);
    const box = this.#requireBox('seal the credentials of an account');
    const { auth } = account;
    const secret = auth.mode === 'client_credentials' ? auth.clientSecret : auth.apiKey;
    const row = await this.#db
      .insertInto('hiresync.accounts')
      .values({
        name: account.name,
        auth_mode: auth.mode,
        base_url: account.baseUrl,
        auth_url: auth.mode === 'client_credentials' ? auth.authUrl : null,
        client_id: auth.mode === 'client_credentials' ? auth.clientId : null,
        sub: auth.mode === 'client_credentials' ? (auth.sub ?? null) : null,
        secret: box.seal(secret.reveal(), secretPurpose(account.name)),
        credential_namespace: new TokenCipher(authConfig(account.baseUrl, auth, secret)).namespace,
      })
      .onConflict((oc) => oc.column('name').doNothing())
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirst();
    if (!row) {
      throw new AccountExistsError(
        `account ${account.name} already exists; remove it first ('hiresync accounts remove ${account.name}') or choose another name`,
      );
    }
    return infoOf(row);
  }

  /** Every registered account, by name, without secrets; none before `migrate` made the table. */
  async list(): Promise<AccountInfo[]> {
    try {
      const rows = await this.#db
        .selectFrom('hiresync.accounts')
        .select(PUBLIC_COLUMNS)
        .orderBy('name')
        .execute();
      return rows.map(infoOf);
    } catch (error) {
      if (isUndefinedTable(error)) return [];
      throw error;
    }
  }

  /** One registered account, without its secret; undefined when none has the name. */
  async get(name: string): Promise<AccountInfo | undefined> {
    const row = await this.#db
      .selectFrom('hiresync.accounts')
      .select(PUBLIC_COLUMNS)
      .where('name', '=', name)
      .executeTakeFirst()
      .catch((error: unknown) => {
        if (isUndefinedTable(error)) return undefined;
        throw error;
      });
    return row && infoOf(row);
  }

  /**
   * Sets an account's state; `changed` is false when it was in that state
   * already (the row, and its version, are then left alone). Throws
   * UnknownAccountError.
   */
  async setState(
    name: string,
    state: StoredAccountState,
  ): Promise<{ account: AccountInfo; changed: boolean }> {
    const updated = await this.#db
      .updateTable('hiresync.accounts')
      .set({ state })
      .where('name', '=', name)
      .where('state', '<>', state)
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirst()
      .catch((error: unknown) => {
        if (isUndefinedTable(error)) return undefined;
        throw error;
      });
    if (updated) return { account: infoOf(updated), changed: true };
    const current = await this.get(name);
    if (!current) throw new UnknownAccountError(name);
    return { account: current, changed: false };
  }

  /** Deletes an account's row (not its schema) and returns what it held. Throws UnknownAccountError. */
  async remove(name: string): Promise<AccountInfo> {
    const row = await this.#db
      .deleteFrom('hiresync.accounts')
      .where('name', '=', name)
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirst()
      .catch((error: unknown) => {
        if (isUndefinedTable(error)) return undefined;
        throw error;
      });
    if (!row) throw new UnknownAccountError(name);
    return infoOf(row);
  }

  /**
   * Seals again, with the first key of HIRESYNC_SECRET_KEY, every secret
   * sealed with another, in one transaction: all or none (a secret no key
   * opens throws SecretKeyError and changes nothing).
   */
  async rekey(): Promise<RekeyOutcome> {
    const box = this.#requireBox('re-seal the credentials of the accounts');
    if ((await this.list()).length === 0) return { resealed: 0, current: 0 };
    return this.#db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('hiresync.accounts')
        .select(['name', 'secret'])
        .where('secret', 'is not', null)
        .orderBy('name')
        .forUpdate()
        .execute();
      let resealed = 0;
      for (const { name, secret } of rows) {
        if (secret === null || box.isCurrent(secret)) continue;
        const purpose = secretPurpose(name);
        const sealed = box.seal(box.open(secret, purpose), purpose);
        await trx
          .updateTable('hiresync.accounts')
          .set({ secret: sealed })
          .where('name', '=', name)
          .execute();
        resealed += 1;
      }
      return { resealed, current: rows.length - resealed };
    });
  }

  /** Names of every registered account (any state), sorted; none before `migrate` made the table. */
  async names(): Promise<string[]> {
    return (await this.list()).map((a) => a.name);
  }

  /**
   * Names of the registered accounts that are enabled, sorted. `default` (the
   * environment's) is not among them: the app's directory puts it first.
   */
  async enabledNames(): Promise<string[]> {
    return (await this.list()).filter((a) => a.state === 'enabled').map((a) => a.name);
  }

  /**
   * A registered account ready to sync, its credential opened. Throws
   * UnknownAccountError, AccountDisabledError (both AccountUnavailableError:
   * its runs are skipped), or SecretKeyError when HIRESYNC_SECRET_KEY is unset
   * or holds no key that opens the credential.
   */
  async resolve(name: string): Promise<Account> {
    const row = await this.#db
      .selectFrom('hiresync.accounts')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst()
      .catch((error: unknown) => {
        if (isUndefinedTable(error)) return undefined;
        throw error;
      });
    if (!row || name === DEFAULT_ACCOUNT) throw new UnknownAccountError(name);
    if (row.state !== 'enabled') throw new AccountDisabledError(name, row.state);
    if (row.auth_mode === 'partner') {
      throw new AccountUnavailableError(
        `account ${name} uses partner authorization, which this version of hiresync cannot run yet`,
      );
    }
    if (!this.#box) {
      throw new SecretKeyError(`account ${name}'s credentials are sealed: set HIRESYNC_SECRET_KEY`);
    }
    if (row.secret === null) {
      throw new SecretKeyError(`account ${name} has no stored credential`);
    }
    const secret = new Secret(this.#box.open(row.secret, secretPurpose(name)));
    const auth: NewAccount['auth'] =
      row.auth_mode === 'client_credentials'
        ? {
            mode: 'client_credentials',
            authUrl: row.auth_url ?? '',
            clientId: row.client_id ?? '',
            clientSecret: secret,
            sub: row.sub ?? undefined,
          }
        : { mode: 'api_key', apiKey: secret };
    return {
      name,
      schema: schemaOf(name),
      baseUrl: row.base_url,
      auth: authConfig(row.base_url, auth, secret),
      // The row's version restarts at 1 when a removed name is added again:
      // its creation time tells the two registrations apart.
      version: `${row.created_at}#${row.version}`,
    };
  }

  /**
   * When the account's newest successful run finished (its schema's
   * sync_runs), as Postgres prints it; undefined when it has none, or no
   * schema yet.
   */
  async lastSuccess(name: string): Promise<string | undefined> {
    try {
      const row = await inSchema(this.#db, schemaOf(name))
        .selectFrom('sync_runs')
        .select(sql<string | null>`max(finished_at)`.as('finished_at'))
        .where('outcome', '=', 'succeeded')
        .executeTakeFirst();
      return row?.finished_at ?? undefined;
    } catch (error) {
      if (isUndefinedTable(error)) return undefined;
      throw error;
    }
  }
}

/** The AuthConfig of an account, exactly as loadConfig builds the environment's. */
function authConfig(baseUrl: string, auth: NewAccount['auth'], secret: Secret): AuthConfig {
  return auth.mode === 'client_credentials'
    ? {
        mode: 'client_credentials',
        tokenUrl: `${auth.authUrl}/token`,
        clientId: auth.clientId,
        clientSecret: secret,
        sub: auth.sub,
      }
    : { mode: 'api_key', tokenUrl: `${baseUrl}/auth/token`, apiKey: secret };
}

/**
 * Checked in every page and sweep transaction of a registered account's run:
 * throws AccountUnavailableError when the account was removed or disabled
 * since the run began (the page in hand is not written and the run stops;
 * a disabled account's checkpoint stays for when it is enabled again), and
 * RunInterruptedError when its registration changed (credentials, URLs: the
 * run resumes with the new ones).
 */
export async function assertRegistered(
  db: Kysely<Database>,
  name: string,
  version: string,
): Promise<void> {
  const row = await db
    .selectFrom('hiresync.accounts')
    .select(['state', 'created_at', 'version'])
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row) {
    throw new AccountUnavailableError(
      `account ${name} was removed while its run was in flight; the run stopped before writing its page in hand`,
    );
  }
  if (row.state !== 'enabled') throw new AccountDisabledError(name, row.state);
  if (`${row.created_at}#${row.version}` !== version) {
    throw new RunInterruptedError(
      `account ${name} changed while its run was in flight; the run resumes with its new settings`,
    );
  }
}
