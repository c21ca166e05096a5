import { parseDuration } from '../duration.js';
import { UsageError } from '../errors.js';

/** The value of `--name` as a whole number >= min; a UsageError otherwise. */
export function intOption(name: string, text: string, min = 0): number {
  if (!/^\d+$/.test(text) || Number(text) < min)
    throw new UsageError(`--${name} takes a whole number >= ${min}, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** The value of `--name` as a probability from 0 to 1; a UsageError otherwise. */
export function probabilityOption(name: string, text: string): number {
  const p = Number(text);
  if (!(p >= 0 && p <= 1))
    throw new UsageError(`--${name} takes a probability from 0 to 1, got ${JSON.stringify(text)}`);
  return p;
}

/** Parses `--rate-limit 50/10s` into a rate limit; a UsageError otherwise. */
export function parseRateLimit(text: string): { limit: number; windowMs: number } {
  const [count, window] = text.split('/');
  const limit = Number(count);
  const windowMs = window === undefined ? undefined : parseDuration(window);
  if (!Number.isInteger(limit) || limit < 1 || windowMs === undefined) {
    throw new UsageError(`--rate-limit takes N/WINDOW such as 50/10s, got ${JSON.stringify(text)}`);
  }
  return { limit, windowMs };
}

/** The value of `--name` as a duration (`90s`, `15m`, `2h`, `1d`; a bare number is seconds); a UsageError otherwise. */
export function durationOption(name: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new UsageError(
      `--${name} takes a duration such as 90s, 15m, 2h or 1d, got ${JSON.stringify(text)}`,
    );
  return ms;
}
