/**
 * The columns of each analytics view and how a test reads them back from
 * Postgres so that they compare with the reference's values: ids as decimal
 * text, counts and orders as numbers (exact), days and rates as numbers
 * (within a tolerance), timestamps as epoch ms, months as `YYYY-MM-DD`.
 */
export type ColumnKind = 'id' | 'count' | 'numeric' | 'timestamp' | 'date' | 'text' | 'boolean';

const counts = {
  applications: 'count',
  interviewed: 'count',
  offers: 'count',
  hires: 'count',
} as const;

const pipeline = {
  job_id: 'id',
  stage_id: 'id',
  stage_name: 'text',
  stage_order: 'count',
  entered: 'count',
  moved_on: 'count',
  rejected: 'count',
  still_there: 'count',
  pass_through_rate: 'numeric',
  stage_active: 'boolean',
} as const;

const acceptance = {
  month: 'date',
  accepted: 'count',
  declined: 'count',
  acceptance_rate: 'numeric',
} as const;

/** The views of an account's analytics schema (pipeline_as_of aside). */
export type AnalyticsView =
  | 'source_of_hire'
  | 'source_of_hire_by_referrer'
  | 'source_of_hire_by_job_board'
  | 'source_of_hire_by_job'
  | 'source_of_hire_by_tracking_link'
  | 'pipeline_conversion'
  | 'time_in_stage'
  | 'time_to_hire'
  | 'time_to_fill'
  | 'time_to_fill_by_job'
  | 'offer_acceptance'
  | 'offer_acceptance_by_department'
  | 'rejection_reasons'
  | 'diversity_funnel';

/** Every view's columns, in the spec's order. */
export const VIEW_COLUMNS: Readonly<Record<AnalyticsView, Readonly<Record<string, ColumnKind>>>> = {
  source_of_hire: {
    source_id: 'id',
    source_name: 'text',
    source_type: 'text',
    ...counts,
    interview_rate: 'numeric',
    offer_rate: 'numeric',
    hire_rate: 'numeric',
  },
  source_of_hire_by_referrer: {
    referrer_id: 'id',
    referrer_name: 'text',
    ...counts,
    hire_rate: 'numeric',
  },
  source_of_hire_by_job_board: {
    job_board_id: 'id',
    job_board_name: 'text',
    ...counts,
    hire_rate: 'numeric',
  },
  source_of_hire_by_job: { job_id: 'id', job_name: 'text', ...counts, hire_rate: 'numeric' },
  source_of_hire_by_tracking_link: {
    tracking_link_id: 'id',
    token: 'text',
    source_id: 'id',
    ...counts,
    ambiguous_applications: 'count',
  },
  pipeline_conversion: pipeline,
  time_in_stage: {
    application_id: 'id',
    job_id: 'id',
    stage_id: 'id',
    stage_name: 'text',
    stage_order: 'count',
    current: 'boolean',
    entered_at: 'timestamp',
    entered_at_source: 'text',
    exited_at: 'timestamp',
    exited_at_source: 'text',
    days: 'numeric',
  },
  time_to_hire: {
    application_id: 'id',
    job_id: 'id',
    applied_at: 'timestamp',
    first_offer_at: 'timestamp',
    hired_at: 'timestamp',
    days_to_offer: 'numeric',
    days_to_hire: 'numeric',
    hired_at_source: 'text',
  },
  time_to_fill: {
    opening_id: 'id',
    job_id: 'id',
    opened_at: 'timestamp',
    closed_at: 'timestamp',
    close_reason_id: 'id',
    close_reason: 'text',
    filled: 'boolean',
    application_id: 'id',
    days_to_fill: 'numeric',
  },
  time_to_fill_by_job: {
    job_id: 'id',
    job_name: 'text',
    openings: 'count',
    open_openings: 'count',
    filled_openings: 'count',
    avg_days_to_fill: 'numeric',
    median_days_to_fill: 'numeric',
    max_days_to_fill: 'numeric',
  },
  offer_acceptance: { job_id: 'id', ...acceptance },
  offer_acceptance_by_department: {
    department_id: 'id',
    department_name: 'text',
    ...acceptance,
  },
  rejection_reasons: {
    stage_name: 'text',
    rejection_reason_id: 'id',
    reason_name: 'text',
    reason_type: 'text',
    rejections: 'count',
  },
  diversity_funnel: {
    source: 'text',
    question: 'text',
    answer: 'text',
    step: 'text',
    step_order: 'count',
    people: 'count',
    suppressed: 'boolean',
  },
};

/** The columns of pipeline_as_of(at): those of pipeline_conversion. */
export const PIPELINE_AS_OF_COLUMNS = pipeline;

/**
 * A select list reading `columns` back in the reference's representation
 * (column names are the spec's, safe as written).
 */
export function selectListOf(columns: Readonly<Record<string, ColumnKind>>): string {
  return Object.entries(columns)
    .map(([name, kind]) => {
      const col = `"${name}"`;
      switch (kind) {
        case 'id':
          return `${col}::text as ${col}`;
        case 'count':
        case 'numeric':
          return `${col}::float8 as ${col}`;
        case 'timestamp':
          return `(extract(epoch from ${col}) * 1000)::float8 as ${col}`;
        case 'date':
          return `${col}::text as ${col}`;
        default:
          return col;
      }
    })
    .join(', ');
}
