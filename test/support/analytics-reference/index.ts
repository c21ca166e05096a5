/**
 * The analytics views' expected rows, computed in TypeScript from the
 * records the API served, following /work/plan/analytics-spec.md (never from
 * the views' SQL). The tests compare them row for row with what Postgres answers.
 */
import type { AnalyticsView } from './columns.js';
import { buildFunnel } from './funnel.js';
import {
  offerAcceptance,
  offerAcceptanceByDepartment,
  timeToFill,
  timeToFillByJob,
  timeToHire,
} from './hires.js';
import { pipelineConversion, type RecordVersion, timeInStage } from './pipeline.js';
import type { AnalyticsRecords } from './records.js';
import { diversityFunnel, rejectionReasons } from './rejections-diversity.js';
import {
  type Row,
  sourceOfHire,
  sourceOfHireByJob,
  sourceOfHireByJobBoard,
  sourceOfHireByReferrer,
  sourceOfHireByTrackingLink,
} from './source-of-hire.js';

export { buildFunnel } from './funnel.js';
export { pipelineAsOf, type RecordVersion } from './pipeline.js';
export * from './records.js';
export type { Row } from './source-of-hire.js';

/** What time_in_stage needs beyond the records. */
export interface ReferenceOptions {
  /** Versions of application_stages records in hiresync's history (default none). */
  stageHistory?: readonly RecordVersion[];
  /** The database's now() (epoch ms), for stages still current. */
  now: number;
}

/** Every view's expected rows, by view name. */
export type ExpectedViews = Record<AnalyticsView, Row[]>;

/** The expected rows of every view (pipeline_as_of aside: see pipelineAsOf). */
export function expectedAnalytics(
  records: AnalyticsRecords,
  options: ReferenceOptions,
): ExpectedViews {
  const funnel = buildFunnel(records);
  const openings = timeToFill(records);
  return {
    source_of_hire: sourceOfHire(records, funnel),
    source_of_hire_by_referrer: sourceOfHireByReferrer(records, funnel),
    source_of_hire_by_job_board: sourceOfHireByJobBoard(records, funnel),
    source_of_hire_by_job: sourceOfHireByJob(records, funnel),
    source_of_hire_by_tracking_link: sourceOfHireByTrackingLink(records, funnel),
    pipeline_conversion: pipelineConversion(funnel),
    time_in_stage: timeInStage(funnel, options.stageHistory ?? [], options.now),
    time_to_hire: timeToHire(records, funnel),
    time_to_fill: openings,
    time_to_fill_by_job: timeToFillByJob(records, openings),
    offer_acceptance: offerAcceptance(records),
    offer_acceptance_by_department: offerAcceptanceByDepartment(records),
    rejection_reasons: rejectionReasons(records),
    diversity_funnel: diversityFunnel(records, funnel),
  };
}
