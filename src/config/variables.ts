/**
 * The variables of hiresync, each with the field it is read by (its default,
 * its bounds, its problem): the sets of them that the loaders of
 * src/config/load-config.ts read, from the database's alone to the whole of `sync`.
 */
import { createRequire } from 'node:module';
import type * as CronParser from 'cron-parser';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { postgresTls } from '../postgres-tls.js';
import { registerSecret, Secret } from '../secret.js';
import {
  apiUrl,
  byteSize,
  connectionUrl,
  durationMs,
  durationOrZeroMs,
  fraction,
  integer,
  MAX_TIMER_MS,
  onOff,
  optionalDurationMs,
  optionalText,
} from './fields.js';
import {
  extraWalks,
  isUpdatedTemplate,
  resourcePaths,
  resourceUpdatedFilters,
} from './resource-names.js';
import { parseSecretKeys, SecretKeys } from './secret-keys.js';
import { webhookSecret } from './webhook-secret.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * cron-parser (a CommonJS package, with luxon about 50 ms of CPU to load),
 * required when a cron pattern is first checked: only the loaders of `sync`,
 * `worker` and an account's `--full-cron` check one, not those of `migrate`,
 * `status` or `accounts add`.
 */
function cronParser(): typeof CronParser {
  return createRequire(import.meta.url)('cron-parser') as typeof CronParser;
}

/**
 * `LOG_FORMAT`: `json` or `pretty`; unset (or `auto`): undefined, which is
 * pretty on a terminal and JSON elsewhere (logger.ts).
 */
const logFormat = z
  .string()
  .optional()
  .transform((v) => v?.trim().toLowerCase() || 'auto')
  .pipe(z.enum(['auto', 'json', 'pretty'], { error: 'must be json, pretty or auto' }))
  .transform((v) => (v === 'auto' ? undefined : v));

/**
 * DATABASE_URL's password, as written and decoded, registered as a secret
 * for the process's life (as REDIS_URL's): a driver error or a log line that
 * echoes it shows `[redacted]`.
 */
export function registerDatabasePassword(url: string): void {
  let written: string;
  try {
    written = new URL(url).password;
  } catch {
    return;
  }
  if (written === '') return;
  registerSecret(written, { pinned: true });
  try {
    registerSecret(decodeURIComponent(written), { pinned: true });
  } catch {
    // Not valid percent-encoding: pg reads it as written, registered above.
  }
}

/** The variables every command reads: DATABASE_URL, LOG_LEVEL and LOG_FORMAT. */
export const databaseFields = {
  DATABASE_URL: connectionUrl(['postgres:', 'postgresql:']).superRefine((url, ctx) => {
    registerDatabasePassword(url);
    // TLS: the mode known, the files it names readable (src/postgres-tls.ts).
    try {
      postgresTls(url);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const { message } of error.problems) ctx.addIssue({ code: 'custom', message });
    }
  }),
  LOG_LEVEL: z
    .string()
    .optional()
    .transform((v) => (v?.trim() || 'info').toLowerCase())
    .pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })),
  LOG_FORMAT: logFormat,
};

/** LOG_LEVEL and LOG_FORMAT, read by {@link databaseFields}, as a configuration holds them. */
export function logSettings(v: { LOG_LEVEL: string; LOG_FORMAT: 'json' | 'pretty' | undefined }): {
  logLevel: string;
  logFormat: 'json' | 'pretty' | undefined;
} {
  return { logLevel: v.LOG_LEVEL, logFormat: v.LOG_FORMAT };
}

/** `HIRESYNC_SECRET_KEY`: comma-separated 32-byte keys; never quoted in a problem. */
export const secretKeys = z
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
    return new SecretKeys(parsed.keys);
  });

/** Fewest characters of HIRESYNC_CONSOLE_PASSWORD: the console makes connect links. */
const CONSOLE_PASSWORD_MIN = 12;

/**
 * `HIRESYNC_CONSOLE_PASSWORD`: the password of the worker's console (user
 * `hiresync`); unset, the console is off. Never quoted in a problem.
 */
export const consolePassword = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined || text === '') return undefined;
    if (text.length < CONSOLE_PASSWORD_MIN) {
      ctx.addIssue({
        code: 'custom',
        message: `must be at least ${CONSOLE_PASSWORD_MIN} characters (make one with: openssl rand -base64 18)`,
      });
      return z.NEVER;
    }
    return new Secret(text);
  });

/**
 * `HIRESYNC_ERASE_DELETED_AFTER`: how long after its deletion upstream a
 * record is erased, history included (the worker's daily erasure); unset: never.
 */
export const eraseDeletedAfter = optionalDurationMs(3_600_000, 3650 * 86_400_000);

/** Every account in a /metrics scrape's series at most this many accounts (`HIRESYNC_METRICS_ACCOUNT_SERIES=auto`). */
export const AUTO_ACCOUNT_SERIES = 100;

/**
 * `HIRESYNC_METRICS_ACCOUNT_SERIES`: up to how many enabled accounts a
 * /metrics scrape holds every account's series: `auto` (the default, 100),
 * `all` (Infinity), `none` (0) or a count.
 */
const metricsAccountSeries = z
  .string()
  .optional()
  .transform((text, ctx) => {
    const v = text?.trim().toLowerCase() || 'auto';
    if (v === 'auto') return AUTO_ACCOUNT_SERIES;
    if (v === 'all') return Number.POSITIVE_INFINITY;
    if (v === 'none') return 0;
    if (/^\d{1,9}$/.test(v)) return Number(v);
    ctx.addIssue({
      code: 'custom',
      message: `must be auto, all, none or a number of accounts, got ${JSON.stringify(text)}`,
    });
    return z.NEVER;
  });

/**
 * The variables of `status`: the database's, the secret key and the updated
 * lookback; Redis's are read by src/config/redis-settings.ts.
 */
export const statusFields = {
  ...databaseFields,
  HIRESYNC_SECRET_KEY: secretKeys,
  HIRESYNC_UPDATED_LOOKBACK: durationMs('5m', 1, 7 * 86_400_000),
};

/**
 * The variables of `sync` and `worker`, but HIRESYNC_RESOURCES (it needs the
 * declared resource names) and the rules across variables, which loadConfig
 * checks.
 */
export const fullFields = {
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
          cronParser().CronExpressionParser.parse(v);
          return true;
        } catch {
          return false;
        }
      },
      { message: 'is not a valid cron pattern (five fields, e.g. "0 3 * * *")' },
    ),
  HIRESYNC_FULL_WINDOW: durationOrZeroMs('1h', 1000, 7 * 86_400_000),
  HIRESYNC_WEBHOOK_MAX_INFLIGHT: integer(32, 1, 10_000),
  HIRESYNC_WEBHOOK_MAX_BUFFERED_BYTES: byteSize(16 * 1024 ** 2, 1024 ** 2, 1024 ** 3),
  HIRESYNC_CONSOLE_PASSWORD: consolePassword,
  HIRESYNC_WEBHOOK_SECRET: webhookSecret,
  HIRESYNC_CONCURRENCY: integer(4, 1, 256),
  HIRESYNC_METRICS_ACCOUNT_SERIES: metricsAccountSeries,
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
  HIRESYNC_UPDATED_FILTER: optionalText.refine((v) => v === undefined || isUpdatedTemplate(v), {
    message:
      'must be a query string holding {since}, such as updated_at=gte|{since} (no cursor or per_page)',
  }),
  HIRESYNC_HISTORY: onOff(true),
  HIRESYNC_EXTRA_WALKS: extraWalks,
  HIRESYNC_RESOURCE_UPDATED_FILTERS: resourceUpdatedFilters,
  HIRESYNC_ERASE_DELETED_AFTER: eraseDeletedAfter,
};
