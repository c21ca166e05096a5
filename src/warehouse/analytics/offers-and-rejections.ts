import { type AnalyticsView, columns } from './analytics-view.js';
import { withCtes } from './funnel.js';
import { builtIn, rate, records, type Scope } from './scope.js';

/** Latest offers resolved as Accepted or Rejected, with their month (UTC) and the job's department. */
function resolvedCte(scope: Scope): string {
  return `${withCtes(['latest_offers'], scope)},
    resolved as (
      select o.account, o.job_id, o.status,
        date_trunc('month', o.resolved_at at time zone 'UTC')::date as month,
        coalesce(hiresync.try_bigint(j.data->'department_id'),
          hiresync.try_bigint(j.data->'departments'->0->'id')) as department_id
      from latest_offers o
      left join (${builtIn('jobs', scope)}) j on j.account = o.account and j.id = o.job_id
      where o.status in ('Accepted', 'Rejected') and o.resolved_at is not null
    )`;
}

const COUNTS = `count(*) filter (where status = 'Accepted') as accepted,
      count(*) filter (where status = 'Rejected') as declined,
      ${rate("count(*) filter (where status = 'Accepted')", 'count(*)')} as acceptance_rate`;

const ACCEPTANCE = [
  ['month', 'date', 'The month (UTC) the offers were resolved in, as its first day.'],
  ['accepted', 'bigint', 'Latest offers of an application accepted that month.'],
  ['declined', 'bigint', 'Latest offers of an application rejected (declined) that month.'],
  ['acceptance_rate', 'numeric', 'accepted / (accepted + declined).'],
] as const;

export const offerAcceptance: AnalyticsView = {
  name: 'offer_acceptance',
  comment:
    "One row per job and month in which an application's latest offer was resolved (Accepted or Rejected): accepted, declined and the acceptance rate.",
  columns: columns(['job_id', 'bigint', "The offer's job."], ...ACCEPTANCE),
  body: (scope) => `${resolvedCte(scope)}
    select account, job_id, month, ${COUNTS}
    from resolved group by account, job_id, month`,
};

export const offerAcceptanceByDepartment: AnalyticsView = {
  name: 'offer_acceptance_by_department',
  comment:
    "One row per department (of the offer's job) and month in which an application's latest offer was resolved: accepted, declined and the acceptance rate.",
  columns: columns(
    [
      'department_id',
      'bigint',
      "The job's department_id; null for a job without one (or unknown).",
    ],
    ['department_name', 'text', "The department's name (departments)."],
    ...ACCEPTANCE,
  ),
  body: (scope) => `${resolvedCte(scope)}
    select r.account, r.department_id, d.data->>'name' as department_name, r.month, ${COUNTS}
    from resolved r
    left join (${records('departments', scope)}) d on d.account = r.account and d.id = r.department_id
    group by r.account, r.department_id, d.data->>'name', r.month`,
};

export const rejectionReasons: AnalyticsView = {
  name: 'rejection_reasons',
  comment:
    'One row per stage (the last stage the rejected application reached) and rejection reason: the applications rejected so (rejection_details of applications not deleted).',
  columns: columns(
    [
      'stage_name',
      'text',
      "The name of the application's last stage; null when it has no stage row.",
    ],
    ['rejection_reason_id', 'bigint', 'rejection_reasons.id; null when the rejection names none.'],
    ['reason_name', 'text', "The reason's name."],
    ['reason_type', 'text', "The reason's type key (e.g. WE_REJECTED_THEM, THEY_REJECTED_US)."],
    ['rejections', 'bigint', 'Distinct applications rejected so.'],
  ),
  body: (scope) => `${withCtes(['last_stages'], scope)},
    details as (
      select d.account, hiresync.try_bigint(d.data->'application_id') as application_id,
        hiresync.try_bigint(d.data->'rejection_reason_id') as rejection_reason_id
      from (${records('rejection_details', scope)}) d
    )
    select d.account, l.name as stage_name, d.rejection_reason_id, r.data->>'name' as reason_name,
      r.data->'type'->>'key' as reason_type, count(distinct d.application_id) as rejections
    from details d
    join applications a on a.account = d.account and a.id = d.application_id
    left join last_stages l on l.account = d.account and l.application_id = d.application_id
    left join (${records('rejection_reasons', scope)}) r on r.account = d.account and r.id = d.rejection_reason_id
    group by d.account, l.name, d.rejection_reason_id, r.data->>'name', r.data->'type'->>'key'`,
};
