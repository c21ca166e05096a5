import {
  type AccountSettingsChange,
  DEPLOYMENT_DEFAULT,
  parseAccountSettings,
} from '../../config/account-settings.js';
import { UsageError } from '../../errors.js';
import { RESOURCE_NAMES } from '../../resources/index.js';
import type { OptionTable } from '../options.js';

/** The options of `accounts add` and `accounts update` that set an account's own settings. */
export const settingsOptions = {
  resources: {
    type: 'string',
    value: 'LIST',
    description: `the resources this account syncs, comma-separated, instead of HIRESYNC_RESOURCES (read as it is: the built-in ones, the sets @default (the built-in ones) and @analytics (the lists the analytics views read), or any list resource of the API, at /v3/NAME unless HIRESYNC_RESOURCE_PATHS gives its path; e.g. @default,@analytics); '${DEPLOYMENT_DEFAULT}': the deployment's`,
  },
  'incremental-every': {
    type: 'string',
    value: 'D',
    description: `time between its scheduled incremental runs (such as 5m or 1h), instead of HIRESYNC_INCREMENTAL_EVERY; '${DEPLOYMENT_DEFAULT}': the deployment's`,
  },
  'full-cron': {
    type: 'string',
    value: 'CRON',
    description: `when its full runs are scheduled (five-field cron, such as "0 4 * * 0"), instead of HIRESYNC_FULL_CRON; '${DEPLOYMENT_DEFAULT}': the deployment's`,
  },
} as const satisfies OptionTable;

/**
 * The settings change the options ask for (only what is given), each read as
 * its variable is; a bad value is a usage error (exit 2), found before
 * anything connects.
 */
export function readSettingsOptions(values: {
  resources?: string | undefined;
  'incremental-every'?: string | undefined;
  'full-cron'?: string | undefined;
}): AccountSettingsChange {
  const { change, problems } = parseAccountSettings(
    {
      resources: values.resources,
      incrementalEvery: values['incremental-every'],
      fullCron: values['full-cron'],
    },
    RESOURCE_NAMES,
  );
  if (problems.length > 0) {
    throw new UsageError(problems.map((p) => `${p.variable}: ${p.message}`).join('; '));
  }
  return change;
}

/** The resources `change` gives the account beyond the declared ones: list resources whose tables go in its schema. */
export function ownListResources(change: AccountSettingsChange): string[] {
  return (change.resources ?? []).filter((name) => !RESOURCE_NAMES.includes(name));
}
