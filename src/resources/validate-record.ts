import { z } from 'zod';
import type { ResourceName } from '../config.js';

const BIGINT_LIMIT = 2 ** 63;

/**
 * An API id: an integer within Postgres bigint. Numbers are never coerced from
 * strings. JSON.parse rounds 2^63 - 1 up to 2^63, so the bound is inclusive
 * here and Postgres, reading the exact digits, rejects a true overflow.
 */
const bigintId = z.number().refine((n) => Number.isInteger(n) && Math.abs(n) <= BIGINT_LIMIT, {
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

const timestamp = z
  .string()
  .refine(isIsoTimestamp, { message: 'must be an ISO 8601 timestamp with a zone' });

// A key the API left out counts as null: every field but id is optional and nullable.
const opt = <T extends z.ZodType>(schema: T) => schema.nullish();

const trackingLinkSchema = z.looseObject({
  id: bigintId,
  job_id: opt(bigintId),
  job_post_id: opt(bigintId),
  job_board: opt(
    z.looseObject({ id: opt(bigintId), company_name: opt(z.string()), url_token: opt(z.string()) }),
  ),
  token: opt(z.string()),
  related_post_id: opt(bigintId),
  related_post_type: opt(z.string()),
  credited_to: opt(
    z.looseObject({ id: opt(bigintId), name: opt(z.string()), employee_id: opt(z.string()) }),
  ),
  source: opt(z.looseObject({ id: opt(bigintId), public_name: opt(z.string()) })),
  // The flat shape some deployments send.
  job_board_id: opt(bigintId),
  referrer_id: opt(bigintId),
  source_id: opt(bigintId),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

// Fields of jobs and job posts are not in the spec: only the id is checked.
const recordSchema = z.looseObject({ id: bigintId });

const SCHEMAS: Record<ResourceName, z.ZodType> = {
  jobs: recordSchema,
  job_posts: recordSchema,
  tracking_links: trackingLinkSchema,
};

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
 * Checks one record against the spec's types. Returns undefined when it can be
 * stored, else the reason it cannot (every problem, naming each field).
 */
export function validateRecord(resource: ResourceName, record: unknown): string | undefined {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    return `record is ${describe(record)}, not an object`;
  }
  const result = SCHEMAS[resource].safeParse(record);
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
