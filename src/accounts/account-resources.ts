import type { Config } from '../config/types.js';
import type { Account } from './account.js';

/**
 * The resources account `account` syncs, as `accounts test` (and `accounts
 * add`'s test) reads a page of each: HIRESYNC_RESOURCES for every account
 * today. The one place to read an account's own resources from once it has some.
 */
export function accountResources(
  config: Pick<Config, 'resources'>,
  _account: Pick<Account, 'name'>,
): Config['resources'] {
  return config.resources;
}
