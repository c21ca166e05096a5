import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import { parseSecretKeys, SecretBox } from './accounts/secret-box.js';
import { parseDuration } from './duration.js';
import { ConfigError, type ConfigProblem } from './errors.js';
import { registerSecret, Secret } from './secret.js';
import type { ResourceName } from './sync/ports.js';

export type { ResourceName } from './sync/ports.js';

export type AuthConfig =
  | {
      mode: 'client_credentials';
      /** `HIRESYNC_AUTH_URL` + `/token`. */
      tokenUrl: string;
      clientId: string;
      clientSecret: Secret;
      sub: string | undefined;
      /**
       * The registered account whose stored credentials these are: errors
       * about them name it and `hiresync accounts update`. Undefined for
       * `default` (the environment's), whose errors name its variables.
       */
      account?: string | undefined;
    }
  | {
      mode: 'api_key';
      /** `HIRESYNC_BASE_URL` + `/auth/token`. */
      tokenUrl: string;
      apiKey: Secret;
      /** As for client credentials: the registered account, undefined for `default`. */
      account?: string | undefined;
    }
  | {
      /** A partner integration's customer: refresh grants with the partner app's credentials. */
      mode: 'partner';
      /** The account's auth URL (default `HIRESYNC_AUTH_URL`) + `/token`. */
      tokenUrl: string;
      /** `HIRESYNC_PARTNER_CLIENT_ID`. */
      clientId: string;
      /** `HIRESYNC_PARTNER_CLIENT_SECRET`. */
      clientSecret: Secret;
      /** The account whose refresh token (kept by a RefreshTokenVault) the grants use. */
      account: string;
    };

/** Everything the API client needs. */
export interface ApiConfig {
  /** `HIRESYNC_BASE_URL` without a trailing slash. */
  baseUrl: string;
  auth: AuthConfig;
  /** Page size asked of the API (1..500). Default 500. */
  perPage: number;
  /** `status` filter of the jobs list. */
  jobsStatus: string | undefined;
  /** List path of tracking links. Default `/v3/tracking_links`. */
  trackingLinksPath: string;
  /** `HIRESYNC_RESOURCE_PATHS`: list paths of other resources by name; default `/v3/NAME`. */
  resourcePaths: Readonly<Record<string, string>>;
  /** Property of a JSON object body that holds the records; undefined: the body is the array. */
  recordsKey: string | undefined;
  /** First guess of the API's rate-limit window, until X-RateLimit-Reset states it or it is learned. Default 10 s. */
  rateLimitWindowMs: number;
  /** Requests of the window left unused for other clients of the same credentials. Default 0. */
  rateLimitReserve: number;
  /** Timeout of one HTTP request. Default 30 s. */
  httpTimeoutMs: number;
  /** Retries of a request after 5xx or network errors. Default 5. */
  maxRetries: number;
  /** Largest response body accepted, counted after decompression. Default 4 MiB (fits the 512 MB heap of the bin). */
  maxPageBytes: number;
  /** Longest Retry-After waited; a longer one ends the run's attempt. Default 1 h. */
  maxRetryAfterMs: number;
}

/**
 * A partner app (HIRESYNC_PARTNER_CLIENT_ID and HIRESYNC_PARTNER_CLIENT_SECRET): its credentials are shared by every
 * partner account; each account has its own refresh token.
 */
export interface PartnerConfig {
  clientId: string;
  clientSecret: Secret;
  /** `HIRESYNC_AUTHORIZE_URL`, default `HIRESYNC_AUTH_URL` + `/authorize`; undefined when neither is set. */
  authorizeUrl: string | undefined;
  /** `HIRESYNC_PARTNER_SCOPE`, sent with the authorization request when set. */
  scope: string | undefined;
}

export interface DatabaseConfig {
  databaseUrl: string;
  logLevel: string;
}

export interface StatusConfig extends DatabaseConfig {
  redisUrl: string;
  /** Prefix of every Redis key (queue, checkpoints, tokens, pacing). Default `hiresync`. */
  redisPrefix: string;
  /**
   * `HIRESYNC_SECRET_KEY`: seals and opens the credentials of registered
   * accounts; undefined when the variable is unset (only `default` can run).
   */
  secretBox: SecretBox | undefined;
  /**
   * `HIRESYNC_UPDATED_LOOKBACK`: subtracted from the last successful run's
   * start (on the API's clock); a larger skew between the API's clock and the
   * worker's is a warning in the log and in `status`. Default 5 min.
   */
  updatedLookbackMs: number;
}

export interface Config extends StatusConfig {
  api: ApiConfig;
  /** Attempts of a failing run before it is recorded as failed. Default 5. */
  runAttempts: number;
  /** First retry delay of a failing run (doubles each attempt). Default 30 s. */
  runBackoffMs: number;
  /** How long a dead process's run lock blocks the resource (renewed every third of it while alive). Default 15 s. */
  runLockTtlMs: number;
  /** A full run that would soft-delete more than this fraction of live rows marks none. Default 0.5. */
  maxDeleteFraction: number;
  /**
   * `HIRESYNC_MAX_SLOT_WAIT`: longest rate-limit wait a queued run spends
   * holding its worker slot; a longer one frees the slot for other accounts'
   * runs and the run resumes from its checkpoint when the wait is over. Default 5 s.
   */
  maxSlotWaitMs: number;
  /**
   * `HIRESYNC_UPDATED_FILTER`: the query-string template (holding `{since}`)
   * every incremental run sends on its first request; undefined: incremental
   * runs stop by id instead.
   */
  updatedFilter: string | undefined;
  /** `HIRESYNC_HISTORY`: keep a version of every record that changes in `<resource>_history`. Default on. */
  history: boolean;
  resources: readonly ResourceName[];
  /** `HIRESYNC_CONCURRENCY`: runs one worker process runs at once. Default 4. */
  concurrency: number;
  /** The partner app, when HIRESYNC_PARTNER_CLIENT_ID and _SECRET are set. */
  partner: PartnerConfig | undefined;
  /** `HIRESYNC_REFRESH_KEEPALIVE`: each enabled partner account is refreshed at least this often by `worker`. Default 6 h. */
  refreshKeepaliveMs: number;
  incrementalEveryMs: number;
  fullCron: string;
  httpPort: number;
}

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * The process environment, read once: the only read of `process.env` in
 * hiresync. The bin passes it to the commands, which hand it to the loaders below.
 */
export function readEnv(): Env {
  return Object.freeze({ ...process.env });
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

function apiUrl(variable: string) {
  return z.string({ error: 'is required' }).transform((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text.trim());
    } catch {
      ctx.addIssue({ code: 'custom', message: `is not a URL: ${JSON.stringify(text)}` });
      return z.NEVER;
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
      ctx.addIssue({
        code: 'custom',
        message: `must use https:// (plain http is allowed only for loopback hosts), got ${url.protocol}//${url.host}`,
      });
      return z.NEVER;
    }
    if (url.search || url.hash || url.username || url.password) {
      ctx.addIssue({
        code: 'custom',
        message: `must not carry a query, fragment or credentials (${variable})`,
      });
      return z.NEVER;
    }
    return url.href.replace(/\/+$/, '');
  });
}

function connectionUrl(schemes: readonly string[]) {
  return z
    .string({ error: 'is required' })
    .transform((text) => text.trim())
    .refine(
      (text) => {
        try {
          return schemes.includes(new URL(text).protocol);
        } catch {
          return false;
        }
      },
      { message: `must be a ${schemes.map((s) => `${s}//`).join(' or ')} URL` },
    );
}

/** Longest delay a Node.js timer can hold (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

function formatBound(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/**
 * An optional variable read by `read` (given the trimmed text); blank means
 * `fallback`. A value `read` refuses (undefined) is a problem worded by `problem`.
 */
function optionalValue<T>(
  fallback: T,
  read: (text: string) => T | undefined,
  problem: (text: string) => string,
) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined || text.trim() === '') return fallback;
      const value = read(text.trim());
      if (value === undefined) {
        ctx.addIssue({ code: 'custom', message: problem(text) });
        return z.NEVER;
      }
      return value;
    });
}

/** A duration such as `30s`, within [min, max] (both in ms). */
function durationMs(fallback: string, min: number, max: number) {
  const inRange = (text: string) => {
    const ms = parseDuration(text);
    return ms !== undefined && ms >= min && ms <= max ? ms : undefined;
  };
  return optionalValue(inRange(fallback) as number, inRange, (text) =>
    parseDuration(text) === undefined
      ? `is not a duration like 30s, 15m or 1h: ${JSON.stringify(text)}`
      : `must be from ${formatBound(min)} to ${formatBound(max)}, got ${JSON.stringify(text)}`,
  );
}

/** A fraction from 0 to 1. */
function fraction(fallback: number) {
  return optionalValue(
    fallback,
    (text) => {
      const value = Number(text);
      return /^(\d+(\.\d*)?|\.\d+)$/.test(text) && value >= 0 && value <= 1 ? value : undefined;
    },
    (text) => `must be a fraction from 0 to 1 (e.g. 0.5), got ${JSON.stringify(text)}`,
  );
}

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1024,
  kib: 1024,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};

/** A byte size such as `32MiB`, `512kb` or `1048576`, within [min, max]. */
function byteSize(fallback: number, min: number, max: number) {
  return optionalValue(
    fallback,
    (text) => {
      const m = /^(\d+)\s*([a-z]*)$/i.exec(text);
      const unit = BYTE_UNITS[(m?.[2] ?? '').toLowerCase()];
      const value = m?.[1] !== undefined && unit !== undefined ? Number(m[1]) * unit : Number.NaN;
      return value >= min && value <= max ? value : undefined;
    },
    (text) =>
      `must be a size from ${min} bytes to ${max / 1024 ** 2} MiB, such as 32MiB or 512KiB, got ${JSON.stringify(text)}`,
  );
}

/** A whole number within [min, max]. */
function integer(fallback: number, min: number, max: number) {
  return optionalValue(
    fallback,
    (text) => {
      const value = Number(text);
      return /^\d+$/.test(text) && value >= min && value <= max ? value : undefined;
    },
    (text) => `must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`,
  );
}

/** A switch: `on` or `off` (also true/false, yes/no, 1/0), any case; unset is `fallback`. */
function onOff(fallback: boolean) {
  const values: Record<string, boolean> = {
    on: true,
    true: true,
    yes: true,
    '1': true,
    off: false,
    false: false,
    no: false,
    '0': false,
  };
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      const value =
        text === undefined || text.trim() === '' ? fallback : values[text.trim().toLowerCase()];
      if (value === undefined) {
        ctx.addIssue({ code: 'custom', message: `must be on or off, got ${JSON.stringify(text)}` });
        return z.NEVER;
      }
      return value;
    });
}

/**
 * `HIRESYNC_RESOURCES`: a comma-separated list of resource names: the
 * declared ones (`known`) and any other list resource of the API, stored as
 * sent (see {@link resourceNameProblem}). Default: the declared ones.
 */
function resourceList(known: readonly string[]) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      const names = (text ?? known.join(','))
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (names.length === 0) {
        ctx.addIssue({
          code: 'custom',
          message: `must list at least one resource (the built-in ones are ${known.join(', ')})`,
        });
        return z.NEVER;
      }
      for (const name of names) {
        const problem = known.includes(name) ? undefined : resourceNameProblem(name);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }
      return [...new Set(names)] as ResourceName[];
    });
}

/**
 * Relations hiresync keeps in every account schema beside the resources'
 * own: a resource of these names would collide with them.
 */
const OWN_RELATIONS = [
  'job_boards',
  'referrers',
  'sources',
  'sync_runs',
  'rejected_records',
  'typed_view_columns',
  'typed_views',
  'kysely_migration',
  'kysely_migration_lock',
];

/**
 * Why `name` cannot be a resource hiresync stores as sent (table `NAME_data`,
 * history `NAME_history`, views `NAME` and `NAME_flat`), or undefined.
 */
export function resourceNameProblem(name: string): string | undefined {
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(name)) {
    return `${JSON.stringify(name)} is not a resource name: lower-case letters, digits and _, starting with a letter, at most 40 characters`;
  }
  const rename = `name it otherwise and give its path in HIRESYNC_RESOURCE_PATHS (e.g. api_${name}=/v3/${name})`;
  if (OWN_RELATIONS.includes(name)) {
    return `${name} is the name of one of hiresync's own tables; ${rename}`;
  }
  const suffix = /_(data|history|flat)$/.exec(name)?.[0];
  if (suffix) {
    return `${name} ends in ${suffix}, which hiresync keeps for the tables and views of resources; ${rename}`;
  }
  return undefined;
}

/** `HIRESYNC_RESOURCE_PATHS`: `name=/path,…`, the list paths of resources that are not at `/v3/NAME`. */
const resourcePaths = z
  .string()
  .optional()
  .transform((text, ctx) => {
    const paths: Record<string, string> = {};
    for (const entry of (text ?? '').split(',').map((s) => s.trim())) {
      if (entry === '') continue;
      const match = /^([^=\s]+)\s*=\s*(\S+)$/.exec(entry);
      const [, name = '', path = ''] = match ?? [];
      if (!match || !path.startsWith('/') || path.includes('?') || path.includes('#')) {
        ctx.addIssue({
          code: 'custom',
          message: `must be name=/path pairs separated by commas (a path starts with / and has no query), got ${JSON.stringify(entry)}`,
        });
        continue;
      }
      paths[name] = path;
    }
    return paths;
  });

const databaseFields = {
  DATABASE_URL: connectionUrl(['postgres:', 'postgresql:']),
  LOG_LEVEL: z
    .string()
    .optional()
    .transform((v) => (v?.trim() || 'info').toLowerCase())
    .pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })),
};

/** `HIRESYNC_SECRET_KEY`: comma-separated 32-byte keys; never quoted in a problem. */
const secretKeys = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined || text.trim() === '') return undefined;
    const parsed = parseSecretKeys(text);
    if ('problem' in parsed) {
      ctx.addIssue({ code: 'custom', message: parsed.problem });
      return z.NEVER;
    }
    for (const item of text.split(',')) registerSecret(item.trim(), { pinned: true });
    return new SecretBox(parsed.keys);
  });

const statusFields = {
  ...databaseFields,
  HIRESYNC_SECRET_KEY: secretKeys,
  REDIS_URL: connectionUrl(['redis:', 'rediss:']),
  HIRESYNC_REDIS_PREFIX: z
    .string()
    .optional()
    .transform((v) => v?.trim() || 'hiresync')
    .refine((v) => /^[A-Za-z0-9_.-]+$/.test(v), {
      message: 'may hold only letters, digits, _ . and -',
    }),
  HIRESYNC_UPDATED_LOOKBACK: durationMs('5m', 1, 7 * 86_400_000),
};

const fullFields = {
  ...statusFields,
  HIRESYNC_BASE_URL: apiUrl('HIRESYNC_BASE_URL'),
  HIRESYNC_AUTH_URL: optionalText,
  HIRESYNC_CLIENT_ID: optionalText,
  HIRESYNC_CLIENT_SECRET: optionalText,
  HIRESYNC_SUB: optionalText.refine((v) => v === undefined || /^\d+$/.test(v), {
    message: 'must be a numeric user id (digits only)',
  }),
  HIRESYNC_API_KEY: optionalText,
  HIRESYNC_PER_PAGE: integer(500, 1, 500),
  HIRESYNC_JOBS_STATUS: optionalText,
  HIRESYNC_TRACKING_LINKS_PATH: z
    .string()
    .optional()
    .transform((v) => v?.trim() || '/v3/tracking_links')
    .refine((v) => v.startsWith('/') && !v.includes('?') && !v.includes('#'), {
      message: 'must be a path starting with / and without a query',
    }),
  HIRESYNC_RESOURCE_PATHS: resourcePaths,
  HIRESYNC_RECORDS_KEY: optionalText,
  HIRESYNC_INCREMENTAL_EVERY: durationMs('15m', 1000, MAX_TIMER_MS),
  HIRESYNC_FULL_CRON: z
    .string()
    .optional()
    .transform((v) => v?.trim() || '0 3 * * *')
    .refine(
      (v) => {
        // cron-parser also takes a sixth (seconds) field; the contract says five.
        if (v.split(/\s+/).length !== 5) return false;
        try {
          CronExpressionParser.parse(v);
          return true;
        } catch {
          return false;
        }
      },
      { message: 'is not a valid cron pattern (five fields, e.g. "0 3 * * *")' },
    ),
  HIRESYNC_HTTP_PORT: integer(9464, 0, 65535),
  HIRESYNC_CONCURRENCY: integer(4, 1, 256),
  HIRESYNC_REFRESH_KEEPALIVE: durationMs('6h', 60_000, 7 * 86_400_000),
  HIRESYNC_RATE_LIMIT_WINDOW: durationMs('10s', 100, 86_400_000),
  HIRESYNC_RATE_LIMIT_RESERVE: integer(0, 0, 1000),
  HIRESYNC_HTTP_TIMEOUT: durationMs('30s', 100, 3_600_000),
  HIRESYNC_MAX_RETRIES: integer(5, 0, 100),
  HIRESYNC_RUN_ATTEMPTS: integer(5, 1, 100),
  HIRESYNC_RUN_BACKOFF: durationMs('30s', 100, 86_400_000),
  HIRESYNC_RUN_LOCK_TTL: durationMs('15s', 1000, 3_600_000),
  HIRESYNC_MAX_DELETE_FRACTION: fraction(0.5),
  HIRESYNC_MAX_PAGE_BYTES: byteSize(4 * 1024 ** 2, 64 * 1024, 1024 ** 3),
  HIRESYNC_MAX_RETRY_AFTER: durationMs('1h', 1000, 7 * 86_400_000),
  HIRESYNC_MAX_SLOT_WAIT: durationMs('5s', 100, 3_600_000),
  HIRESYNC_UPDATED_FILTER: optionalText.refine(
    (v) =>
      v === undefined ||
      (/^[^?#&=\s]+=[^#&\s]*(&[^?#&=\s]+=[^#&\s]*)*$/.test(v) &&
        /=[^&]*\{since\}/.test(v) &&
        !/(^|&)(cursor|per_page)=/i.test(v)),
    {
      message:
        'must be a query string holding {since}, such as updated_at=gte|{since} (no cursor or per_page)',
    },
  ),
  HIRESYNC_HISTORY: onOff(true),
};

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
  return Object.freeze({ databaseUrl: v.DATABASE_URL, logLevel: v.LOG_LEVEL });
}

/** Configuration of `hiresync migrate`. */
export interface MigrateConfig extends DatabaseConfig {
  /** `HIRESYNC_RESOURCES` (optional): the list resources among them get their tables too. */
  resources: readonly ResourceName[];
}

/**
 * Configuration of `hiresync migrate`: DATABASE_URL, and HIRESYNC_RESOURCES
 * when set. `known` lists the declared resource names (the caller's catalog).
 */
export function loadMigrateConfig(env: Env, known: readonly ResourceName[]): MigrateConfig {
  const v = parseOrThrow({ ...databaseFields, HIRESYNC_RESOURCES: resourceList(known) }, env);
  return Object.freeze({
    databaseUrl: v.DATABASE_URL,
    logLevel: v.LOG_LEVEL,
    resources: Object.freeze(v.HIRESYNC_RESOURCES),
  });
}

/** Configuration of `hiresync status`: DATABASE_URL and REDIS_URL. */
export function loadStatusConfig(env: Env): StatusConfig {
  const v = parseOrThrow(statusFields, env);
  return Object.freeze({
    databaseUrl: v.DATABASE_URL,
    redisUrl: v.REDIS_URL,
    redisPrefix: v.HIRESYNC_REDIS_PREFIX,
    secretBox: v.HIRESYNC_SECRET_KEY,
    logLevel: v.LOG_LEVEL,
    updatedLookbackMs: v.HIRESYNC_UPDATED_LOOKBACK,
  });
}

/** Configuration of `hiresync demo`: where it creates its database and keeps its keys. */
export interface DemoConfig {
  /** A Postgres server where the user may create databases. */
  adminUrl: string;
  redisUrl: string;
}

/**
 * Configuration of `hiresync demo`: `DATABASE_URL` (default
 * `postgres://postgres@127.0.0.1:5432/postgres`) and `REDIS_URL` (default
 * `redis://127.0.0.1:6379`), taken as given: the demo runs on built-in defaults.
 */
export function loadDemoConfig(env: Env): DemoConfig {
  return Object.freeze({
    adminUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  });
}

/**
 * Reads and validates the whole configuration of `sync` and `worker`. Every
 * problem is collected and thrown at once as a ConfigError naming each variable.
 * `known` lists the declared resource names, which `HIRESYNC_RESOURCES`
 * defaults to (the caller's catalog: the built-in resources' RESOURCE_NAMES,
 * plus any a test declares).
 */
export function loadConfig(env: Env, known: readonly ResourceName[]): Config {
  const parsed = z
    .object({ ...fullFields, HIRESYNC_RESOURCES: resourceList(known) })
    .safeParse(env);
  const problems = parsed.success ? [] : problemsOf(parsed.error);
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
  } else if (!clientCreds && !apiKey) {
    problems.push({
      variable: 'HIRESYNC_CLIENT_ID',
      message:
        'no credentials: set HIRESYNC_CLIENT_ID and HIRESYNC_CLIENT_SECRET, or HIRESYNC_API_KEY',
    });
  } else if (clientCreds) {
    for (const name of ['HIRESYNC_CLIENT_ID', 'HIRESYNC_CLIENT_SECRET', 'HIRESYNC_AUTH_URL']) {
      if (!has(name))
        problems.push({ variable: name, message: 'is required with client credentials' });
    }
  } else if (has('HIRESYNC_SUB')) {
    problems.push({
      variable: 'HIRESYNC_SUB',
      message: 'applies only to client credentials, not HIRESYNC_API_KEY',
    });
  }
  let authUrl: string | undefined;
  if (clientCreds && has('HIRESYNC_AUTH_URL')) {
    const r = apiUrl('HIRESYNC_AUTH_URL').safeParse(env.HIRESYNC_AUTH_URL);
    if (r.success) authUrl = r.data;
    else
      problems.push(
        ...r.error.issues.map((i) => ({ variable: 'HIRESYNC_AUTH_URL', message: i.message })),
      );
  }
  const { partner, problems: partnerProblems } = readPartner(env);
  problems.push(...partnerProblems);
  if (parsed.success) {
    for (const name of Object.keys(parsed.data.HIRESYNC_RESOURCE_PATHS)) {
      if (known.includes(name)) {
        problems.push({
          variable: 'HIRESYNC_RESOURCE_PATHS',
          message: `${name} is a built-in resource with a path of its own${name === 'tracking_links' ? ' (set HIRESYNC_TRACKING_LINKS_PATH)' : ''}; this variable gives the paths of other resources`,
        });
      } else if (!parsed.data.HIRESYNC_RESOURCES.includes(name)) {
        problems.push({
          variable: 'HIRESYNC_RESOURCE_PATHS',
          message: `names ${name}, which HIRESYNC_RESOURCES does not list: add it there, or drop its path`,
        });
      }
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const v = parsed.data;

  const auth: AuthConfig = clientCreds
    ? {
        mode: 'client_credentials',
        tokenUrl: `${authUrl}/token`,
        clientId: v.HIRESYNC_CLIENT_ID ?? '',
        clientSecret: new Secret(v.HIRESYNC_CLIENT_SECRET ?? ''),
        sub: v.HIRESYNC_SUB,
      }
    : {
        mode: 'api_key',
        tokenUrl: `${v.HIRESYNC_BASE_URL}/auth/token`,
        apiKey: new Secret(v.HIRESYNC_API_KEY ?? ''),
      };

  return Object.freeze({
    databaseUrl: v.DATABASE_URL,
    redisUrl: v.REDIS_URL,
    redisPrefix: v.HIRESYNC_REDIS_PREFIX,
    secretBox: v.HIRESYNC_SECRET_KEY,
    logLevel: v.LOG_LEVEL,
    runAttempts: v.HIRESYNC_RUN_ATTEMPTS,
    runBackoffMs: v.HIRESYNC_RUN_BACKOFF,
    runLockTtlMs: v.HIRESYNC_RUN_LOCK_TTL,
    api: Object.freeze({
      baseUrl: v.HIRESYNC_BASE_URL,
      auth: Object.freeze(auth),
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
    updatedLookbackMs: v.HIRESYNC_UPDATED_LOOKBACK,
    history: v.HIRESYNC_HISTORY,
    resources: Object.freeze(v.HIRESYNC_RESOURCES),
    concurrency: v.HIRESYNC_CONCURRENCY,
    partner,
    refreshKeepaliveMs: v.HIRESYNC_REFRESH_KEEPALIVE,
    incrementalEveryMs: v.HIRESYNC_INCREMENTAL_EVERY,
    fullCron: v.HIRESYNC_FULL_CRON,
    httpPort: v.HIRESYNC_HTTP_PORT,
  });
}

/** Configuration of `hiresync accounts`: Postgres always; Redis and the secret key when a subcommand needs them. */
export interface AccountsConfig extends DatabaseConfig {
  /** `REDIS_URL`; undefined unless asked for (disable, remove). */
  redisUrl: string | undefined;
  redisPrefix: string;
  /** `HIRESYNC_SECRET_KEY`; always set when asked for (add, rekey). */
  secretBox: SecretBox | undefined;
  /**
   * How the environment's account (`default`) authenticates, from which of
   * HIRESYNC_CLIENT_ID/HIRESYNC_CLIENT_SECRET and HIRESYNC_API_KEY are set;
   * undefined when neither or both are (`sync` would refuse that).
   */
  defaultAuthMode: AuthConfig['mode'] | undefined;
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
      HIRESYNC_REDIS_PREFIX: statusFields.HIRESYNC_REDIS_PREFIX,
      // Read only when asked for: the other subcommands run without Redis.
      REDIS_URL: needs.redis ? statusFields.REDIS_URL : z.unknown().optional(),
    })
    .safeParse(env);
  const problems = parsed.success ? [] : problemsOf(parsed.error);
  if (needs.secretKey && (env.HIRESYNC_SECRET_KEY ?? '').trim() === '') {
    problems.push({
      variable: 'HIRESYNC_SECRET_KEY',
      message: `is required to ${needs.secretKey} (32 bytes, base64 or hex; make one with: openssl rand -base64 32)`,
    });
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const v = parsed.data;
  const has = (name: string) => (env[name] ?? '').trim() !== '';
  const clientCreds = has('HIRESYNC_CLIENT_ID') || has('HIRESYNC_CLIENT_SECRET');
  return Object.freeze({
    databaseUrl: v.DATABASE_URL,
    logLevel: v.LOG_LEVEL,
    redisUrl: needs.redis ? (v.REDIS_URL as string) : undefined,
    redisPrefix: v.HIRESYNC_REDIS_PREFIX,
    secretBox: v.HIRESYNC_SECRET_KEY,
    defaultAuthMode:
      clientCreds === has('HIRESYNC_API_KEY')
        ? undefined
        : clientCreds
          ? 'client_credentials'
          : 'api_key',
  });
}

/** The variables the environment's own credentials (account `default`) are read from. */
const DEFAULT_CREDENTIAL_VARIABLES = [
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

/**
 * The URLs of an account being added: `flags` when given, else
 * HIRESYNC_BASE_URL and HIRESYNC_AUTH_URL, under the rules of those variables
 * (https unless loopback; no query, fragment or credentials). `authUrl` is
 * required when `needsAuthUrl`. Problems name the flag or variable the value
 * came from, all at once, as a ConfigError.
 */
export function loadAccountUrls(
  env: Env,
  flags: { baseUrl: string | undefined; authUrl: string | undefined },
  needsAuthUrl: boolean,
): { baseUrl: string; authUrl: string | undefined } {
  const problems: ConfigProblem[] = [];
  const read = (flag: string, value: string | undefined, variable: string, required: boolean) => {
    const [source, text] =
      value !== undefined ? [flag, value] : [variable, (env[variable] ?? '').trim() || undefined];
    if (text === undefined) {
      if (required) problems.push({ variable: flag, message: `is required (or set ${variable})` });
      return undefined;
    }
    const result = apiUrl(source).safeParse(text);
    if (result.success) return result.data;
    problems.push(...result.error.issues.map((i) => ({ variable: source, message: i.message })));
    return undefined;
  };
  const baseUrl = read('--base-url', flags.baseUrl, 'HIRESYNC_BASE_URL', true);
  const authUrl = needsAuthUrl
    ? read('--auth-url', flags.authUrl, 'HIRESYNC_AUTH_URL', true)
    : undefined;
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

/**
 * The partner app of the environment: HIRESYNC_PARTNER_CLIENT_ID and
 * HIRESYNC_PARTNER_CLIENT_SECRET (both, or neither: no partner app),
 * HIRESYNC_AUTHORIZE_URL (default HIRESYNC_AUTH_URL + /authorize, same https
 * rule) and HIRESYNC_PARTNER_SCOPE. Problems are returned, never thrown, so
 * each loader reports them with its own.
 */
export function readPartner(env: Env): {
  partner: PartnerConfig | undefined;
  problems: ConfigProblem[];
} {
  const text = (name: string) => (env[name] ?? '').trim() || undefined;
  const clientId = text('HIRESYNC_PARTNER_CLIENT_ID');
  const clientSecret = text('HIRESYNC_PARTNER_CLIENT_SECRET');
  const problems: ConfigProblem[] = [];
  if ((clientId === undefined) !== (clientSecret === undefined)) {
    problems.push({
      variable:
        clientId === undefined ? 'HIRESYNC_PARTNER_CLIENT_ID' : 'HIRESYNC_PARTNER_CLIENT_SECRET',
      message:
        "is required with the other half of the partner app's credentials (HIRESYNC_PARTNER_CLIENT_ID and HIRESYNC_PARTNER_CLIENT_SECRET)",
    });
  }
  if (clientId === undefined || clientSecret === undefined) return { partner: undefined, problems };
  const url = (variable: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const result = apiUrl(variable).safeParse(value);
    if (result.success) return result.data;
    problems.push(...result.error.issues.map((i) => ({ variable, message: i.message })));
    return undefined;
  };
  const explicit = url('HIRESYNC_AUTHORIZE_URL', text('HIRESYNC_AUTHORIZE_URL'));
  const authUrl =
    text('HIRESYNC_AUTHORIZE_URL') === undefined
      ? url('HIRESYNC_AUTH_URL', text('HIRESYNC_AUTH_URL'))
      : undefined;
  if (problems.length > 0) return { partner: undefined, problems };
  return {
    partner: Object.freeze({
      clientId,
      clientSecret: new Secret(clientSecret),
      authorizeUrl: explicit ?? (authUrl === undefined ? undefined : `${authUrl}/authorize`),
      scope: text('HIRESYNC_PARTNER_SCOPE'),
    }),
    problems,
  };
}
