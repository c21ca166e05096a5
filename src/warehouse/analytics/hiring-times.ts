import { type AnalyticsView, columns } from './analytics-view.js';
import { timestampUtc } from './casts.js';
import { withCtes } from './funnel.js';
import { builtIn, days, records, type Scope } from './scope.js';

/** Openings (not deleted) with their close reason's name. */
function openingsCte(scope: Scope): string {
  return `openings as (
      select o.account, o.id,
        hiresync.try_bigint(o.data->'job_id') as job_id,
        ${timestampUtc("o.data->'opened_at'")} as opened_at,
        ${timestampUtc("o.data->'closed_at'")} as closed_at,
        hiresync.try_bigint(o.data->'application_id') as application_id,
        hiresync.try_bigint(o.data->'close_reason_id') as close_reason_id,
        c.data->>'name' as close_reason
      from (${records('openings', scope)}) o
      left join (${records('close_reasons', scope)}) c
        on c.account = o.account and c.id = hiresync.try_bigint(o.data->'close_reason_id')
    )`;
}

export const timeToHire: AnalyticsView = {
  name: 'time_to_hire',
  comment:
    'One row per hired funnel application: applied, first offered and hired (the earliest close of an opening it filled, else its accepted latest offer), and the days between.',
  columns: columns(
    ['application_id', 'bigint', 'The hired application.'],
    ['job_id', 'bigint', "The application's job."],
    ['applied_at', 'timestamptz', "The application's created_at (when it was applied)."],
    [
      'first_offer_at',
      'timestamptz',
      'The earliest created_at of its offers (any version); null when none.',
    ],
    [
      'hired_at',
      'timestamptz',
      "The earliest closed_at of an opening naming it, else its latest offer's resolved_at when that offer is Accepted, else null.",
    ],
    ['days_to_offer', 'numeric', 'Days from applied_at to first_offer_at.'],
    ['days_to_hire', 'numeric', 'Days from applied_at to hired_at.'],
    ['hired_at_source', 'text', "'opening', 'offer', or null when neither tells."],
  ),
  body: (scope) => `${withCtes(['funnel', 'latest_offers'], scope)}, ${openingsCte(scope)},
    hires as (
      select f.account, f.id, f.job_id, f.created_at,
        (select min(o.created_at) from offers o where o.account = f.account and o.application_id = f.id) as first_offer_at,
        (select min(p.closed_at) from openings p where p.account = f.account and p.application_id = f.id) as opening_closed_at,
        case when l.status = 'Accepted' then l.resolved_at end as offer_accepted_at
      from funnel f
      left join latest_offers l on l.account = f.account and l.application_id = f.id
      where f.hired
    )
    select account, id as application_id, job_id, created_at as applied_at, first_offer_at,
      coalesce(opening_closed_at, offer_accepted_at) as hired_at,
      ${days('created_at', 'first_offer_at')} as days_to_offer,
      ${days('created_at', 'coalesce(opening_closed_at, offer_accepted_at)')} as days_to_hire,
      case when opening_closed_at is not null then 'opening' when offer_accepted_at is not null then 'offer' end as hired_at_source
    from hires`,
};

/** Whether an opening of `openings` was filled: closed, for a reason whose name starts with `Hire -`. */
const FILLED = `(closed_at is not null and coalesce(starts_with(close_reason, 'Hire -'), false))`;

export const timeToFill: AnalyticsView = {
  name: 'time_to_fill',
  comment:
    'One row per opening: when it opened and closed, why, whether a hire filled it (a close reason named "Hire - ..."), and the days to fill it.',
  columns: columns(
    ['opening_id', 'bigint', 'openings.id.'],
    ['job_id', 'bigint', "The opening's job."],
    ['opened_at', 'timestamptz', 'When the opening opened.'],
    ['closed_at', 'timestamptz', 'When it closed; null while open.'],
    ['close_reason_id', 'bigint', 'close_reasons.id.'],
    ['close_reason', 'text', "The close reason's name."],
    ['filled', 'boolean', "Closed, for a reason whose name starts with 'Hire -'."],
    ['application_id', 'bigint', 'The application the opening names (its hire).'],
    ['days_to_fill', 'numeric', 'Days from opened_at to closed_at when filled; else null.'],
  ),
  body: (scope) => `with ${openingsCte(scope)}
    select account, id as opening_id, job_id, opened_at, closed_at, close_reason_id, close_reason,
      ${FILLED} as filled, application_id,
      case when ${FILLED} then ${days('opened_at', 'closed_at')} end as days_to_fill
    from openings`,
};

export const timeToFillByJob: AnalyticsView = {
  name: 'time_to_fill_by_job',
  comment:
    'One row per job with at least one opening: its openings, those open, those filled, and the average, median and longest days to fill over the filled ones.',
  columns: columns(
    ['job_id', 'bigint', 'The job (null: openings naming none).'],
    ['job_name', 'text', "The job's name (jobs.data->>'name')."],
    ['openings', 'bigint', 'Its openings.'],
    ['open_openings', 'bigint', 'Of them, those not closed.'],
    ['filled_openings', 'bigint', 'Of them, those filled (see time_to_fill.filled).'],
    ['avg_days_to_fill', 'numeric', 'Average days to fill over the filled openings.'],
    ['median_days_to_fill', 'numeric', 'Median (percentile_cont 0.5) over the filled openings.'],
    ['max_days_to_fill', 'numeric', 'Longest days to fill over the filled openings.'],
  ),
  body: (scope) => `with ${openingsCte(scope)},
    filled as (
      select *, ${FILLED} as filled,
        case when ${FILLED} then ${days('opened_at', 'closed_at')} end as days_to_fill
      from openings
    )
    select f.account, f.job_id, j.data->>'name' as job_name, count(*) as openings,
      count(*) filter (where f.closed_at is null) as open_openings,
      count(*) filter (where f.filled) as filled_openings,
      avg(f.days_to_fill) as avg_days_to_fill,
      percentile_cont(0.5) within group (order by f.days_to_fill::float8) as median_days_to_fill,
      max(f.days_to_fill) as max_days_to_fill
    from filled f
    left join (${builtIn('jobs', scope)}) j on j.account = f.account and j.id = f.job_id
    group by f.account, f.job_id, j.data->>'name'`,
};
