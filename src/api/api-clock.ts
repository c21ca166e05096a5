import type { ApiClockReading } from '../sync/ports.js';

/**
 * The API's clock from a response's `Date` header (an HTTP-date, RFC 9110
 * 5.6.7), read against this worker's clock at `receivedAtMs`; undefined when
 * the header is missing or unreadable. The header names a whole second, so
 * the skew takes that second at its middle.
 */
export function readApiClock(
  header: string | string[] | undefined,
  receivedAtMs: number,
): ApiClockReading | undefined {
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined || text.trim() === '') return undefined;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return undefined;
  const date = new Date(ms);
  // Outside years 1..9999 toISOString writes `+010000-…` or `-000001-…`, which Postgres does not read.
  const year = date.getUTCFullYear();
  if (year < 1 || year > 9999) return undefined;
  return { date: date.toISOString(), skewMs: ms + 500 - receivedAtMs };
}
