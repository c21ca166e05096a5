import {
  type AnalyticsColumn,
  type AnalyticsView,
  scopeColumns,
  viewSelect,
} from './analytics-view.js';
import { diversityFunnel } from './diversity-funnel.js';
import { timeToFill, timeToFillByJob, timeToHire } from './hiring-times.js';
import {
  offerAcceptance,
  offerAcceptanceByDepartment,
  rejectionReasons,
} from './offers-and-rejections.js';
import { pipelineAsOfBody, pipelineConversion, timeInStage } from './pipeline.js';
import type { Scope } from './scope.js';
import {
  sourceOfHire,
  sourceOfHireByJob,
  sourceOfHireByJobBoard,
  sourceOfHireByReferrer,
  sourceOfHireByTrackingLink,
} from './source-of-hire.js';

/** Every analytics view, in the order docs/analytics.md gives them. */
export const ANALYTICS_VIEWS: readonly AnalyticsView[] = [
  sourceOfHire,
  sourceOfHireByReferrer,
  sourceOfHireByJobBoard,
  sourceOfHireByJob,
  sourceOfHireByTrackingLink,
  pipelineConversion,
  timeInStage,
  timeToHire,
  timeToFill,
  timeToFillByJob,
  offerAcceptance,
  offerAcceptanceByDepartment,
  rejectionReasons,
  diversityFunnel,
];

/** The select of `view` over `scope` (see viewSelect). */
export function analyticsSelect(view: AnalyticsView, scope: Scope): string {
  return viewSelect(view.body(scope), view.columns, scope);
}

/** The function answering pipeline_conversion as of a date. */
export const PIPELINE_AS_OF = 'pipeline_as_of';

/** Its comment. */
export const PIPELINE_AS_OF_COMMENT =
  "pipeline_as_of(at timestamptz): the rows of pipeline_conversion (same columns, same definitions) computed over the versions of applications, application_stages and job_interview_stages that hiresync's history held at `at` (the funnel as it stood then).";

/** The columns pipeline_as_of returns in `scope`. */
export function pipelineAsOfColumns(scope: Scope): AnalyticsColumn[] {
  return scopeColumns(pipelineConversion.columns, scope);
}

/**
 * The statement making `schema`.pipeline_as_of(at) for `scope`: a SQL
 * function, security definer (a role granted the account calls it without
 * any right on hiresync's tables), with the account's literal in its body
 * and a search_path of pg_catalog alone (then pg_temp, last, so no object a
 * caller makes can stand in for one it names): a caller passes a timestamp
 * and gets the account's rows, nothing else. Not inlined (security definer),
 * so no qualifier of the caller's reaches its scans.
 */
export function pipelineAsOfText(qualified: string, scope: Scope): string {
  const returns = pipelineAsOfColumns(scope)
    .map((c) => `"${c.name}" ${c.type}`)
    .join(', ');
  return `create or replace function ${qualified}("at" timestamptz)
    returns table (${returns})
    language sql stable security definer
    set search_path = pg_catalog, pg_temp
    as $body$
${viewSelect(pipelineAsOfBody(scope), pipelineConversion.columns, scope)}
$body$`;
}
