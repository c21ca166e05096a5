/** A timestamp as Postgres prints a `timestamptz` in a UTC session: `2024-05-01 12:00:00.123456+00`. */
const POSTGRES_UTC = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(\.\d+)?(?:\+00(?::?00)?|Z)$/;

/**
 * A timestamp as ISO 8601 in UTC (`2024-05-01T12:00:00.123456Z`), from the
 * text Postgres prints for a `timestamptz` (microseconds kept when the
 * session's time zone is UTC; milliseconds otherwise) or from an ISO string.
 * Throws on text that is not a timestamp.
 */
export function isoTimestamp(text: string): string {
  const utc = POSTGRES_UTC.exec(text);
  if (utc) return `${utc[1]}T${utc[2]}${utc[3] ?? ''}Z`;
  // Another session time zone: `+02`, `-07:30`, `+05:30:00`.
  const date = new Date(text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
  if (Number.isNaN(date.getTime())) throw new RangeError(`not a timestamp: ${text}`);
  return date.toISOString();
}

/** {@link isoTimestamp} of a nullable column: null stays null. */
export function isoTimestampOrNull(text: string | null | undefined): string | null {
  return text == null ? null : isoTimestamp(text);
}
