/**
 * The URLs of registered accounts (`accounts add`, `authorize`, `invite`,
 * `update`), read from flags or the environment under the rule of
 * HIRESYNC_BASE_URL.
 */
import { ConfigError, type ConfigProblem } from '../errors.js';
import { apiUrl } from './fields.js';
import { defaultAuthUrlFor, LIVE_AUTH_URL, LIVE_BASE_URL } from './live-defaults.js';

/** Why an account's token service must be named: its base URL is another API's. */
const ACCOUNT_AUTH_URL_REQUIRED =
  "is required when the account's base URL is not the live service's: name that API's token service (the live one is used only with the live API)";

import type { Env } from './types.js';

/**
 * The URLs of an account being added: `flags` when given, else
 * HIRESYNC_BASE_URL and HIRESYNC_AUTH_URL, else the live service's (as the
 * deployment's own default; the live token service only for the live API), under the rules of those variables (https unless
 * loopback; no query, fragment or credentials); the live token service of
 * HIRESYNC_AUTH_URL only for the live API or HIRESYNC_BASE_URL's, never for
 * another API of --base-url (credentials meant for it would reach the live
 * service): then --auth-url is required. `authUrl` is read when
 * `needsAuthUrl`. Problems name the flag or variable the value came from, all
 * at once, as a ConfigError.
 */
export function loadAccountUrls(
  env: Env,
  flags: { baseUrl: string | undefined; authUrl: string | undefined },
  needsAuthUrl: boolean,
): { baseUrl: string; authUrl: string | undefined } {
  const problems: ConfigProblem[] = [];
  const read = (flag: string, value: string | undefined, variable: string, live?: string) => {
    const [source, text] =
      value !== undefined ? [flag, value] : [variable, (env[variable] ?? '').trim() || live];
    if (text === undefined) {
      problems.push({ variable: `${flag} or ${variable}`, message: ACCOUNT_AUTH_URL_REQUIRED });
      return undefined;
    }
    const result = apiUrl(source).safeParse(text);
    if (result.success) return result.data;
    problems.push(...result.error.issues.map((i) => ({ variable: source, message: i.message })));
    return undefined;
  };
  const baseUrl = read('--base-url', flags.baseUrl, 'HIRESYNC_BASE_URL', LIVE_BASE_URL);
  let authUrl = needsAuthUrl
    ? read('--auth-url', flags.authUrl, 'HIRESYNC_AUTH_URL', defaultAuthUrlFor(baseUrl))
    : undefined;
  // HIRESYNC_AUTH_URL goes with HIRESYNC_BASE_URL: the live token service it names is
  // taken for the live API or that base URL, never for another API given with --base-url.
  if (
    flags.authUrl === undefined &&
    authUrl === LIVE_AUTH_URL &&
    baseUrl !== undefined &&
    defaultAuthUrlFor(baseUrl) !== LIVE_AUTH_URL &&
    baseUrl !== apiUrl('HIRESYNC_BASE_URL').safeParse(env.HIRESYNC_BASE_URL ?? '').data
  ) {
    problems.push({
      variable: '--auth-url or HIRESYNC_AUTH_URL',
      message: ACCOUNT_AUTH_URL_REQUIRED,
    });
    authUrl = undefined;
  }
  if (problems.length > 0 || baseUrl === undefined) throw new ConfigError(problems);
  return { baseUrl, authUrl };
}

/**
 * Validates a URL given with `flag` (`--base-url`, `--auth-url` of `accounts
 * update`) by the rule of HIRESYNC_BASE_URL: https unless loopback, no query,
 * fragment or credentials. Returns it without a trailing slash; throws a
 * ConfigError naming the flag.
 */
export function parseAccountUrl(flag: string, text: string): string {
  const result = apiUrl(flag).safeParse(text);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((i) => ({ variable: flag, message: i.message })));
}
