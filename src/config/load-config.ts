/**
 * The loaders of hiresync's configuration, one per command: each reads the variables its command
 * needs (variables.ts), collects every problem into one ConfigError, returns a frozen Config.
 */
import { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../errors.js';
import { Secret } from '../secret.js';
import type { ResourceName } from '../sync/ports.js';
import { recordPolicyOf } from './field-policy-env.js';
import { apiUrl } from './fields.js';
import { readListeners } from './listeners.js';
import { AUTH_URL_REQUIRED, withLiveDefaults } from './live-defaults.js';
import { readPartner } from './partner.js';
import { readPublicUrl } from './public-url.js';
import { readRedis, readRedisPrefix } from './redis-settings.js';
import { resourceList, resourceNameProblem } from './resource-names.js';
import type {
  AccountsConfig,
  ApiConfig,
  AuthConfig,
  Config,
  DatabaseConfig,
  DemoConfig,
  Env,
  MigrateConfig,
  RedisSettings,
  StatusConfig,
} from './types.js';
import { databaseFields, fullFields, logSettings, secretKeys, statusFields } from './variables.js';

export type { ResourceName } from '../sync/ports.js';
export { recordPolicyOf } from './field-policy-env.js';

function problemsOf(error: z.ZodError): ConfigProblem[] {
  return error.issues.map((issue) => ({
    variable: String(issue.path[0] ?? 'environment'),
    message: issue.message,
  }));
}

function parseOrThrow<S extends z.ZodRawShape>(shape: S, env: Env) {
  const result = z.object(shape).safeParse(env);
  if (!result.success) throw new ConfigError(problemsOf(result.error));
  return result.data;
}

/** Configuration of `hiresync migrate`: only DATABASE_URL. */
export function loadDatabaseConfig(env: Env): DatabaseConfig {
  const v = parseOrThrow(databaseFields, env);
  return Object.freeze({ databaseUrl: v.DATABASE_URL, ...logSettings(v) });
}

/**
 * Configuration of `hiresync migrate`: DATABASE_URL, and HIRESYNC_RESOURCES
 * when set. `known` lists the declared resource names (the caller's catalog).
 */
export function loadMigrateConfig(env: Env, known: readonly ResourceName[]): MigrateConfig {
  const v = parseOrThrow({ ...databaseFields, HIRESYNC_RESOURCES: resourceList(known) }, env);
  return Object.freeze({
    databaseUrl: v.DATABASE_URL,
    ...logSettings(v),
    resources: Object.freeze(v.HIRESYNC_RESOURCES),
  });
}

/**
 * Configuration of `hiresync status`: DATABASE_URL and REDIS_URL, and
 * HIRESYNC_RESOURCES (what an account without its own syncs). `known` lists
 * the declared resource names (the caller's catalog).
 */
export function loadStatusConfig(env: Env, known: readonly ResourceName[]): StatusConfig {
  const parsed = z
    .object({ ...statusFields, HIRESYNC_RESOURCES: resourceList(known) })
    .safeParse(env);
  const { settings, problems } = readRedis(env);
  if (!parsed.success) problems.unshift(...problemsOf(parsed.error));
  if (!parsed.success || !settings || problems.length > 0) throw new ConfigError(problems);
  const v = parsed.data;
  return Object.freeze({
    databaseUrl: v.DATABASE_URL,
    ...settings,
    secretKeys: v.HIRESYNC_SECRET_KEY,
    ...logSettings(v),
    updatedLookbackMs: v.HIRESYNC_UPDATED_LOOKBACK,
    defaultAuthMode: defaultAuthModeOf(env),
    resources: Object.freeze(v.HIRESYNC_RESOURCES),
  });
}

/**
 * Configuration of `hiresync demo`: `DATABASE_URL` and `REDIS_URL`, taken
 * as given, or undefined when unset (empty counts as unset): the demo then
 * looks for the machine's own services, and else starts its own
 * (commands/demo-services.ts).
 */
export function loadDemoConfig(env: Env): DemoConfig {
  return Object.freeze({
    adminUrl: env.DATABASE_URL?.trim() || undefined,
    redisUrl: env.REDIS_URL?.trim() || undefined,
  });
}

/**
 * Reads and validates the whole configuration of `sync` and `worker`. Every
 * problem is collected and thrown at once as a ConfigError naming each variable.
 * The environment's own credentials (account `default`) are optional; without
 * them HIRESYNC_SECRET_KEY is required, as only registered and partner
 * accounts, whose credentials it seals, could run.
 * `known` lists the declared resource names, which `HIRESYNC_RESOURCES`
 * defaults to (the caller's catalog: the built-in resources' RESOURCE_NAMES,
 * plus any a test declares). The variables left unset take the live
 * service's defaults first (src/config/live-defaults.ts).
 */
export function loadConfig(given: Env, known: readonly ResourceName[]): Config {
  const { env, problems: profileProblems } = withLiveDefaults(given);
  const parsed = z
    .object({ ...fullFields, HIRESYNC_RESOURCES: resourceList(known) })
    .safeParse(env);
  const redis = readRedis(env);
  const problems = [
    ...profileProblems,
    ...(parsed.success ? [] : problemsOf(parsed.error)),
    ...redis.problems,
  ];
  // Cross-variable rules are checked on the raw text, so they are reported
  // alongside per-variable problems instead of after them.
  const has = (name: string) => (env[name] ?? '').trim() !== '';
  const clientCreds = has('HIRESYNC_CLIENT_ID') || has('HIRESYNC_CLIENT_SECRET');
  const apiKey = has('HIRESYNC_API_KEY');
  if (clientCreds && apiKey) {
    problems.push({
      variable: 'HIRESYNC_API_KEY',
      message: 'set either HIRESYNC_CLIENT_ID/HIRESYNC_CLIENT_SECRET or HIRESYNC_API_KEY, not both',
    });
  } else if (!clientCreds && !apiKey && !has('HIRESYNC_SECRET_KEY')) {
    // Without the environment's credentials only registered and partner
    // accounts can run, and their credentials are sealed with the secret key.
    problems.push({
      variable: 'HIRESYNC_CLIENT_ID',
      message:
        "nothing could ever be synced: set the environment's credentials (HIRESYNC_CLIENT_ID and HIRESYNC_CLIENT_SECRET, or HIRESYNC_API_KEY: account default), or HIRESYNC_SECRET_KEY to sync the accounts registered with 'hiresync accounts add' (or those a partner app, HIRESYNC_PARTNER_CLIENT_ID/HIRESYNC_PARTNER_CLIENT_SECRET, connects)",
    });
  } else if (clientCreds) {
    for (const name of ['HIRESYNC_CLIENT_ID', 'HIRESYNC_CLIENT_SECRET']) {
      if (!has(name))
        problems.push({ variable: name, message: 'is required with client credentials' });
    }
  }
  if (!clientCreds && has('HIRESYNC_SUB')) {
    problems.push({
      variable: 'HIRESYNC_SUB',
      message: apiKey
        ? 'applies only to client credentials, not HIRESYNC_API_KEY'
        : 'applies only to client credentials (HIRESYNC_CLIENT_ID and HIRESYNC_CLIENT_SECRET), which are not set',
    });
  }
  let authUrl: string | undefined;
  if (clientCreds && !has('HIRESYNC_AUTH_URL')) {
    problems.push({ variable: 'HIRESYNC_AUTH_URL', message: AUTH_URL_REQUIRED });
  } else if (clientCreds) {
    const r = apiUrl('HIRESYNC_AUTH_URL').safeParse(env.HIRESYNC_AUTH_URL);
    if (r.success) authUrl = r.data;
    else
      problems.push(
        ...r.error.issues.map((i) => ({ variable: 'HIRESYNC_AUTH_URL', message: i.message })),
      );
  }
  const { partner, problems: partnerProblems } = readPartner(env);
  problems.push(...partnerProblems);
  const { publicUrl, problems: publicUrlProblems } = readPublicUrl(env);
  problems.push(...publicUrlProblems);
  const { listeners, problems: listenerProblems } = readListeners(env);
  problems.push(...listenerProblems);
  const { fieldPolicy, problems: policyProblems } = recordPolicyOf(env, known);
  problems.push(...policyProblems);
  if (has('HIRESYNC_WEBHOOK_SECRET') && !clientCreds && !apiKey) {
    problems.push({
      variable: 'HIRESYNC_WEBHOOK_SECRET',
      message:
        "is the account default's webhook secret, but the environment sets no credentials (no account default); a registered account's is set with: hiresync accounts update NAME --webhook-secret",
    });
  }
  if (parsed.success) {
    // A path may name a resource HIRESYNC_RESOURCES does not list: the
    // accounts whose settings list it (accounts add|update --resources) read it there.
    for (const name of Object.keys(parsed.data.HIRESYNC_RESOURCE_PATHS)) {
      if (known.includes(name)) {
        problems.push({
          variable: 'HIRESYNC_RESOURCE_PATHS',
          message: `${name} is a built-in resource with a path of its own${name === 'tracking_links' ? ' (set HIRESYNC_TRACKING_LINKS_PATH)' : ''}; this variable gives the paths of other resources`,
        });
      } else {
        const problem = resourceNameProblem(name);
        if (problem) problems.push({ variable: 'HIRESYNC_RESOURCE_PATHS', message: problem });
      }
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const v = parsed.data;

  const auth: AuthConfig | undefined = clientCreds
    ? {
        mode: 'client_credentials',
        tokenUrl: `${authUrl}/token`,
        clientId: v.HIRESYNC_CLIENT_ID ?? '',
        clientSecret: new Secret(v.HIRESYNC_CLIENT_SECRET ?? ''),
        sub: v.HIRESYNC_SUB,
      }
    : apiKey
      ? {
          mode: 'api_key',
          tokenUrl: `${v.HIRESYNC_BASE_URL}/auth/token`,
          apiKey: new Secret(v.HIRESYNC_API_KEY ?? ''),
        }
      : undefined;

  return Object.freeze({
    databaseUrl: v.DATABASE_URL,
    ...(redis.settings as RedisSettings),
    secretKeys: v.HIRESYNC_SECRET_KEY,
    ...logSettings(v),
    defaultAuthMode: auth?.mode,
    runAttempts: v.HIRESYNC_RUN_ATTEMPTS,
    runBackoffMs: v.HIRESYNC_RUN_BACKOFF,
    runLockTtlMs: v.HIRESYNC_RUN_LOCK_TTL,
    api: Object.freeze({
      baseUrl: v.HIRESYNC_BASE_URL,
      auth: auth && Object.freeze(auth),
      perPage: v.HIRESYNC_PER_PAGE,
      jobsStatus: v.HIRESYNC_JOBS_STATUS,
      trackingLinksPath: v.HIRESYNC_TRACKING_LINKS_PATH,
      resourcePaths: Object.freeze(v.HIRESYNC_RESOURCE_PATHS),
      recordsKey: v.HIRESYNC_RECORDS_KEY,
      rateLimitWindowMs: v.HIRESYNC_RATE_LIMIT_WINDOW,
      rateLimitReserve: v.HIRESYNC_RATE_LIMIT_RESERVE,
      httpTimeoutMs: v.HIRESYNC_HTTP_TIMEOUT,
      maxRetries: v.HIRESYNC_MAX_RETRIES,
      maxPageBytes: v.HIRESYNC_MAX_PAGE_BYTES,
      maxRetryAfterMs: v.HIRESYNC_MAX_RETRY_AFTER,
    }),
    maxSlotWaitMs: v.HIRESYNC_MAX_SLOT_WAIT,
    maxDeleteFraction: v.HIRESYNC_MAX_DELETE_FRACTION,
    updatedFilter: v.HIRESYNC_UPDATED_FILTER,
    extraWalks: v.HIRESYNC_EXTRA_WALKS,
    resourceUpdatedFilters: v.HIRESYNC_RESOURCE_UPDATED_FILTERS,
    updatedLookbackMs: v.HIRESYNC_UPDATED_LOOKBACK,
    history: v.HIRESYNC_HISTORY,
    eraseDeletedAfterMs: v.HIRESYNC_ERASE_DELETED_AFTER,
    resources: Object.freeze(v.HIRESYNC_RESOURCES),
    concurrency: v.HIRESYNC_CONCURRENCY,
    metricsAccountSeries: v.HIRESYNC_METRICS_ACCOUNT_SERIES,
    partner,
    publicUrl,
    refreshKeepaliveMs: v.HIRESYNC_REFRESH_KEEPALIVE,
    incrementalEveryMs: v.HIRESYNC_INCREMENTAL_EVERY,
    fullCron: v.HIRESYNC_FULL_CRON,
    fullWindowMs: v.HIRESYNC_FULL_WINDOW,
    listeners,
    webhookIntake: {
      maxInflight: v.HIRESYNC_WEBHOOK_MAX_INFLIGHT,
      maxBufferedBytes: v.HIRESYNC_WEBHOOK_MAX_BUFFERED_BYTES,
    },
    consolePassword: v.HIRESYNC_CONSOLE_PASSWORD,
    fieldPolicy,
    webhookSecret: v.HIRESYNC_WEBHOOK_SECRET,
  });
}

/**
 * Reads the configuration of an `accounts` subcommand: DATABASE_URL, plus
 * REDIS_URL when `needs.redis` and HIRESYNC_SECRET_KEY when `needs.secretKey`
 * (`needs.secretKey` says what for, in the message of its absence). Every
 * problem is thrown at once as a ConfigError, before anything connects.
 */
export function loadAccountsConfig(
  env: Env,
  needs: { redis?: boolean; secretKey?: string } = {},
): AccountsConfig {
  const parsed = z
    .object({
      ...databaseFields,
      HIRESYNC_SECRET_KEY: secretKeys,
    })
    .safeParse(env);
  // Redis is read only when asked for: the other subcommands run without it.
  const redis = needs.redis ? readRedis(env) : undefined;
  const prefix = readRedisPrefix(env);
  const problems = [
    ...(parsed.success ? [] : problemsOf(parsed.error)),
    ...(redis ? redis.problems : prefix.problems),
  ];
  if (needs.secretKey && (env.HIRESYNC_SECRET_KEY ?? '').trim() === '') {
    problems.push({
      variable: 'HIRESYNC_SECRET_KEY',
      message: `is required to ${needs.secretKey} (32 bytes, base64 or hex; make one with: openssl rand -base64 32)`,
    });
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const v = parsed.data;
  return Object.freeze({
    databaseUrl: v.DATABASE_URL,
    ...logSettings(v),
    redis: redis?.settings?.redis,
    redisPrefix: redis?.settings?.redisPrefix ?? prefix.prefix,
    secretKeys: v.HIRESYNC_SECRET_KEY,
    defaultAuthMode: defaultAuthModeOf(env),
    defaultWebhookSecret:
      defaultAuthModeOf(env) !== undefined && (env.HIRESYNC_WEBHOOK_SECRET ?? '').trim() !== '',
  });
}

/**
 * How the environment's own account (`default`) authenticates, from which of
 * HIRESYNC_CLIENT_ID/HIRESYNC_CLIENT_SECRET and HIRESYNC_API_KEY are set;
 * undefined when neither is (there is no account `default`) or both are
 * (`sync` would refuse that).
 */
export function defaultAuthModeOf(env: Env): AuthConfig['mode'] | undefined {
  const has = (name: string) => (env[name] ?? '').trim() !== '';
  const clientCreds = has('HIRESYNC_CLIENT_ID') || has('HIRESYNC_CLIENT_SECRET');
  if (clientCreds === has('HIRESYNC_API_KEY')) return undefined;
  return clientCreds ? 'client_credentials' : 'api_key';
}

/** The variables the environment's own credentials (account `default`) are read from. */
export const DEFAULT_CREDENTIAL_VARIABLES = [
  'HIRESYNC_BASE_URL',
  'HIRESYNC_AUTH_URL',
  'HIRESYNC_CLIENT_ID',
  'HIRESYNC_CLIENT_SECRET',
  'HIRESYNC_SUB',
  'HIRESYNC_API_KEY',
] as const;

/**
 * The environment's own credentials (account `default`), built exactly as
 * {@link loadConfig} builds them for `sync` and `worker` (`config.api.auth`),
 * from the variables they come from alone, so that an unrelated variable's
 * problem does not hide them. Undefined when the environment configures no
 * credentials, or invalid ones (no worker runs default with those).
 */
export function loadDefaultAuth(env: Env): AuthConfig | undefined {
  const given = DEFAULT_CREDENTIAL_VARIABLES.filter((name) => (env[name] ?? '').trim() !== '');
  if (!given.some((name) => name !== 'HIRESYNC_BASE_URL' && name !== 'HIRESYNC_AUTH_URL')) {
    return undefined;
  }
  try {
    return loadConfig(
      {
        ...Object.fromEntries(given.map((name) => [name, env[name]])),
        // Required by loadConfig, unused here: nothing connects.
        DATABASE_URL: 'postgres://127.0.0.1/unused',
        REDIS_URL: 'redis://127.0.0.1',
        HIRESYNC_RESOURCES: 'unused',
      },
      [],
    ).api.auth;
  } catch (error) {
    if (error instanceof ConfigError) return undefined;
    throw error;
  }
}

/** A Config whose environment sets credentials: account `default` exists. */
export type EnvironmentConfig = Config & { api: ApiConfig };

/**
 * `config`, known to hold the environment's own credentials (account
 * `default`); throws a ConfigError naming the variables when it holds none.
 */
export function withEnvironmentCredentials(config: Config): EnvironmentConfig {
  const { auth } = config.api;
  if (auth === undefined) {
    throw new ConfigError([
      {
        variable: 'HIRESYNC_CLIENT_ID',
        message:
          'the environment sets no credentials (HIRESYNC_CLIENT_ID and HIRESYNC_CLIENT_SECRET, or HIRESYNC_API_KEY): there is no account default',
      },
    ]);
  }
  return Object.freeze({ ...config, api: Object.freeze({ ...config.api, auth }) });
}
