import { type AnalyticsView, columns } from './analytics-view.js';
import { withCtes } from './funnel.js';
import { accountCondition, days, type Moment, rate, type Scope } from './scope.js';

/**
 * pipeline_conversion's select over `moment`'s records: now, or (in
 * pipeline_as_of) the versions of applications, application_stages and
 * job_interview_stages hiresync's history held at `$1`.
 */
function pipelineBody(scope: Scope, moment: Moment): string {
  // One pass over the stage rows: each (stage, application) once, with the
  // application's last stage (last_stages' order, by a window) beside it;
  // then plain counts per stage. Every count is of distinct applications.
  return `${withCtes(['stages', 'stage_rows'], scope, moment)},
    entries as (
      select distinct r.account, r.stage_id, r.application_id, r.status, r.sort_order,
        first_value(r.sort_order) over latest as last_order,
        first_value(r.stage_id) over latest as last_stage_id
      from stage_rows r
      where r.funnel
      window latest as (partition by r.account, r.application_id
        order by r.sort_order desc nulls last, r.stage_id desc)
    ),
    counts as (
      select account, stage_id, count(*) as entered,
        count(*) filter (where last_order > sort_order or status = 'hired') as moved_on,
        count(*) filter (where status = 'rejected' and last_stage_id = stage_id) as rejected,
        count(*) filter (where status = 'active' and last_stage_id = stage_id) as still_there
      from entries
      group by account, stage_id
    )
    select s.account, s.job_id, s.id as stage_id, s.name as stage_name, s.sort_order as stage_order,
      coalesce(c.entered, 0) as entered, coalesce(c.moved_on, 0) as moved_on,
      coalesce(c.rejected, 0) as rejected, coalesce(c.still_there, 0) as still_there,
      ${rate('coalesce(c.moved_on, 0)', 'coalesce(c.entered, 0)')} as pass_through_rate,
      s.active as stage_active
    from stages s
    left join counts c on c.account = s.account and c.stage_id = s.id`;
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
