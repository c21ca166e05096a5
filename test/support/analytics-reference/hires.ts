import type { Funnel } from './funnel.js';
import {
  type AnalyticsRecords,
  type ApiRecord,
  bigintOf,
  byId,
  compareIds,
  daysBetween,
  groupBy,
  integerOf,
  nestedOf,
  rate,
  textOf,
  timestampOf,
} from './records.js';
import type { Row } from './source-of-hire.js';

/** The latest of an application's offers: highest version, ties the highest id. */
export function latestOffer(offers: readonly ApiRecord[]): ApiRecord | undefined {
  let latest: ApiRecord | undefined;
  for (const offer of offers) {
    if (!latest) {
      latest = offer;
      continue;
    }
    const v = integerOf(offer.version);
    const w = integerOf(latest.version);
    // SQL's descending order puts a null version first, as the greatest.
    const later =
      v === w
        ? compareIds(bigintOf(offer.id) ?? '0', bigintOf(latest.id) ?? '0') > 0
        : v === null || (w !== null && v > w);
    if (later) latest = offer;
  }
  return latest;
}

/** 8. `time_to_hire`: one row per hired funnel application. */
export function timeToHire(records: AnalyticsRecords, funnel: Funnel): Row[] {
  const offersOf = groupBy(records.offers, 'application_id');
  const openingsOf = groupBy(records.openings, 'application_id');
  const rows: Row[] = [];
  for (const application of funnel.applications.values()) {
    if (!application.hired) continue;
    const offers = offersOf.get(application.id) ?? [];
    const appliedAt = timestampOf(application.record.created_at);
    const offerTimes = offers
      .map((o) => timestampOf(o.created_at))
      .filter((t): t is number => t !== null);
    const firstOfferAt = offerTimes.length ? Math.min(...offerTimes) : null;
    const closes = (openingsOf.get(application.id) ?? [])
      .map((o) => timestampOf(o.closed_at))
      .filter((t): t is number => t !== null);
    const latest = latestOffer(offers);
    const acceptedAt =
      latest && textOf(latest.status) === 'Accepted' ? timestampOf(latest.resolved_at) : null;
    const hiredAt = closes.length ? Math.min(...closes) : acceptedAt;
    rows.push({
      application_id: application.id,
      job_id: application.jobId,
      applied_at: appliedAt,
      first_offer_at: firstOfferAt,
      hired_at: hiredAt,
      days_to_offer: daysBetween(appliedAt, firstOfferAt),
      days_to_hire: daysBetween(appliedAt, hiredAt),
      hired_at_source: closes.length ? 'opening' : acceptedAt !== null ? 'offer' : null,
    });
  }
  return rows;
}

/** 9. `time_to_fill`: one row per opening. */
export function timeToFill(records: AnalyticsRecords): Row[] {
  const reasons = byId(records.close_reasons);
  return records.openings.flatMap((opening) => {
    const id = bigintOf(opening.id);
    if (id === null) return [];
    const openedAt = timestampOf(opening.opened_at);
    const closedAt = timestampOf(opening.closed_at);
    const reasonId = bigintOf(opening.close_reason_id);
    const reason = textOf(reasonId === null ? null : reasons.get(reasonId)?.name);
    const filled = closedAt !== null && reason?.startsWith('Hire -') === true;
    return [
      {
        opening_id: id,
        job_id: bigintOf(opening.job_id),
        opened_at: openedAt,
        closed_at: closedAt,
        close_reason_id: reasonId,
        close_reason: reason,
        filled,
        application_id: bigintOf(opening.application_id),
        days_to_fill: filled ? daysBetween(openedAt, closedAt) : null,
      },
    ];
  });
}

/** percentile_cont(0.5) of a non-empty list. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) / 2;
  const low = sorted[Math.floor(position)] ?? 0;
  const high = sorted[Math.ceil(position)] ?? 0;
  return low + (high - low) * (position - Math.floor(position));
}

/** 9b. `time_to_fill_by_job`: per job with at least one opening. */
export function timeToFillByJob(records: AnalyticsRecords, openingRows: readonly Row[]): Row[] {
  const jobs = byId(records.jobs);
  const byJob = new Map<string | null, Row[]>();
  for (const row of openingRows) {
    const jobId = row.job_id as string | null;
    byJob.set(jobId, [...(byJob.get(jobId) ?? []), row]);
  }
  return [...byJob].map(([jobId, rows]) => {
    const filled = rows.filter((r) => r.filled === true);
    const days = filled.map((r) => r.days_to_fill).filter((d): d is number => d !== null);
    return {
      job_id: jobId,
      job_name: textOf(jobId === null ? null : jobs.get(jobId)?.name),
      openings: rows.length,
      open_openings: rows.filter((r) => r.closed_at === null).length,
      filled_openings: filled.length,
      avg_days_to_fill: days.length ? days.reduce((a, b) => a + b, 0) / days.length : null,
      median_days_to_fill: days.length ? median(days) : null,
      max_days_to_fill: days.length ? Math.max(...days) : null,
    };
  });
}

/** The first day of the UTC month of `ms`, as `YYYY-MM-DD`. */
export function utcMonth(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear().toString().padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

interface Resolved {
  jobId: string | null;
  month: string;
  accepted: boolean;
}

/** Latest offers per application that were Accepted or Rejected, with their month (UTC). */
function resolvedLatestOffers(records: AnalyticsRecords): Resolved[] {
  const resolved: Resolved[] = [];
  for (const offers of groupBy(records.offers, 'application_id').values()) {
    const latest = latestOffer(offers);
    const status = textOf(latest?.status);
    const resolvedAt = timestampOf(latest?.resolved_at);
    if (!latest || resolvedAt === null || (status !== 'Accepted' && status !== 'Rejected')) {
      continue;
    }
    resolved.push({
      jobId: bigintOf(latest.job_id),
      month: utcMonth(resolvedAt),
      accepted: status === 'Accepted',
    });
  }
  return resolved;
}

function acceptanceRows(
  resolved: readonly Resolved[],
  keyOf: (r: Resolved) => string | null,
  row: (key: string | null) => Row,
): Row[] {
  const groups = new Map<string, { key: string | null; month: string; list: Resolved[] }>();
  for (const r of resolved) {
    const key = keyOf(r);
    const name = JSON.stringify([key, r.month]);
    const group = groups.get(name) ?? { key, month: r.month, list: [] };
    group.list.push(r);
    groups.set(name, group);
  }
  return [...groups.values()].map(({ key, month, list }) => {
    const accepted = list.filter((r) => r.accepted).length;
    const declined = list.length - accepted;
    return {
      ...row(key),
      month,
      accepted,
      declined,
      acceptance_rate: rate(accepted, accepted + declined),
    };
  });
}

/** 10. `offer_acceptance`: latest resolved offers by the offer's job and month. */
export function offerAcceptance(records: AnalyticsRecords): Row[] {
  return acceptanceRows(
    resolvedLatestOffers(records),
    (r) => r.jobId,
    (jobId) => ({ job_id: jobId }),
  );
}

/** The department of a job: `department_id`, else the seed shape's `departments[0].id`. */
export function departmentOfJob(job: ApiRecord | undefined): string | null {
  if (!job) return null;
  const direct = bigintOf(job.department_id);
  if (direct !== null) return direct;
  const departments = job.departments;
  return Array.isArray(departments) ? bigintOf(nestedOf({ d: departments[0] }, 'd', 'id')) : null;
}

/** 10b. `offer_acceptance_by_department`: the same by the job's department. */
export function offerAcceptanceByDepartment(records: AnalyticsRecords): Row[] {
  const jobs = byId(records.jobs);
  const departments = byId(records.departments);
  return acceptanceRows(
    resolvedLatestOffers(records),
    (r) => departmentOfJob(r.jobId === null ? undefined : jobs.get(r.jobId)),
    (departmentId) => ({
      department_id: departmentId,
      department_name: textOf(departmentId === null ? null : departments.get(departmentId)?.name),
    }),
  );
}
