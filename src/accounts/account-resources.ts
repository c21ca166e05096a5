import type { Kysely } from 'kysely';
import { effectiveSettings } from '../config/account-settings.js';
import type { Config } from '../config/types.js';
import type { Database } from '../warehouse/tables.js';
import type { Account } from './account.js';
import { AccountSettingsStore } from './account-settings-store.js';

/**
 * The resources account `account` syncs, as `accounts test` (and `accounts
 * add`'s test) reads a page of each: its own (`accounts add|update
 * --resources`), else HIRESYNC_RESOURCES.
 */
export async function accountResources(
  db: Kysely<Database>,
  config: Pick<Config, 'resources' | 'incrementalEveryMs' | 'fullCron'>,
  account: Pick<Account, 'name'>,
): Promise<Config['resources']> {
  const own = await new AccountSettingsStore(db).get(account.name);
  return effectiveSettings(config, own).resources;
}
