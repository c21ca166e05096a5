/**
 * The input of the analytics reference: records as the API served them (plain
 * JSON objects), read the way the spec reads stored JSON, with casts that
 * never raise (/work/plan/analytics-spec.md, "Stored resources").
 */

/** A record as the API sent it. */
export type ApiRecord = Readonly<Record<string, unknown>>;

/** A local label of a standard demographic question or option (`demographic_labels`). */
export interface DemographicLabel {
  kind: 'question' | 'option';
  id: string;
  label: string;
}

/**
 * The records an account's views read: what the API serves now (records it no
 * longer lists are absent, as rows with `deleted_at` are to the views), and
 * the operator's local labels.
 */
export interface AnalyticsRecords {
  applications: readonly ApiRecord[];
  application_stages: readonly ApiRecord[];
  job_interview_stages: readonly ApiRecord[];
  offers: readonly ApiRecord[];
  openings: readonly ApiRecord[];
  close_reasons: readonly ApiRecord[];
  rejection_details: readonly ApiRecord[];
  rejection_reasons: readonly ApiRecord[];
  eeoc: readonly ApiRecord[];
  demographic_answers: readonly ApiRecord[];
  demographic_questions: readonly ApiRecord[];
  demographic_answer_options: readonly ApiRecord[];
  jobs: readonly ApiRecord[];
  job_posts: readonly ApiRecord[];
  tracking_links: readonly ApiRecord[];
  sources: readonly ApiRecord[];
  referrers: readonly ApiRecord[];
  job_boards: readonly ApiRecord[];
  departments: readonly ApiRecord[];
  demographic_labels: readonly DemographicLabel[];
}

/** No records at all: fixtures name only what they hold. */
export function noRecords(): AnalyticsRecords {
  return {
    applications: [],
    application_stages: [],
    job_interview_stages: [],
    offers: [],
    openings: [],
    close_reasons: [],
    rejection_details: [],
    rejection_reasons: [],
    eeoc: [],
    demographic_answers: [],
    demographic_questions: [],
    demographic_answer_options: [],
    jobs: [],
    job_posts: [],
    tracking_links: [],
    sources: [],
    referrers: [],
    job_boards: [],
    departments: [],
    demographic_labels: [],
  };
}

const MIN_BIGINT = -(2n ** 63n);
const MAX_BIGINT = 2n ** 63n - 1n;

/**
 * A JSON number that is a whole bigint, as its decimal text, else null
 * (hiresync.try_bigint: a string, even of digits, is not a number).
 */
export function bigintOf(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isInteger(value)) return null;
  const n = BigInt(value);
  return n < MIN_BIGINT || n > MAX_BIGINT ? null : n.toString();
}

/** A JSON boolean, else null (hiresync.try_boolean). */
export function booleanOf(value: unknown): boolean | null {
  return typeof value === 'boolean' ? value : null;
}

/** A JSON string, else null (`->>` of a string; other JSON types are never names here). */
export function textOf(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** A whole JSON number as a number (sort orders, versions), else null. */
export function integerOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * An ISO 8601 timestamp string as epoch milliseconds (fractions of a
 * millisecond kept, microseconds rounded as Postgres rounds them), read as
 * UTC when it has no offset (hiresync.try_timestamptz_utc), else null.
 */
export function timestampOf(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const m = TIMESTAMP.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone = 'Z'] = m;
  const whole = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(whole)) return null;
  const micros = Math.round(Number(`0.${fraction || '0'}`) * 1e6);
  let offsetMinutes = 0;
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.replace(':', '');
    const sign = digits.startsWith('-') ? -1 : 1;
    offsetMinutes = sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5) || '0'));
  }
  return whole + micros / 1000 - offsetMinutes * 60_000;
}

/** Fractional days from `a` to `b` (epoch ms), null when either is null; negative kept. */
export function daysBetween(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : (b - a) / 86_400_000;
}

/** `numerator / denominator`, null when the denominator is 0. */
export function rate(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : numerator / denominator;
}

/** Orders bigint ids given as decimal text. */
export function compareIds(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The records of `list` by their id (records without a bigint id are never joined to). */
export function byId(list: readonly ApiRecord[]): Map<string, ApiRecord> {
  const map = new Map<string, ApiRecord>();
  for (const record of list) {
    const id = bigintOf(record.id);
    if (id !== null) map.set(id, record);
  }
  return map;
}

/** The records of `list` grouped by the bigint id in `key`. */
export function groupBy(list: readonly ApiRecord[], key: string): Map<string, ApiRecord[]> {
  const map = new Map<string, ApiRecord[]>();
  for (const record of list) {
    const id = bigintOf(record[key]);
    if (id === null) continue;
    const group = map.get(id);
    if (group) group.push(record);
    else map.set(id, [record]);
  }
  return map;
}

/** A nested object's key, e.g. `type.key` of a rejection reason. */
export function nestedOf(record: ApiRecord | undefined, key: string, inner: string): unknown {
  const value = record?.[key];
  return value && typeof value === 'object' ? (value as Record<string, unknown>)[inner] : null;
}
