import { type AnalyticsView, columns } from './analytics-view.js';
import { withCtes } from './funnel.js';
import { accountCondition, days, type Moment, rate, type Scope } from './scope.js';

/**
 * pipeline_conversion's select over `moment`'s records: now, or (in
 * pipeline_as_of) the versions of applications, application_stages and
 * job_interview_stages hiresync's history held at `$1`.
 */
function pipelineBody(scope: Scope, moment: Moment): string {
  return `${withCtes(['stages', 'stage_rows', 'last_stages'], scope, moment)}
    select s.account, s.job_id, s.id as stage_id, s.name as stage_name, s.sort_order as stage_order,
      count(distinct r.application_id) as entered,
      count(distinct r.application_id) filter (where l.sort_order > s.sort_order or a.status = 'hired') as moved_on,
      count(distinct r.application_id) filter (where a.status = 'rejected' and l.stage_id = s.id) as rejected,
      count(distinct r.application_id) filter (where a.status = 'active' and l.stage_id = s.id) as still_there,
      ${rate("count(distinct r.application_id) filter (where l.sort_order > s.sort_order or a.status = 'hired')", 'count(distinct r.application_id)')} as pass_through_rate,
      s.active as stage_active
    from stages s
    left join stage_rows r on r.account = s.account and r.stage_id = s.id and r.funnel
    left join applications a on a.account = r.account and a.id = r.application_id
    left join last_stages l on l.account = r.account and l.application_id = r.application_id
    group by s.account, s.job_id, s.id, s.name, s.sort_order, s.active`;
}

export const pipelineConversion: AnalyticsView = {
  name: 'pipeline_conversion',
  comment:
    "One row per stage of a job's pipeline (job_interview_stages): funnel applications of the job that entered it, moved on past it, were rejected at it, are still there, and the pass-through rate.",
  columns: columns(
    ['job_id', 'bigint', "The stage's job."],
    ['stage_id', 'bigint', 'job_interview_stages.id.'],
    ['stage_name', 'text', "The stage's name."],
    ['stage_order', 'bigint', "The stage's sort_order: its place in the job's pipeline."],
    ['entered', 'bigint', 'Funnel applications of the job with a stage row for this stage.'],
    [
      'moved_on',
      'bigint',
      'Of those, applications whose last stage comes after this one (higher order), or that are hired.',
    ],
    ['rejected', 'bigint', 'Of those, applications rejected whose last stage is this one.'],
    ['still_there', 'bigint', 'Of those, active applications whose last stage is this one.'],
    ['pass_through_rate', 'numeric', 'moved_on / entered; null when none entered.'],
    ['stage_active', 'boolean', 'Whether the stage is in the current plan (false: retired).'],
  ),
  body: (scope) => pipelineBody(scope, 'current'),
};

/** The select pipeline_as_of($1) returns over `scope`: pipeline_conversion at `$1`. */
export function pipelineAsOfBody(scope: Scope): string {
  return pipelineBody(scope, 'as of $1');
}

export const timeInStage: AnalyticsView = {
  name: 'time_in_stage',
  comment:
    "One row per stage row of a funnel application (application_stages of a stage of the application's job): when it entered and left the stage, where each time comes from, and the days between.",
  columns: columns(
    ['application_id', 'bigint', 'The application.'],
    ['job_id', 'bigint', "The application's job."],
    ['stage_id', 'bigint', 'job_interview_stages.id.'],
    ['stage_name', 'text', "The stage's name."],
    ['stage_order', 'bigint', "The stage's sort_order."],
    ['current', 'boolean', 'The API says the application is in this stage now.'],
    ['entered_at', 'timestamptz', "The API's entered_at, else the row's created_at (a proxy)."],
    ['entered_at_source', 'text', "'api' (entered_at), 'created_at' (the proxy), or null."],
    [
      'exited_at',
      'timestamptz',
      "The API's exited_at, else when hiresync's history first saw the row turn from current to not current.",
    ],
    ['exited_at_source', 'text', "'api', 'history', or null when neither tells."],
    [
      'days',
      'numeric',
      'Days from entered_at to exited_at (fractional); to now for a current row without exit; else null.',
    ],
  ),
  body: (scope) => `${withCtes(['stage_rows'], scope)},
    history_exits as (
      select h.account, h.id, min(h.valid_from) as exited_at
      from hiresync."data_application_stages_history" h
      where (${accountCondition(scope)}) and not h.deleted
        and hiresync.try_boolean(h.data->'current') is false
        and exists (select 1 from hiresync."data_application_stages_history" p
          where p.account = h.account and p.id = h.id and p.valid_from < h.valid_from
            and not p.deleted and hiresync.try_boolean(p.data->'current') is true)
      group by h.account, h.id
    ),
    times as (
      select r.*,
        coalesce(r.entered_at, r.created_at) as entered,
        case when r.entered_at is not null then 'api' when r.created_at is not null then 'created_at' end as entered_source,
        coalesce(r.exited_at, x.exited_at) as exited,
        case when r.exited_at is not null then 'api' when x.exited_at is not null then 'history' end as exited_source
      from stage_rows r
      left join history_exits x on x.account = r.account and x.id = r.id
      where r.funnel
    )
    select account, application_id, job_id, stage_id, name as stage_name, sort_order as stage_order,
      current, entered as entered_at, entered_source as entered_at_source,
      exited as exited_at, exited_source as exited_at_source,
      case when exited is not null then ${days('entered', 'exited')}
        when current then ${days('entered', 'now()')} end as days
    from times`,
};
