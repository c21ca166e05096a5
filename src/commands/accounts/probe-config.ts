import { DEFAULT_ACCOUNT } from '../../account-name.js';
import { apiProfileOf } from '../../config/live-defaults.js';
import { DEFAULT_CREDENTIAL_VARIABLES, loadConfig } from '../../config/load-config.js';
import type { Config, Env } from '../../config/types.js';
import { RESOURCE_NAMES } from '../../resources/index.js';

/** The variables of the environment's own credentials (account `default`) and its URLs. */
const ENVIRONMENT_CREDENTIALS: ReadonlySet<string> = new Set(DEFAULT_CREDENTIAL_VARIABLES);

/**
 * The configuration a test of `account` runs with (`accounts test`, `accounts
 * add`): what `sync` reads (REDIS_URL, the API's settings, HIRESYNC_RESOURCES…),
 * every problem a ConfigError. A registered account brings its own
 * credentials and URLs, so the environment's (`default`'s) are neither
 * required nor checked for it: they are left out (the configuration then has
 * no account `default`), and HIRESYNC_BASE_URL, which only `default` and new
 * accounts' defaults use, gets a stand-in nothing reads. The deployment's
 * profile (HIRESYNC_API, or its default by HIRESYNC_BASE_URL) is kept, so the
 * test reads each resource as `sync` would.
 */
export function loadProbeConfig(env: Env, account: string): Config {
  if (account === DEFAULT_ACCOUNT) return loadConfig(env, RESOURCE_NAMES);
  const own = Object.entries(env).filter(([name]) => !ENVIRONMENT_CREDENTIALS.has(name));
  return loadConfig(
    {
      ...Object.fromEntries(own),
      HIRESYNC_BASE_URL: 'http://127.0.0.1',
      HIRESYNC_API: (env.HIRESYNC_API ?? '').trim() || apiProfileOf(env).profile,
    },
    RESOURCE_NAMES,
  );
}
