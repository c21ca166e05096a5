import type { Kysely } from 'kysely';
import type { CredentialRefusals } from '../api/credential-refusal.js';
import type { Database } from '../warehouse/tables.js';

/**
 * Where the token endpoint's refusal of registered account `name`'s
 * credential is recorded: the account, as `registration` (its row when it was
 * resolved) found it, goes from `enabled` to `credentials_refused` with the
 * reason. A row changed since (a new secret stored by `accounts update`, the
 * account disabled, removed and added again) is left alone: the refusal was
 * of a credential no longer in force, or the operator has decided.
 */
export function credentialRefusals(
  db: Kysely<Database>,
  name: string,
  registration: { created_at: string; version: string },
): CredentialRefusals {
  return {
    async refused(reason: string): Promise<void> {
      await db
        .updateTable('hiresync.accounts')
        .set({ state: 'credentials_refused', refusal_reason: reason })
        .where('name', '=', name)
        .where('state', '=', 'enabled')
        .where('created_at', '=', registration.created_at)
        .where('version', '=', registration.version)
        .execute();
    },
  };
}
