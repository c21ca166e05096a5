import { type AnalyticsRecords, type ApiRecord, noRecords } from './index.js';

/**
 * A small world: job 1 has stages 11 (Application Review, order 0), 12
 * (Phone Screen, 1) and 13 (Offer, 2); job 2 has stage 21 (Application
 * Review, 0).
 */
export function world(records: Partial<AnalyticsRecords> = {}): AnalyticsRecords {
  return {
    ...noRecords(),
    jobs: [
      { id: 1, name: 'Engineer', department_id: 501 },
      { id: 2, name: 'Designer', departments: [{ id: 502, name: 'Design' }] },
    ],
    departments: [
      { id: 501, name: 'Engineering' },
      { id: 502, name: 'Design' },
    ],
    job_interview_stages: [
      { id: 11, job_id: 1, name: 'Application Review', sort_order: 0, active: true },
      { id: 12, job_id: 1, name: 'Phone Screen', sort_order: 1, active: true },
      { id: 13, job_id: 1, name: 'Offer', sort_order: 2, active: false },
      { id: 21, job_id: 2, name: 'Application Review', sort_order: 0, active: true },
    ],
    ...records,
  };
}

let nextId = 1000;

/** An application of job 1 in process, applied 2026-01-01 (override any key). */
export function application(fields: Record<string, unknown> = {}): ApiRecord {
  nextId += 1;
  return {
    id: nextId,
    candidate_id: 90_000 + nextId,
    job_id: 1,
    job_post_id: null,
    source_id: null,
    referrer_id: null,
    status: 'in_process',
    prospect: false,
    created_at: '2026-01-01T00:00:00.000Z',
    rejected_at: null,
    ...fields,
  };
}

/** Stage rows of `app` for each stage id, entered a day apart from 2026-01-02; the last current. */
export function stageRows(app: ApiRecord, stageIds: number[]): ApiRecord[] {
  return stageIds.map((stageId, i) => {
    const last = i === stageIds.length - 1;
    nextId += 1;
    return {
      id: nextId,
      application_id: app.id,
      job_interview_stage_id: stageId,
      entered_at: `2026-01-0${2 + i}T00:00:00.000Z`,
      exited_at: last ? null : `2026-01-0${3 + i}T00:00:00.000Z`,
      current: last,
      created_at: `2026-01-0${2 + i}T00:00:00.000Z`,
    };
  });
}

/** An offer of `app` (job 1), version 1, Created (override any key). */
export function offer(app: ApiRecord, fields: Record<string, unknown> = {}): ApiRecord {
  nextId += 1;
  return {
    id: nextId,
    version: 1,
    application_id: app.id,
    job_id: app.job_id,
    candidate_id: app.candidate_id,
    opening_id: null,
    status: 'Created',
    sent_on: null,
    resolved_at: null,
    created_at: '2026-01-10T00:00:00.000Z',
    ...fields,
  };
}
