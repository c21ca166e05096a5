/**
 * The field builders of the configuration: a zod schema per kind of variable
 * (URLs under the https rule, durations, sizes, fractions, integers,
 * switches), each with its default for a blank value and a problem that
 * quotes what was given and says what is wanted.
 */
import { z } from 'zod';
import { parseDuration } from '../duration.js';

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Optional text, trimmed; blank is undefined. */
export const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/**
 * A URL of the API or of its token service (`variable` names it in the
 * problem about credentials in it): https, or plain http for a loopback host
 * only; no query, fragment or credentials. Read without its trailing slashes.
 */
export function apiUrl(variable: string) {
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

/** A required connection URL of one of `schemes` (such as `redis:`), trimmed. */
export function connectionUrl(schemes: readonly string[]) {
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

/** A duration in the units it is written in: `15m`, `1h`, `30s`, `250ms`. */
export function formatDuration(ms: number): string {
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
export function durationMs(fallback: string, min: number, max: number) {
  const inRange = (text: string) => {
    const ms = parseDuration(text);
    return ms !== undefined && ms >= min && ms <= max ? ms : undefined;
  };
  return optionalValue(inRange(fallback) as number, inRange, (text) =>
    parseDuration(text) === undefined
      ? `is not a duration like 30s, 15m or 1h: ${JSON.stringify(text)}`
      : `must be from ${formatDuration(min)} to ${formatDuration(max)}, got ${JSON.stringify(text)}`,
  );
}

/**
 * An optional duration such as `30d`, within [min, max] (both in ms):
 * undefined when unset or blank (a setting that is off until given).
 */
export function optionalDurationMs(min: number, max: number) {
  const inRange = (text: string) => {
    const ms = parseDuration(text);
    return ms !== undefined && ms >= min && ms <= max ? ms : undefined;
  };
  return optionalValue<number | undefined>(undefined, inRange, (text) =>
    parseDuration(text) === undefined
      ? `is not a duration like 30d, 12h or 90m: ${JSON.stringify(text)}`
      : `must be from ${formatDuration(min)} to ${formatDuration(max)}, got ${JSON.stringify(text)}`,
  );
}

/**
 * A duration such as `30m` within [min, max] (both in ms), or `0` (with or
 * without a unit) for none: a setting that 0 turns off.
 */
export function durationOrZeroMs(fallback: string, min: number, max: number) {
  const read = (text: string) => {
    if (/^0+(\.0+)?\s*(ms|s|m|h|d)?$/i.test(text)) return 0;
    const ms = parseDuration(text);
    return ms !== undefined && ms >= min && ms <= max ? ms : undefined;
  };
  return optionalValue(read(fallback) as number, read, (text) =>
    parseDuration(text) === undefined
      ? `is not a duration like 30m or 1h (or 0 for none): ${JSON.stringify(text)}`
      : `must be 0 (none) or from ${formatDuration(min)} to ${formatDuration(max)}, got ${JSON.stringify(text)}`,
  );
}

/** A fraction from 0 to 1. */
export function fraction(fallback: number) {
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
export function byteSize(fallback: number, min: number, max: number) {
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
export function integer(fallback: number, min: number, max: number) {
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
export function onOff(fallback: boolean) {
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
