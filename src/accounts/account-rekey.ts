/**
 * `accounts rekey`: every credential of the registered accounts (their
 * secrets, partner accounts' refresh tokens and webhook secrets) sealed
 * again with the first key of HIRESYNC_SECRET_KEY, all or none.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../warehouse/schema.js';
import { secretPurpose } from './account-credentials.js';
import { type RefreshTokenTables, refreshTokenPurpose } from './refresh-token-vault.js';
import type { SecretBox } from './secret-box.js';
import { rekeyWebhookSecrets } from './webhook-secrets.js';

/** What {@link AccountStore.rekey} did. */
export interface RekeyOutcome {
  /** Secrets sealed again with the first key of HIRESYNC_SECRET_KEY. */
  resealed: number;
  /** Secrets already sealed with it, left alone. */
  current: number;
}

/**
 * Seals again with `box`'s first key, in one transaction, every secret,
 * refresh token and webhook secret sealed with another: all or none (a
 * secret no key opens throws SecretKeyError and changes nothing).
 */
export async function resealAccounts(
  db: Kysely<Database & RefreshTokenTables>,
  box: SecretBox,
): Promise<RekeyOutcome> {
  return db.transaction().execute(async (trx) => {
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
    const tokens = await rekeyRefreshTokens(trx, box);
    const webhooks = await rekeyWebhookSecrets(trx, box);
    return {
      resealed: resealed + tokens.resealed + webhooks.resealed,
      current: rows.length - resealed + tokens.current + webhooks.current,
    };
  });
}

/** Re-seals, in `trx`, every refresh token sealed with a key other than the first. */
async function rekeyRefreshTokens(
  trx: Transaction<Database & RefreshTokenTables>,
  box: SecretBox,
): Promise<RekeyOutcome> {
  const { rows: present } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.refresh_tokens') is not null as present`.execute(trx);
  if (!present[0]?.present) return { resealed: 0, current: 0 };
  const rows = await trx
    .selectFrom('hiresync.refresh_tokens')
    .select(['account', 'token'])
    .orderBy('account')
    .forUpdate()
    .execute();
  let resealed = 0;
  for (const { account, token } of rows) {
    if (box.isCurrent(token)) continue;
    const purpose = refreshTokenPurpose(account);
    await trx
      .updateTable('hiresync.refresh_tokens')
      .set({ token: box.seal(box.open(token, purpose), purpose) })
      .where('account', '=', account)
      .execute();
    resealed += 1;
  }
  return { resealed, current: rows.length - resealed };
}
