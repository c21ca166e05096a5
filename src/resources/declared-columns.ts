/** The type of a column a declaration fixes in its typed view. */
export type DeclaredColumnType =
  | 'bigint'
  | 'numeric'
  | 'boolean'
  | 'timestamptz'
  | 'date'
  | 'text'
  | 'jsonb';

const BIGINT_LIMIT = 2 ** 63;

/**
 * A value the field policy hashed, as privacy/field-hasher.ts stores it
 * (`hmac-sha256:` and 64 lowercase hex digits); repeated here because
 * declarations import nothing but zod and the sync types.
 */
const STORED_HASH = /^hmac-sha256:[0-9a-f]{64}$/;

/** `YYYY-MM-DD` that names a real day (no Feb 30). */
function isRealDay(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (!m) return false;
  const [year, month, day] = [m[1], m[2], m[3]].map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}

/**
 * Whether `value` is of the kind a typed view's column of `type` reads (the
 * kinds hiresync.try_bigint, try_numeric, try_boolean, try_date and
 * try_timestamptz_utc accept): a whole number within bigint, a number, a
 * boolean, a `YYYY-MM-DD` string, a string that starts with a real day.
 * text and jsonb read any value; null reads as null everywhere, and so does
 * a value the field policy hashed.
 */
export function readsAs(value: unknown, type: DeclaredColumnType): boolean {
  if (value === null || value === undefined) return true;
  // Hashed by the field policy before it is checked: the policy's doing, not
  // the API's; the column reads it as null and privacy.md says so.
  if (typeof value === 'string' && STORED_HASH.test(value)) return true;
  switch (type) {
    case 'bigint':
      return (
        typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= BIGINT_LIMIT
      );
    case 'numeric':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && isRealDay(value);
    case 'timestamptz':
      return typeof value === 'string' && isRealDay(value);
    default:
      return true;
  }
}

/**
 * Why `record` (an object) does not fit the columns its declaration fixes,
 * or undefined when it does: each declared key holding a value of another
 * kind is named. Such a record is malformed: it is never coerced, it goes to
 * rejected_records, so no key only it carries ever becomes a typed view's
 * column, and no declared column is read from it.
 */
export function declaredColumnsProblem(
  record: object,
  columns: Readonly<Record<string, DeclaredColumnType>>,
): string | undefined {
  const problems: string[] = [];
  for (const [key, type] of Object.entries(columns)) {
    const value = (record as Record<string, unknown>)[key];
    if (!readsAs(value, type)) {
      problems.push(`${key} is not a ${type} as its declared column says: got ${shown(value)}`);
    }
  }
  return problems.length === 0 ? undefined : problems.join('; ');
}

function shown(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${value}`;
  return typeof value;
}
