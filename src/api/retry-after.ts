/** Above this, a bare number in `Retry-After` (or `X-RateLimit-Reset`) is a Unix epoch time in seconds. */
export const EPOCH_SECONDS_THRESHOLD = 1e9;

/**
 * Parses a `Retry-After` header into milliseconds to wait from `nowMs`:
 * delta-seconds (`120`, leniently `1.5`), a Unix epoch time in seconds when
 * the number is above 10^9 (as some APIs send), or an HTTP-date. A time in the
 * past means 0. Returns undefined when the header is absent or unreadable.
 */
export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  nowMs: number,
): number | undefined {
  const text = (Array.isArray(value) ? value[0] : (value as string | undefined))?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) {
    const seconds = Number(text);
    if (!Number.isFinite(seconds)) return undefined;
    if (seconds > EPOCH_SECONDS_THRESHOLD) return Math.max(0, Math.ceil(seconds * 1000 - nowMs));
    return Math.ceil(seconds * 1000);
  }
  // An HTTP-date always names a weekday and a GMT zone; Date.parse alone would
  // also accept bare numbers and partial dates.
  if (!/[a-z]{3}/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
