/**
 * The live service by default: the one place that says what an unset
 * HIRESYNC_BASE_URL, HIRESYNC_AUTH_URL and HIRESYNC_API mean. Every loader
 * reads the environment through {@link withLiveDefaults}, so a variable set
 * keeps its meaning and a variable left unset (or empty) takes the default.
 */
import type { ConfigProblem } from '../errors.js';
import type { Env } from './types.js';

/** The live service's API (Harvest v3): its lists are at /v3/NAME. */
export const LIVE_BASE_URL = 'https://harvest.greenhouse.io';

/** The live service's token service: /token, and /authorize for partner apps. */
export const LIVE_AUTH_URL = 'https://auth.greenhouse.io';

/**
 * `HIRESYNC_API`: the profile whose recommended settings are the defaults.
 * `v3`, the live service's; `spec`, none (as before the profile existed).
 */
export const API_PROFILES = ['v3', 'spec'] as const;
export type ApiProfile = (typeof API_PROFILES)[number];

/**
 * The live service's recommended settings (docs/live-service-v3.md, "What to
 * set"): the defaults of these variables under the profile `v3`. The
 * reference lists that name tracking links are already HIRESYNC_RESOURCES'
 * default under either profile.
 */
export const LIVE_RECOMMENDED: Readonly<Record<string, string>> = Object.freeze({
  // Incremental runs read the records updated since the last success.
  HIRESYNC_UPDATED_FILTER: 'updated_at=gte|{since}',
  // Inactive job posts are hidden from a plain walk: a full run would soft-delete them.
  HIRESYNC_EXTRA_WALKS: 'job_posts?active=false',
});

const isUnset = (env: Env, name: string) => (env[name] ?? '').trim() === '';

/**
 * The token service that goes with the API at `baseUrl` when none is given:
 * the live service's for the live API (or an unset base URL), and none for
 * any other API, so that credentials meant for a proxy or a simulator are
 * never sent to the live token service. Callers then require the setting.
 */
export function defaultAuthUrlFor(baseUrl: string | undefined): string | undefined {
  const text = (baseUrl ?? '').trim().replace(/\/+$/, '');
  return text === '' || text.toLowerCase() === LIVE_BASE_URL ? LIVE_AUTH_URL : undefined;
}

/**
 * The profile `env` names in HIRESYNC_API, or its default: `v3` when
 * HIRESYNC_BASE_URL is unset (the live service), `spec` when it is set (an
 * API of the spec's shapes, as every deployment that set it before). A value
 * that is neither is a problem naming the variable.
 */
export function apiProfileOf(env: Env): { profile: ApiProfile; problem?: ConfigProblem } {
  const text = (env.HIRESYNC_API ?? '').trim().toLowerCase();
  const fallback: ApiProfile = isUnset(env, 'HIRESYNC_BASE_URL') ? 'v3' : 'spec';
  if (text === '') return { profile: fallback };
  if ((API_PROFILES as readonly string[]).includes(text)) return { profile: text as ApiProfile };
  return {
    profile: fallback,
    problem: {
      variable: 'HIRESYNC_API',
      message: `must be v3 (the live service's recommended settings as defaults) or spec (none), got ${JSON.stringify(env.HIRESYNC_API)}`,
    },
  };
}

/**
 * `env` with the live service's defaults filled in where it leaves a
 * variable unset or empty: HIRESYNC_BASE_URL always, HIRESYNC_AUTH_URL when
 * the base URL is the live service's ({@link defaultAuthUrlFor}),
 * and under the profile `v3` ({@link apiProfileOf}) the variables of
 * {@link LIVE_RECOMMENDED}. HIRESYNC_API is then the profile in force.
 * `problems` holds a bad HIRESYNC_API.
 */
export function withLiveDefaults(env: Env): { env: Env; problems: ConfigProblem[] } {
  const { profile, problem } = apiProfileOf(env);
  const authUrl = defaultAuthUrlFor(env.HIRESYNC_BASE_URL);
  const defaults: Record<string, string> = {
    HIRESYNC_BASE_URL: LIVE_BASE_URL,
    ...(authUrl === undefined ? {} : { HIRESYNC_AUTH_URL: authUrl }),
    ...(profile === 'v3' ? LIVE_RECOMMENDED : {}),
  };
  const filled: Record<string, string | undefined> = { ...env, HIRESYNC_API: profile };
  for (const [name, value] of Object.entries(defaults)) {
    if (isUnset(env, name)) filled[name] = value;
  }
  return { env: Object.freeze(filled), problems: problem ? [problem] : [] };
}

/** Why a token service must be named: the base URL is another API's. */
export const AUTH_URL_REQUIRED =
  "is required with client credentials when HIRESYNC_BASE_URL is not the live service's: name that API's token service (the live one, https://auth.greenhouse.io, is used only with the live API)";
