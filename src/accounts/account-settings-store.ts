import { type ColumnType, type Generated, type Kysely, sql } from 'kysely';
import type { AccountSettings, AccountSettingsChange } from '../config/account-settings.js';
import type { Database } from '../warehouse/tables.js';
import { isUndefinedTable, UnknownAccountError, undefinedWithoutTable } from './stored-account.js';

/** A row of hiresync.account_settings (migrations/hiresync/0006_account_settings.ts). */
interface AccountSettingsTable {
  account: string;
  resources: string[] | null;
  /** bigint: pg returns it as text. */
  incremental_every_ms: ColumnType<string | null, number | null, number | null>;
  full_cron: string | null;
  updated_at: Generated<string>;
}

/** The table, named with its schema (withTables wants an index signature, which an interface lacks). */
type AccountSettingsTables = { 'hiresync.account_settings': AccountSettingsTable };

function settingsOf(row: {
  resources: string[] | null;
  incremental_every_ms: string | null;
  full_cron: string | null;
}): AccountSettings {
  return {
    resources:
      row.resources === null
        ? undefined
        : (row.resources as NonNullable<AccountSettings['resources']>),
    incrementalEveryMs:
      row.incremental_every_ms === null ? undefined : Number(row.incremental_every_ms),
    fullCron: row.full_cron ?? undefined,
  };
}

/**
 * The settings of registered accounts that override the deployment's
 * (hiresync.account_settings): resources, incremental interval, full cron.
 * Apart from hiresync.accounts, so that a change does not bump an account's
 * version and stop its runs in flight. None before `migrate` made the table.
 */
export class AccountSettingsStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Every account's own settings, by name; accounts with none are absent. */
  async all(): Promise<Map<string, AccountSettings>> {
    try {
      const rows = await this.#db
        .withTables<AccountSettingsTables>()
        .selectFrom('hiresync.account_settings')
        .select(['account', 'resources', 'incremental_every_ms', 'full_cron'])
        .execute();
      return new Map(rows.map((r) => [r.account, settingsOf(r)]));
    } catch (error) {
      if (isUndefinedTable(error)) return new Map();
      throw error;
    }
  }

  /** One account's own settings (its row alone is read); undefined when it has none. */
  async get(account: string): Promise<AccountSettings | undefined> {
    const row = await this.#db
      .withTables<AccountSettingsTables>()
      .selectFrom('hiresync.account_settings')
      .select(['resources', 'incremental_every_ms', 'full_cron'])
      .where('account', '=', account)
      .executeTakeFirst()
      .catch(undefinedWithoutTable);
    return row && settingsOf(row);
  }

  /**
   * Applies `change` to the settings of the registered account `account`
   * (`db`: the store's pool, or a transaction), and returns them. Throws
   * UnknownAccountError when no account has the name.
   */
  async set(
    account: string,
    change: AccountSettingsChange,
    db: Kysely<Database> = this.#db,
  ): Promise<AccountSettings> {
    const values: {
      resources?: string[] | null;
      incremental_every_ms?: number | null;
      full_cron?: string | null;
    } = {};
    if (change.resources !== undefined)
      values.resources = change.resources && [...change.resources];
    if (change.incrementalEveryMs !== undefined)
      values.incremental_every_ms = change.incrementalEveryMs;
    if (change.fullCron !== undefined) values.full_cron = change.fullCron;
    const known = await db
      .selectFrom('hiresync.accounts')
      .select('name')
      .where('name', '=', account)
      .executeTakeFirst();
    if (!known) throw new UnknownAccountError(account);
    const row = await db
      .withTables<AccountSettingsTables>()
      .insertInto('hiresync.account_settings')
      .values({ account, resources: null, incremental_every_ms: null, full_cron: null, ...values })
      .onConflict((oc) =>
        oc
          .column('account')
          .doUpdateSet(
            Object.keys(values).length === 0
              ? { account }
              : { ...values, updated_at: sql<string>`now()` },
          ),
      )
      .returning(['resources', 'incremental_every_ms', 'full_cron'])
      .executeTakeFirstOrThrow();
    return settingsOf(row);
  }
}
