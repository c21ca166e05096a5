import { type Kysely, sql } from 'kysely';
import type { Database } from '../../src/warehouse/tables.js';
import { storeBuiltIn, storeList, storeVersion } from './analytics-rows.js';

/**
 * A small recruiting world of one account, written by hand into the shared
 * tables, with the edge cases of every analytics view (docs/analytics.md):
 * prospects, deleted rows, a null source, an ambiguous tracking link, stage
 * rows of another job, a hire without an opening, several offer versions, a
 * history exit. The expected rows of each view are in the test, worked out
 * by hand from these records.
 *
 * Applications (job 10 Engineer, job 20 Designer):
 * - 1 hired (source 1, post 50), stages 101-104, offers v1 Deprecated + v2 Accepted, opening 1
 * - 2 rejected (source 1, referrer 7, post 50), stages 101, 102 (+ a row for job 20's stage 201),
 *   offer v1 Rejected, rejected for reason 1
 * - 3 active (`in_process`, source 2), stage 101 with no entered_at, current
 * - 4 hired (job 20, no source, post 51), stages 201, 202, offer v1 Accepted, no opening
 * - 5 a prospect without a job (source 1); 6 deleted (job 10, source 1, hired)
 * - 7 rejected (source 1), no stage row, rejected without a reason
 * - 8 hired (job 20), no offer, no opening
 * and EEOC answers of applications 1 and 2.
 */
export async function storeRecruitingWorld(db: Kysely<Database>, account: string): Promise<void> {
  await storeBuiltIn(db, account, 'jobs', [
    { id: 10, name: 'Engineer', department_id: 500, status: 'open' },
    { id: 20, name: 'Designer', departments: [{ id: 600 }], status: 'open' },
  ]);
  await storeBuiltIn(db, account, 'job_posts', [
    { id: 50, job_id: 10, job_board_id: 900 },
    { id: 51, job_id: 20, job_board_id: null },
  ]);
  await sql`insert into hiresync.data_sources (account, id, public_name, raw) values
    (${account}, 1, 'LinkedIn', '{"id":1,"type":{"id":1,"name":"Prospecting"}}'),
    (${account}, 2, 'Referral', '{"id":2,"type":{"id":2,"name":"Referrals"}}')`.execute(db);
  await sql`insert into hiresync.data_referrers (account, id, name, raw) values
    (${account}, 7, 'Ann', '{"id":7}')`.execute(db);
  await sql`insert into hiresync.data_job_boards (account, id, company_name, raw) values
    (${account}, 900, 'Acme Board', '{"id":900}')`.execute(db);
  await sql`insert into hiresync.data_tracking_links
      (account, id, token, job_id, job_post_id, job_board_id, credited_to_id, source_id, raw, deleted_at) values
    (${account}, 61, 'post50', null, 50, null, null, 1, '{}', null),
    (${account}, 62, 'job10ann', 10, null, null, 7, 1, '{}', null),
    (${account}, 63, 'anywhere', null, null, null, null, 2, '{}', null),
    (${account}, 64, 'gone', null, null, null, null, 1, '{}', now())`.execute(db);
  await storeList(db, account, 'departments', [
    { id: 500, name: 'Eng' },
    { id: 600, name: 'Design' },
  ]);
  await storeList(db, account, 'job_interview_stages', [
    { id: 101, job_id: 10, name: 'Application Review', sort_order: 0, active: true },
    { id: 102, job_id: 10, name: 'Phone Screen', sort_order: 1, active: true },
    { id: 103, job_id: 10, name: 'Onsite', sort_order: 2, active: true },
    { id: 104, job_id: 10, name: 'Offer', sort_order: 3, active: true },
    { id: 105, job_id: 10, name: 'Old', sort_order: 5, active: false },
    { id: 106, job_id: 10, name: 'Gone', sort_order: 6, active: true, deleted: true },
    { id: 201, job_id: 20, name: 'Review', sort_order: 0, active: true },
    { id: 202, job_id: 20, name: 'Interview', sort_order: 1, active: true },
  ]);
  const app = (id: number, fields: object) => ({
    id,
    candidate_id: 1000 + id,
    job_post_id: null,
    source_id: null,
    referrer_id: null,
    prospect: false,
    ...fields,
  });
  await storeList(db, account, 'applications', [
    app(1, {
      job_id: 10,
      job_post_id: 50,
      source_id: 1,
      status: 'hired',
      created_at: '2026-01-01T00:00:00.000Z',
    }),
    app(2, {
      job_id: 10,
      job_post_id: 50,
      source_id: 1,
      referrer_id: 7,
      status: 'rejected',
      created_at: '2026-01-02T00:00:00.000Z',
    }),
    app(3, {
      job_id: 10,
      source_id: 2,
      status: 'in_process',
      created_at: '2026-01-03T00:00:00.000Z',
    }),
    app(4, {
      job_id: 20,
      job_post_id: 51,
      status: 'hired',
      created_at: '2026-02-01T00:00:00.000Z',
    }),
    app(5, {
      job_id: null,
      source_id: 1,
      prospect: true,
      status: 'in_process',
      created_at: '2026-01-05T00:00:00.000Z',
    }),
    {
      ...app(6, {
        job_id: 10,
        source_id: 1,
        status: 'hired',
        created_at: '2026-01-06T00:00:00.000Z',
      }),
      deleted: true,
    },
    app(7, {
      job_id: 10,
      source_id: 1,
      status: 'rejected',
      created_at: '2026-01-07T00:00:00.000Z',
    }),
    app(8, { job_id: 20, status: 'hired', created_at: '2026-01-08T00:00:00.000Z' }),
  ]);
  const stage = (id: number, application: number, stageId: number, fields: object = {}) => ({
    id,
    application_id: application,
    job_interview_stage_id: stageId,
    entered_at: '2026-01-10T00:00:00.000Z',
    exited_at: '2026-01-12T00:00:00.000Z',
    current: false,
    created_at: '2026-01-09T00:00:00.000Z',
    ...fields,
  });
  await storeList(db, account, 'application_stages', [
    stage(1001, 1, 101),
    stage(1002, 1, 102),
    stage(1003, 1, 103),
    stage(1004, 1, 104, { exited_at: null, current: true, entered_at: '2026-01-20T00:00:00.000Z' }),
    stage(2001, 2, 101),
    // Its exit is known only from hiresync's history (below).
    stage(2002, 2, 102, { exited_at: null }),
    // A stage of another job than the application's: ignored everywhere.
    stage(2003, 2, 201),
    stage(3001, 3, 101, { entered_at: null, exited_at: null, current: true }),
    stage(4001, 4, 201),
    stage(4002, 4, 202, { entered_at: null, exited_at: null }),
    stage(6001, 6, 101),
    stage(5001, 1, 103, { deleted: true }),
  ]);
  // Stage row 2002 was current, then not: its exit is when hiresync saw that.
  const row2002 = stage(2002, 2, 102, { exited_at: null });
  await storeVersion(db, account, 'application_stages', {
    id: 2002,
    from: '2026-01-10T00:00:00Z',
    to: '2026-01-15T06:00:00Z',
    data: { ...row2002, current: true },
  });
  await storeVersion(db, account, 'application_stages', {
    id: 2002,
    from: '2026-01-15T06:00:00Z',
    to: null,
    data: row2002,
  });
  await storeList(db, account, 'offers', [
    {
      id: 301,
      version: 1,
      application_id: 1,
      job_id: 10,
      status: 'Deprecated',
      created_at: '2026-01-20T00:00:00.000Z',
      resolved_at: null,
    },
    {
      id: 302,
      version: 2,
      application_id: 1,
      job_id: 10,
      status: 'Accepted',
      created_at: '2026-01-25T00:00:00.000Z',
      resolved_at: '2026-02-01T00:00:00.000Z',
    },
    {
      id: 303,
      version: 1,
      application_id: 4,
      job_id: 20,
      status: 'Accepted',
      created_at: '2026-02-20T00:00:00.000Z',
      resolved_at: '2026-03-05T00:00:00.000Z',
    },
    {
      id: 304,
      version: 1,
      application_id: 2,
      job_id: 10,
      status: 'Rejected',
      created_at: '2026-02-10T00:00:00.000Z',
      resolved_at: '2026-02-15T00:00:00.000Z',
    },
    {
      id: 305,
      version: 3,
      application_id: 1,
      job_id: 10,
      status: 'Rejected',
      created_at: '2026-01-19T00:00:00.000Z',
      resolved_at: '2026-02-02T00:00:00.000Z',
      deleted: true,
    },
  ]);
  await storeList(db, account, 'close_reasons', [
    { id: 1, name: 'Hire - New Headcount' },
    { id: 2, name: 'Position cancelled' },
  ]);
  await storeList(db, account, 'openings', [
    {
      id: 401,
      job_id: 10,
      opened_at: '2025-12-01T00:00:00.000Z',
      closed_at: '2026-02-10T00:00:00.000Z',
      application_id: 1,
      close_reason_id: 1,
    },
    {
      id: 402,
      job_id: 10,
      opened_at: '2026-01-01T00:00:00.000Z',
      closed_at: null,
      application_id: null,
      close_reason_id: null,
    },
    {
      id: 403,
      job_id: 20,
      opened_at: '2026-01-01T00:00:00.000Z',
      closed_at: '2026-01-15T00:00:00.000Z',
      application_id: null,
      close_reason_id: 2,
    },
    {
      id: 404,
      job_id: 20,
      opened_at: '2026-01-01T00:00:00.000Z',
      closed_at: '2026-01-02T00:00:00.000Z',
      application_id: 4,
      close_reason_id: 1,
      deleted: true,
    },
  ]);
  // Too few people for any cell to show.
  await storeList(db, account, 'eeoc', [
    {
      id: 601,
      application_id: 1,
      gender: { id: 1, description: 'Female' },
      race: null,
      veteran_status: null,
      disability_status: null,
    },
    {
      id: 602,
      application_id: 2,
      gender: { id: 2, description: 'Male' },
      race: null,
      veteran_status: null,
      disability_status: null,
    },
  ]);
  await storeList(db, account, 'rejection_reasons', [
    {
      id: 1,
      name: 'Not a fit',
      type: { id: 1, key: 'WE_REJECTED_THEM', name: 'We rejected them' },
    },
  ]);
  await storeList(db, account, 'rejection_details', [
    { id: 501, application_id: 2, rejection_reason_id: 1, rejected_at: '2026-01-16T00:00:00.000Z' },
    {
      id: 502,
      application_id: 7,
      rejection_reason_id: null,
      rejected_at: '2026-01-16T00:00:00.000Z',
    },
    { id: 503, application_id: 6, rejection_reason_id: 1, rejected_at: '2026-01-16T00:00:00.000Z' },
    {
      id: 504,
      application_id: 3,
      rejection_reason_id: 1,
      rejected_at: '2026-01-16T00:00:00.000Z',
      deleted: true,
    },
  ]);
}

/**
 * hiresync's history of the world above as it stood in January (for
 * pipeline_as_of): stages 101 and 102 of job 10 since Jan 1; application 1
 * active since Jan 1; application 2 active from Jan 2, rejected from Jan 16;
 * stage rows 1001 (1 at 101), 2001 (2 at 101) since Jan 10 (2002, 2 at 102,
 * is in the history already); application 3 from Jan 3, deleted on Jan 5.
 */
export async function storeJanuaryHistory(db: Kysely<Database>, account: string): Promise<void> {
  for (const [id, order, name] of [
    [101, 0, 'Application Review'],
    [102, 1, 'Phone Screen'],
  ] as const) {
    await storeVersion(db, account, 'job_interview_stages', {
      id,
      from: '2026-01-01T00:00:00Z',
      to: null,
      data: { id, job_id: 10, name, sort_order: order, active: true },
    });
  }
  const application = (id: number, status: string) => ({
    id,
    candidate_id: 1000 + id,
    job_id: 10,
    prospect: false,
    status,
  });
  await storeVersion(db, account, 'applications', {
    id: 1,
    from: '2026-01-01T00:00:00Z',
    to: null,
    data: application(1, 'in_process'),
  });
  await storeVersion(db, account, 'applications', {
    id: 2,
    from: '2026-01-02T00:00:00Z',
    to: '2026-01-16T00:00:00Z',
    data: application(2, 'in_process'),
  });
  await storeVersion(db, account, 'applications', {
    id: 2,
    from: '2026-01-16T00:00:00Z',
    to: null,
    data: application(2, 'rejected'),
  });
  await storeVersion(db, account, 'applications', {
    id: 3,
    from: '2026-01-03T00:00:00Z',
    to: '2026-01-05T00:00:00Z',
    data: application(3, 'in_process'),
  });
  await storeVersion(db, account, 'applications', {
    id: 3,
    from: '2026-01-05T00:00:00Z',
    to: null,
    deleted: true,
    data: application(3, 'in_process'),
  });
  for (const [id, app, stage] of [
    [1001, 1, 101],
    [2001, 2, 101],
    [3001, 3, 101],
  ] as const) {
    await storeVersion(db, account, 'application_stages', {
      id,
      from: '2026-01-04T00:00:00Z',
      to: null,
      data: { id, application_id: app, job_interview_stage_id: stage, current: true },
    });
  }
}
