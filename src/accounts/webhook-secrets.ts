/**
 * The webhook secrets of registered accounts, sealed in
 * `hiresync.webhook_secrets` (migrations/hiresync/0011_webhook_secrets.ts):
 * the key the vendor signs each delivery to `POST …/webhooks/<account>` with.
 * Apart from hiresync.accounts, so that setting one does not bump the
 * account's version (which would stop its runs in flight).
 */
import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { SecretKeys } from '../config/secret-keys.js';
import { webhookSecretProblem } from '../config/webhook-secret.js';
import { ConfigError, HiresyncError } from '../errors.js';
import { Secret } from '../secret.js';
import type { Database } from '../warehouse/tables.js';
import { SecretBox } from './secret-box.js';
import {
  isUndefinedTable,
  type StoredAccountState,
  UnknownAccountError,
  undefinedWithoutTable,
} from './stored-account.js';

/** A row of hiresync.webhook_secrets. */
interface WebhookSecretsTable {
  account: string;
  /** Sealed by SecretBox (`hs1.…`) for {@link webhookSecretPurpose}; never plaintext. */
  secret: string;
  updated_at: string;
}

/** The table, named with its schema (withTables wants an index signature, which an interface lacks). */
type WebhookSecretTables = { 'hiresync.webhook_secrets': WebhookSecretsTable };

/** The purpose a registered account's webhook secret is sealed for: it opens in no other row. */
export function webhookSecretPurpose(account: string): string {
  return `account:${account}:webhook_secret`;
}

/** What {@link WebhookSecretStore.lookup} finds of a registered account. */
export interface WebhookAccountRow {
  state: StoredAccountState;
  /** Its webhook secret, opened; undefined when it has none. */
  secret: Secret | undefined;
}

/**
 * Reads and writes the webhook secrets of registered accounts. Sealing and
 * opening need `keys` (HIRESYNC_SECRET_KEY); listing and removing do not.
 */
export class WebhookSecretStore {
  readonly #db: Kysely<Database & WebhookSecretTables>;
  readonly #box: SecretBox | undefined;

  constructor(db: Kysely<Database>, keys?: SecretKeys) {
    this.#db = db.withTables<WebhookSecretTables>();
    this.#box = keys === undefined ? undefined : new SecretBox(keys.reveal());
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
   * Stores `secret` as the registered account `name`'s webhook secret,
   * sealed, replacing any. Throws UnknownAccountError, a HiresyncError for a
   * secret too short, and a ConfigError without HIRESYNC_SECRET_KEY.
   */
  async set(name: string, secret: Secret): Promise<void> {
    const problem = webhookSecretProblem(secret.reveal());
    if (problem) throw new HiresyncError(problem);
    const box = this.#requireBox('seal the webhook secret of an account');
    const sealed = box.seal(secret.reveal(), webhookSecretPurpose(name));
    await this.#db.transaction().execute(async (trx) => {
      await this.#assertRegistered(trx, name);
      await trx
        .insertInto('hiresync.webhook_secrets')
        .values({ account: name, secret: sealed, updated_at: sql<string>`now()` })
        .onConflict((oc) =>
          oc.column('account').doUpdateSet({ secret: sealed, updated_at: sql<string>`now()` }),
        )
        .execute();
    });
  }

  /**
   * Removes the registered account `name`'s webhook secret: its deliveries
   * are refused from then on. Resolves false when it had none. Throws
   * UnknownAccountError.
   */
  async remove(name: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      await this.#assertRegistered(trx, name);
      const removed = await trx
        .deleteFrom('hiresync.webhook_secrets')
        .where('account', '=', name)
        .executeTakeFirst();
      return Number(removed.numDeletedRows) > 0;
    });
  }

  async #assertRegistered(trx: Transaction<Database>, name: string): Promise<void> {
    const row = await trx
      .selectFrom('hiresync.accounts')
      .select('name')
      .where('name', '=', name)
      .forShare()
      .executeTakeFirst();
    if (!row) throw new UnknownAccountError(name);
  }

  /** The registered accounts that have a webhook secret, sorted; none before `migrate` made the table. */
  async names(): Promise<string[]> {
    try {
      const rows = await this.#db
        .selectFrom('hiresync.webhook_secrets')
        .select('account')
        .orderBy('account')
        .execute();
      return rows.map((r) => r.account);
    } catch (error) {
      if (isUndefinedTable(error)) return [];
      throw error;
    }
  }

  /**
   * The registered account `name`'s state and webhook secret (opened), in
   * one statement; undefined when no such account is registered. Throws
   * SecretKeyError when the secret does not open, and a ConfigError when
   * the account has one but no HIRESYNC_SECRET_KEY is configured.
   */
  async lookup(name: string): Promise<WebhookAccountRow | undefined> {
    const row = await this.#db
      .selectFrom('hiresync.accounts as a')
      .leftJoin('hiresync.webhook_secrets as w', 'w.account', 'a.name')
      .select(['a.state', 'w.secret'])
      .where('a.name', '=', name)
      .executeTakeFirst()
      .catch(undefinedWithoutTable);
    if (!row) return undefined;
    if (row.secret === null) return { state: row.state, secret: undefined };
    const box = this.#requireBox('open the webhook secrets of registered accounts');
    return {
      state: row.state,
      secret: new Secret(box.open(row.secret, webhookSecretPurpose(name))),
    };
  }
}
