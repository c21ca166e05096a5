import { type AccountSettings, effectiveSettings } from '../config/account-settings.js';
import type { Config } from '../config/types.js';
import type { ScheduleTarget } from './upsert-schedules.js';

/**
 * The (account, resource) pairs of `accounts`, each account with its own
 * resources, interval and cron where its settings (`settings`, by account)
 * name them, else the deployment's (`config`: HIRESYNC_RESOURCES,
 * HIRESYNC_INCREMENTAL_EVERY, HIRESYNC_FULL_CRON): what `worker` schedules and
 * resumes and what `sync` runs without --resource.
 */
export function accountTargets(
  accounts: readonly string[],
  settings: ReadonlyMap<string, AccountSettings>,
  config: Pick<Config, 'resources' | 'incrementalEveryMs' | 'fullCron'>,
): ScheduleTarget[] {
  return accounts.flatMap((account) => {
    const own = effectiveSettings(config, settings.get(account));
    return own.resources.map((resource) => ({
      account,
      resource,
      incrementalEveryMs: own.incrementalEveryMs,
      fullCron: own.fullCron,
    }));
  });
}
