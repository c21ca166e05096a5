import { z } from 'zod';
import { defineListResource } from '../json-resource.js';
import { bigintId, opt, timestamp } from '../validate-record.js';

// Applications and their stage history: the funnel's facts. Fields and their
// nullability are the v3 reference's (docs/tables.md, "Analytics resources").

/** Every date-filtered list: incremental runs ask for what changed since the last run. */
export const UPDATED_AT_GTE = { parameter: 'updated_at', operator: 'gte' } as const;

/**
 * An application of `/v3/applications`. `answers`, `location_address` and
 * `custom_fields` are free text (personal data): left unchecked so that a
 * field policy may drop or hash them, and never a typed column.
 */
export const applicationSchema = z.looseObject({
  id: bigintId,
  candidate_id: opt(bigintId),
  job_id: opt(bigintId),
  job_post_id: opt(bigintId),
  source_id: opt(bigintId),
  referrer_id: opt(bigintId),
  recruiter_id: opt(bigintId),
  coordinator_id: opt(bigintId),
  agency_note_id: opt(bigintId),
  stage_id: opt(bigintId),
  job_interview_stage_id: opt(bigintId),
  rejection_reason_id: opt(bigintId),
  stage_name: opt(z.string()),
  // The response says in_process where the query and v1 say active; any text is kept.
  status: opt(z.string()),
  prospect: opt(z.boolean()),
  needs_decision: opt(z.boolean()),
  prospective_job_ids: opt(z.array(bigintId)),
  rejected_at: opt(timestamp),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
  last_activity_at: opt(timestamp),
});

export const applications = defineListResource('applications', {
  description:
    'applications of candidates to jobs (created_at is the applied date), with source, referrer and job post',
  schema: applicationSchema,
  read: { incremental: UPDATED_AT_GTE },
  columns: {
    candidate_id: 'bigint',
    job_id: 'bigint',
    job_post_id: 'bigint',
    source_id: 'bigint',
    referrer_id: 'bigint',
    recruiter_id: 'bigint',
    coordinator_id: 'bigint',
    agency_note_id: 'bigint',
    stage_id: 'bigint',
    job_interview_stage_id: 'bigint',
    stage_name: 'text',
    status: 'text',
    prospect: 'boolean',
    needs_decision: 'boolean',
    prospective_job_ids: 'jsonb',
    rejected_at: 'timestamptz',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
    last_activity_at: 'timestamptz',
  },
});

/** A row of `/v3/application_stages`: one stage an application occupied; either time may be null (backfilled history). */
export const applicationStageSchema = z.looseObject({
  id: bigintId,
  application_id: opt(bigintId),
  job_interview_stage_id: opt(bigintId),
  entered_at: opt(timestamp),
  exited_at: opt(timestamp),
  days_in_stage: opt(bigintId),
  current: opt(z.boolean()),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const applicationStages = defineListResource('application_stages', {
  description:
    "applications' stage history: one row per interview stage an application entered, with entered and exited times",
  schema: applicationStageSchema,
  read: { incremental: UPDATED_AT_GTE },
  columns: {
    application_id: 'bigint',
    job_interview_stage_id: 'bigint',
    entered_at: 'timestamptz',
    exited_at: 'timestamptz',
    days_in_stage: 'bigint',
    current: 'boolean',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
});

/** A stage of a job's pipeline, `/v3/job_interview_stages`; retired stages (active false) are kept. */
export const jobInterviewStageSchema = z.looseObject({
  id: bigintId,
  job_id: opt(bigintId),
  name: opt(z.string()),
  sort_order: opt(bigintId),
  active: opt(z.boolean()),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const jobInterviewStages = defineListResource('job_interview_stages', {
  description: "jobs' pipeline stages (name, sort_order), retired ones included",
  schema: jobInterviewStageSchema,
  read: { incremental: UPDATED_AT_GTE },
  columns: {
    job_id: 'bigint',
    name: 'text',
    sort_order: 'bigint',
    active: 'boolean',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
});
