import { z } from 'zod';

const BIGINT_LIMIT = 2 ** 63;

/**
 * An API id: an integer within Postgres bigint. Numbers are never coerced from
 * strings. JSON.parse rounds 2^63 - 1 up to 2^63, so the bound is inclusive
 * here and Postgres, reading the exact digits, rejects a true overflow.
 */
export const bigintId = z
  .number()
  .refine((n) => Number.isInteger(n) && Math.abs(n) <= BIGINT_LIMIT, {
    message: 'must be an integer within bigint range',
  });

const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)$/i;

/** True for an ISO 8601 timestamp with a zone that names a real instant (no Feb 30, no hour 25). */
export function isIsoTimestamp(text: string): boolean {
  const m = ISO_TIMESTAMP.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(
    Number,
  ) as number[];
  const date = new Date(Date.UTC(year as number, (month as number) - 1, day));
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === (month as number) - 1 &&
    date.getUTCDate() === day &&
    (hour as number) < 24 &&
    (minute as number) < 60 &&
    (second as number) < 60
  );
}

export const timestamp = z
  .string()
  .refine(isIsoTimestamp, { message: 'must be an ISO 8601 timestamp with a zone' });

/** A key the API left out counts as null: every field but id is optional and nullable. */
export const opt = <T extends z.ZodType>(schema: T) => schema.nullish();

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  return typeof value;
}

function at(record: unknown, path: readonly PropertyKey[]): unknown {
  let value = record;
  for (const key of path) value = (value as Record<PropertyKey, unknown> | null | undefined)?.[key];
  return value;
}

/**
 * The validator of a resource's schema: it returns undefined when a record
 * can be stored, else the reason it cannot (every problem, naming each field).
 * A record must be an object; nothing is coerced.
 */
export function validatorFor(schema: z.ZodType): (record: unknown) => string | undefined {
  return (record) => validateWith(schema, record);
}

function validateWith(schema: z.ZodType, record: unknown): string | undefined {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    return `record is ${describe(record)}, not an object`;
  }
  const result = schema.safeParse(record);
  if (result.success) return undefined;
  return result.error.issues
    .map((issue) => {
      const field = issue.path.join('.') || 'record';
      const value = at(record, issue.path);
      if (value === undefined && issue.path.length > 0) return `${field} is missing`;
      return `${field} ${issue.code === 'custom' ? issue.message : 'has the wrong type'}: got ${describe(value)}`;
    })
    .join('; ');
}

/** A calendar date as the API writes `_on` fields: `2026-03-02` (a real day). */
export const isoDate = z.iso.date();
