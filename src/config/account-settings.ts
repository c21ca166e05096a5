/**
 * Per-account settings (`accounts add|update NAME --resources LIST
 * --incremental-every D --full-cron CRON`): what overrides HIRESYNC_RESOURCES,
 * HIRESYNC_INCREMENTAL_EVERY and HIRESYNC_FULL_CRON for one account, read by
 * the very fields that read those variables, and the settings an account runs
 * with once the deployment's fill what it does not override.
 */
import type { ConfigProblem } from '../errors.js';
import type { ResourceName } from '../sync/ports.js';
import { formatDuration } from './fields.js';
import { resourceList } from './resource-names.js';
import type { Config } from './types.js';
import { fullFields } from './variables.js';

/** An account's own settings; undefined: the deployment's. */
export interface AccountSettings {
  resources?: readonly ResourceName[] | undefined;
  incrementalEveryMs?: number | undefined;
  fullCron?: string | undefined;
}

/**
 * A change of an account's settings, one per option given: a value, `null`
 * (the option's value `default`: back to the deployment's), or undefined
 * (not given: unchanged).
 */
export interface AccountSettingsChange {
  resources?: readonly ResourceName[] | null | undefined;
  incrementalEveryMs?: number | null | undefined;
  fullCron?: string | null | undefined;
}

/** The option values as typed: `--resources`, `--incremental-every`, `--full-cron`. */
export interface AccountSettingsOptions {
  resources?: string | undefined;
  incrementalEvery?: string | undefined;
  fullCron?: string | undefined;
}

/** The value of an option that puts the deployment's setting back. */
export const DEPLOYMENT_DEFAULT = 'default';

/**
 * Reads the settings options: each as its variable is read (`known`, the
 * declared resource names, as loadConfig takes them; any other list
 * resource name, such as one HIRESYNC_RESOURCE_PATHS gives a path, is stored
 * as sent), `default` for the deployment's. Problems name the option.
 */
export function parseAccountSettings(
  options: AccountSettingsOptions,
  known: readonly ResourceName[],
): { change: AccountSettingsChange; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const change: AccountSettingsChange = {};
  const read = <T>(
    option: string,
    text: string | undefined,
    field: {
      safeParse(
        value: unknown,
      ): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } };
    },
    set: (value: T | null) => void,
  ) => {
    if (text === undefined) return;
    const trimmed = text.trim();
    if (trimmed === DEPLOYMENT_DEFAULT) return set(null);
    if (trimmed === '') {
      problems.push({
        variable: option,
        message: `was given an empty value; give one, or '${DEPLOYMENT_DEFAULT}' for the deployment's`,
      });
      return;
    }
    const parsed = field.safeParse(trimmed);
    if (parsed.success) set(parsed.data);
    else
      problems.push(...parsed.error.issues.map((i) => ({ variable: option, message: i.message })));
  };
  read('--resources', options.resources, resourceList(known), (v) => {
    change.resources = v;
  });
  read(
    '--incremental-every',
    options.incrementalEvery,
    fullFields.HIRESYNC_INCREMENTAL_EVERY,
    (v) => {
      change.incrementalEveryMs = v;
    },
  );
  read('--full-cron', options.fullCron, fullFields.HIRESYNC_FULL_CRON, (v) => {
    change.fullCron = v;
  });
  return { change, problems };
}

/** What an account runs with: its own settings, else the deployment's. */
export interface EffectiveSettings {
  resources: readonly ResourceName[];
  incrementalEveryMs: number;
  fullCron: string;
}

/** The settings `account` runs with: its own where it has them, else the deployment's (`config`). */
export function effectiveSettings(
  config: Pick<Config, 'resources' | 'incrementalEveryMs' | 'fullCron'>,
  own: AccountSettings | undefined,
): EffectiveSettings {
  return {
    resources: own?.resources ?? config.resources,
    incrementalEveryMs: own?.incrementalEveryMs ?? config.incrementalEveryMs,
    fullCron: own?.fullCron ?? config.fullCron,
  };
}

/** The three settings as `accounts list` shows them: `-` where the account has the deployment's. */
export function describeAccountSettings(own: AccountSettings | undefined): {
  resources: string;
  incrementalEvery: string;
  fullCron: string;
} {
  return {
    resources: own?.resources?.join(',') ?? '-',
    incrementalEvery:
      own?.incrementalEveryMs === undefined ? '-' : formatDuration(own.incrementalEveryMs),
    fullCron: own?.fullCron ?? '-',
  };
}

/** Whether `change` changes anything. */
export function changesSettings(change: AccountSettingsChange): boolean {
  return (
    change.resources !== undefined ||
    change.incrementalEveryMs !== undefined ||
    change.fullCron !== undefined
  );
}
