import { describe, expect, it } from 'vitest';
import { ANALYTICS_RESOURCES, declarationOf } from '../../../src/resources/index.js';

const validate = (name: string, record: unknown) =>
  declarationOf(ANALYTICS_RESOURCES, name).validate(record);

// The documented example records of the v3 reference (../shared/v3-analytics-resources.md).
const DOCUMENTED: Record<string, unknown> = {
  applications: {
    id: 1,
    candidate_id: 1,
    job_id: 1,
    job_post_id: null,
    source_id: 1,
    referrer_id: 1,
    recruiter_id: 1,
    coordinator_id: 1,
    agency_note_id: 1,
    stage_id: 1,
    job_interview_stage_id: 1,
    stage_name: 'Application Review',
    status: 'in_process',
    prospect: false,
    needs_decision: false,
    rejected_at: null,
    created_at: '2024-01-01T12:30:30.000Z',
    updated_at: '2024-01-01T00:00:00.000Z',
    last_activity_at: '2024-01-01T00:00:00.000Z',
    location_address: '455 Broadway St., New York, NY',
    answers: [{ question: 'Simple question', answer: 'some answer' }],
    prospective_job_ids: [],
    custom_fields: {
      custom_field_1: { name: 'Custom Field 1', type: 'short_text', value: 'some value' },
    },
  },
  application_stages: {
    id: 1,
    application_id: 1,
    job_interview_stage_id: 1,
    entered_at: null,
    exited_at: null,
    days_in_stage: 0,
    current: false,
    created_at: '2024-01-01T12:30:30.000Z',
    updated_at: '2024-01-01T12:30:30.000Z',
  },
  rejection_details: {
    id: 1,
    application_id: 1,
    rejected_by_id: 1,
    rejection_reason_id: 1,
    rejection_note_id: 1,
    rejected_at: '2024-01-01T12:30:30.000Z',
    question_custom_fields: {
      custom_field_15: { name: 'Custom Field 15', type: 'short_text', value: 'some rejection' },
    },
    created_at: '2024-01-01T00:00:00.000Z',
    updated_at: '2024-01-01T00:00:00.000Z',
  },
  users: { id: 1, first_name: 'Admin', last_name: 'User', name: 'Admin User', deactivated: false },
  // Illustrative (no documented example), with the keys the reference lists.
  offers: {
    id: 31,
    version: 2,
    application_id: 1,
    job_id: 1,
    candidate_id: 1,
    opening_id: 11,
    status: 'Accepted',
    sent_on: '2026-03-02',
    starts_on: '2026-04-01',
    resolved_at: '2026-03-05T12:00:00.000Z',
    custom_fields: { salary: { value: 1 } },
  },
  openings: {
    id: 11,
    job_id: 1,
    opening_id: 'REQ-7',
    open: false,
    opened_at: '2026-01-01T00:00:00.000Z',
    closed_at: '2026-03-05T12:00:00.000Z',
    application_id: 1,
    close_reason_id: 3,
    target_start_on: null,
    sort_order: 0,
  },
  close_reasons: { id: 3, name: 'Hire - New Headcount' },
  rejection_reasons: {
    id: 4,
    name: 'Lacking skill(s)/qualification(s)',
    type: { id: 1, key: 'WE_REJECTED_THEM', name: 'We rejected them' },
  },
  job_interview_stages: {
    id: 1,
    job_id: 1,
    name: 'Application Review',
    sort_order: 0,
    active: true,
  },
  // Skipped answers: the whole object null, or its id and description null.
  eeoc: {
    id: 5,
    application_id: 1,
    candidate_id: 1,
    gender: { id: 2, description: 'Female' },
    race: null,
    veteran_status: { id: null, description: null },
    disability_status: null,
    submitted_at: null,
  },
  demographic_answers: {
    id: 6,
    application_id: 1,
    demographic_question_id: 2,
    demographic_answer_option_id: null,
    free_form_text: 'written by the candidate',
  },
  // Standard questions and options: name null, times null in practice.
  demographic_questions: {
    id: 2,
    demographic_question_set_id: 1,
    name: null,
    sort_order: 1,
    required: null,
    active: true,
    answer_type: 'multi_value_single_select',
    created_at: null,
    updated_at: null,
  },
  demographic_answer_options: {
    id: 7,
    demographic_question_id: 2,
    name: null,
    sort_order: 0,
    active: true,
    free_form: false,
    decline_to_answer: null,
  },
  departments: { id: 8, name: 'Engineering', parent_id: null },
  offices: { id: 9, name: 'New York', parent_id: 10 },
};

describe('records of the analytics resources', () => {
  it.each(Object.keys(DOCUMENTED))('%s: the documented record is stored', (name) => {
    expect(validate(name, DOCUMENTED[name])).toBeUndefined();
  });

  it('covers every analytics resource with a documented or illustrative record', () => {
    expect(Object.keys(DOCUMENTED).sort()).toEqual([...ANALYTICS_RESOURCES.keys()].sort());
  });

  it.each([
    ['applications', { id: 1, job_id: '12' }, 'job_id has the wrong type: got the string "12"'],
    ['applications', { id: 1, prospect: 'no' }, 'prospect has the wrong type'],
    ['application_stages', { id: 1, entered_at: 'yesterday' }, 'entered_at must be an ISO 8601'],
    ['offers', { id: 1, sent_on: '2026-02-30' }, 'sent_on'],
    ['openings', { id: 1, closed_at: '2026-13-01T00:00:00Z' }, 'closed_at must be an ISO 8601'],
    ['eeoc', { id: 1, gender: 'Female' }, 'gender has the wrong type'],
    ['rejection_reasons', { id: 1, type: { key: 3 } }, 'type.key has the wrong type'],
    ['users', { name: 'no id' }, 'id is missing'],
    ['demographic_answer_options', { id: 1.5 }, 'id must be an integer'],
  ])('%s: a malformed value is a rejected record (%j)', (name, record, reason) => {
    expect(validate(name, record)).toContain(reason);
  });

  it('keeps keys the schema does not know, and stores a record that leaves the documented ones out', () => {
    for (const name of ANALYTICS_RESOURCES.keys()) {
      expect(validate(name, { id: 1, added_later: { any: 'shape' } })).toBeUndefined();
    }
  });
});
