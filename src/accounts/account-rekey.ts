/**
 * `accounts rekey`: every credential of the registered accounts (their
 * secrets, partner accounts' refresh tokens and webhook secrets) sealed
 * again with the first key of HIRESYNC_SECRET_KEY, all or none.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../warehouse/tables.js';
import { secretPurpose } from './account-credentials.js';
import { refreshTokenPurpose } from './refresh-token-vault.js';
import type { SecretBox } from './secret-box.js';
import { webhookSecretPurpose } from './webhook-secrets.js';

/** What {@link AccountStore.rekey} did. */
export interface RekeyOutcome {
  /** Secrets sealed again with the first key of HIRESYNC_SECRET_KEY. */
  resealed: number;
  /** Secrets already sealed with it, left alone. */
  current: number;
}

/** A column of sealed credentials, one per key value, and the purpose each was sealed for. */
interface SealedColumn {
  /** Schema-qualified table. */
  table: string;
  /** The column naming the account. */
  key: string;
  /** The sealed column (rows where it is null are skipped). */
  column: string;
  purposeOf: (account: string) => string;
  /** A timestamp column set to now() on a re-sealed row, if the table keeps one. */
  touch?: string;
  /** A table a later migration makes: absent before it, and then nothing to re-seal. */
  madeLater?: boolean;
}

/** The credentials `accounts rekey` seals again. */
const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'hiresync.accounts', key: 'name', column: 'secret', purposeOf: secretPurpose },
  {
    table: 'hiresync.refresh_tokens',
    key: 'account',
    column: 'token',
    purposeOf: refreshTokenPurpose,
    madeLater: true,
  },
  {
    table: 'hiresync.webhook_secrets',
    key: 'account',
    column: 'secret',
    purposeOf: webhookSecretPurpose,
    touch: 'updated_at',
    madeLater: true,
  },
];

/**
 * Seals again with `box`'s first key, in one transaction, every secret,
 * refresh token and webhook secret sealed with another: all or none (a
 * secret no key opens throws SecretKeyError and changes nothing).
 */
export async function resealAccounts(db: Kysely<Database>, box: SecretBox): Promise<RekeyOutcome> {
  return db.transaction().execute(async (trx) => {
    const outcome: RekeyOutcome = { resealed: 0, current: 0 };
    for (const sealed of SEALED_COLUMNS) {
      const { resealed, current } = await reseal(trx, box, sealed);
      outcome.resealed += resealed;
      outcome.current += current;
    }
    return outcome;
  });
}

/** Re-seals, in `trx`, the values of one column sealed with a key other than the first. */
async function reseal(
  trx: Transaction<Database>,
  box: SecretBox,
  c: SealedColumn,
): Promise<RekeyOutcome> {
  if (c.madeLater) {
    const { rows } = await sql<{ present: boolean }>`
      select to_regclass(${c.table}) is not null as present`.execute(trx);
    if (!rows[0]?.present) return { resealed: 0, current: 0 };
  }
  const { rows } = await sql<{ account: string; sealed: string }>`
    select ${sql.ref(c.key)} as account, ${sql.ref(c.column)} as sealed from ${sql.table(c.table)}
    where ${sql.ref(c.column)} is not null order by 1 for update`.execute(trx);
  let resealed = 0;
  for (const { account, sealed } of rows) {
    if (box.isCurrent(sealed)) continue;
    const purpose = c.purposeOf(account);
    const again = box.seal(box.open(sealed, purpose), purpose);
    const touched = c.touch ? sql`, ${sql.ref(c.touch)} = now()` : sql``;
    await sql`update ${sql.table(c.table)} set ${sql.ref(c.column)} = ${again}${touched}
      where ${sql.ref(c.key)} = ${account}`.execute(trx);
    resealed += 1;
  }
  return { resealed, current: rows.length - resealed };
}
