/**
 * The never-raising casts of the analytics views, with a fast path in front
 * of hiresync's functions (migrations/hiresync/0003_safe_casts.ts and
 * 0004_typed_column_names.ts) that gives exactly their answer.
 *
 * hiresync.try_timestamptz_utc is plpgsql with an exception block (a
 * subtransaction per call) and settings of its own (TimeZone, DateStyle
 * changed and restored per call): over a few hundred thousand records that
 * is most of a view's time. Most values the API sends are plain ISO 8601
 * timestamps with an explicit offset, whose reading depends on no session
 * setting and cannot fail: those are cast directly, in the view's own
 * expression. Anything else (no offset, a date alone, Feb 29, 24:00, a leap
 * second, a year before 1000, more than microseconds) goes to the function,
 * so the answer is the function's, byte for byte, and nothing ever raises.
 */

/** Month and day that exist in every year (Feb 29 is left to the function). */
const MONTH_DAY =
  '(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8])';

/**
 * A timestamp Postgres reads the same under any TimeZone and DateStyle and
 * never refuses: a four-digit year from 1000, a valid month and day, hours
 * 00–23, minutes and seconds 00–59, at most six fraction digits, and an
 * offset (Z, or ±hh, ±hhmm, ±hh:mm within ±14:59; Postgres refuses beyond
 * 15:59).
 */
export const PLAIN_TIMESTAMP = `^[1-9][0-9]{3}-(${MONTH_DAY})[T ]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?(Z|[+-](0[0-9]|1[0-4])(:?[0-5][0-9])?)$`;

/**
 * hiresync.try_timestamptz_utc(`json`) (`json` a jsonb expression): null for
 * anything but a JSON string (as the function's first test), a plain
 * timestamp (see {@link PLAIN_TIMESTAMP}) cast directly, any other string
 * through the function.
 */
export function timestampUtc(json: string): string {
  return `case when jsonb_typeof(${json}) = 'string' then case when (${json} #>> '{}') ~ '${PLAIN_TIMESTAMP}' then (${json} #>> '{}')::timestamptz else hiresync.try_timestamptz_utc(${json}) end end`;
}
