import { application, offer, stageRows, world } from './fixtures.js';
import type { AnalyticsRecords, ApiRecord } from './index.js';

/** A version of an application_stages record in hiresync's history (ISO times). */
export interface StageVersion {
  id: number;
  from: string;
  to: string | null;
  data: ApiRecord;
}

/** One account's records with every edge case of the views, and what the API no longer lists. */
export interface EdgeWorld {
  /** The records the API lists (what the reference reads). */
  records: AnalyticsRecords;
  /** Records stored but deleted (`deleted_at` set): every view must leave them out. */
  deleted: Partial<Record<keyof AnalyticsRecords, ApiRecord[]>>;
  /** The history of the stage row whose exit only hiresync saw. */
  stageHistory: StageVersion[];
}

function people(n: number, gender: string | null, fields: Record<string, unknown> = {}) {
  const applications = Array.from({ length: n }, () => application(fields));
  const eeoc = applications.map((a) => ({
    id: Number(a.id) + 600_000,
    application_id: a.id,
    candidate_id: a.candidate_id,
    gender: gender === null ? null : { id: 1, description: gender },
    race: { id: 2, description: null },
    veteran_status: null,
    disability_status: { id: 3, description: 'No' },
  }));
  return { applications, eeoc };
}

/**
 * The edge cases of the unit tests of the reference in one world, to store
 * in Postgres and compare the views' rows with the reference's: prospects, a
 * deleted application with rows still listed, no source, ambiguous and
 * single tracking links, stage rows of another job, hires at the last stage,
 * rejections and active applications at their last stage, backfilled times,
 * an exit only the history saw, hires dated by opening, by offer and not at
 * all, offer versions, declines, a month in UTC, suppressed and
 * complementary cells, demographic labels.
 */
export function edgeWorld(): EdgeWorld {
  const hired = application({ status: 'hired', source_id: 7, referrer_id: 31, job_post_id: 41 });
  const rejected = application({ status: 'rejected', source_id: 7, job_post_id: 41 });
  const active = application({ status: 'active', source_id: 8 });
  const reviewing = application({ status: 'in_process', source_id: 404 });
  const prospect = application({ prospect: true, job_id: null, source_id: 7 });
  const otherJob = application({ job_id: 2, job_post_id: 42, source_id: 7 });
  const gone = application({ status: 'rejected', source_id: 7 });
  const viaOpening = application({ status: 'hired' });
  const viaOffer = application({ status: 'hired' });
  const neither = application({ status: 'hired', job_id: 2 });
  const unresolved = application({ status: 'hired' });
  const backfilledRow = {
    id: 7001,
    application_id: reviewing.id,
    job_interview_stage_id: 11,
    entered_at: null,
    exited_at: null,
    current: false,
    created_at: '2026-01-05T12:00:00.000Z',
  };
  const silentRow = {
    id: 7002,
    application_id: active.id,
    job_interview_stage_id: 11,
    entered_at: null,
    exited_at: null,
    current: false,
    created_at: '2026-01-04T00:00:00.000Z',
  };
  const women = people(6, 'Female', { status: 'hired' });
  const men = people(7, 'Male');
  const skipped = people(2, null);
  const demographic = (a: ApiRecord, question: number, option: number | null) => ({
    id: Number(a.id) * 10 + question,
    application_id: a.id,
    demographic_question_id: question,
    demographic_answer_option_id: option,
    free_form_text: null,
  });
  const surveyed = [...women.applications, ...men.applications.slice(0, 1)];
  const records = world({
    applications: [
      hired,
      rejected,
      active,
      reviewing,
      prospect,
      otherJob,
      viaOpening,
      viaOffer,
      neither,
      unresolved,
      ...women.applications,
      ...men.applications,
      ...skipped.applications,
    ],
    application_stages: [
      ...stageRows(hired, [11, 12, 13]),
      ...stageRows(rejected, [11, 12]),
      ...stageRows(active, [12]),
      silentRow,
      backfilledRow,
      ...stageRows(otherJob, [12, 21]),
      ...stageRows(gone, [11]),
      ...women.applications.flatMap((a) => stageRows(a, [11, 12])),
    ],
    offers: [
      offer(hired, { status: 'Accepted', resolved_at: '2026-01-31T23:30:00-05:00' }),
      offer(rejected, { status: 'Rejected', resolved_at: '2026-01-20T12:00:00Z' }),
      offer(viaOpening, { status: 'Accepted', resolved_at: '2026-01-12T12:00:00Z' }),
      offer(viaOffer, { version: 1, status: 'Deprecated', created_at: '2026-01-05T00:00:00Z' }),
      offer(viaOffer, {
        version: 2,
        status: 'Accepted',
        resolved_at: '2026-01-09T12:00:00Z',
        created_at: '2026-01-08T00:00:00Z',
      }),
      offer(neither, { version: 1, status: 'Accepted', resolved_at: '2026-01-09T00:00:00Z' }),
      offer(neither, { version: 2, status: 'Rejected', resolved_at: '2026-02-11T00:00:00Z' }),
      offer(unresolved, { status: 'Accepted', resolved_at: null }),
      // Still listed though its application is not: offer_acceptance counts offers, whoever's.
      offer(gone, { status: 'Rejected', resolved_at: '2026-01-21T00:00:00Z' }),
      ...women.applications.slice(0, 5).map((a) => offer(a)),
    ],
    openings: [
      {
        id: 81,
        job_id: 1,
        opened_at: '2025-12-01T00:00:00Z',
        closed_at: '2026-01-20T00:00:00Z',
        application_id: viaOpening.id,
        close_reason_id: 91,
      },
      {
        id: 82,
        job_id: 1,
        opened_at: '2025-12-01T00:00:00Z',
        closed_at: '2026-01-15T00:00:00Z',
        application_id: viaOpening.id,
        close_reason_id: 91,
      },
      {
        id: 83,
        job_id: 1,
        opened_at: '2025-12-01T00:00:00Z',
        closed_at: '2026-01-05T00:00:00Z',
        close_reason_id: 92,
      },
      { id: 84, job_id: 1, opened_at: '2025-12-01T00:00:00Z', closed_at: null },
      { id: 85, job_id: 2, opened_at: null, closed_at: null },
      // Closed for a reason the API does not list.
      {
        id: 86,
        job_id: 2,
        opened_at: '2025-12-01T00:00:00Z',
        closed_at: '2026-01-07T00:00:00Z',
        close_reason_id: 99,
      },
    ],
    close_reasons: [
      { id: 91, name: 'Hire - New Headcount' },
      { id: 92, name: 'Position Cancelled' },
    ],
    rejection_details: [
      { id: 8001, application_id: rejected.id, rejection_reason_id: 71 },
      { id: 8002, application_id: prospect.id, rejection_reason_id: null },
      { id: 8003, application_id: active.id, rejection_reason_id: 72 },
    ],
    rejection_reasons: [
      { id: 71, name: 'Lacks skills', type: { id: 1, key: 'WE_REJECTED_THEM', name: 'We' } },
    ],
    eeoc: [...women.eeoc, ...men.eeoc, ...skipped.eeoc],
    demographic_questions: [
      { id: 301, name: 'Pronouns', sort_order: 1 },
      { id: 302, name: null, sort_order: 2 },
    ],
    demographic_answer_options: [
      { id: 401, demographic_question_id: 301, name: 'they/them', sort_order: 1 },
      { id: 402, demographic_question_id: 302, name: null, sort_order: 1 },
      { id: 403, demographic_question_id: 302, name: null, sort_order: 2 },
    ],
    demographic_answers: surveyed.flatMap((a) => [
      demographic(a, 301, 401),
      demographic(a, 302, Number(a.id) % 2 === 0 ? 402 : 403),
      demographic(a, 303, null),
    ]),
    demographic_labels: [
      { kind: 'question', id: '302', label: 'Age range' },
      { kind: 'option', id: '402', label: '25-34' },
    ],
    job_posts: [
      { id: 41, job_id: 1, job_board_id: 51 },
      { id: 42, job_id: 2, job_board_id: null },
    ],
    job_boards: [{ id: 51, company_name: 'Acme careers' }],
    sources: [
      { id: 7, name: 'LinkedIn', type: { id: 1, name: 'Third-party boards' } },
      { id: 8, name: 'Referral', type: { id: 2, name: 'Referral' } },
    ],
    referrers: [{ id: 31, name: 'Ada' }],
    tracking_links: [
      // Hired matches 61 (its post) and 62 (its job, its referrer): ambiguous.
      {
        id: 61,
        token: 'post41',
        source_id: 7,
        referrer_id: null,
        job_post_id: 41,
        job_id: null,
        job_board_id: null,
      },
      {
        id: 62,
        token: 'job1ada',
        source_id: 7,
        referrer_id: 31,
        job_post_id: null,
        job_id: 1,
        job_board_id: null,
      },
      // The only link of job 2's applications from source 7.
      {
        id: 63,
        token: 'job2',
        source_id: 7,
        referrer_id: null,
        job_post_id: null,
        job_id: 2,
        job_board_id: null,
      },
      // Any application of source 8.
      {
        id: 64,
        token: 'anywhere',
        source_id: 8,
        referrer_id: null,
        job_post_id: null,
        job_id: null,
        job_board_id: null,
      },
    ],
  });
  return {
    records,
    deleted: {
      applications: [gone],
      job_interview_stages: [{ id: 14, job_id: 1, name: 'Gone', sort_order: 9, active: true }],
      offers: [offer(active, { status: 'Accepted', resolved_at: '2026-01-10T00:00:00Z' })],
      tracking_links: [{ id: 65, token: 'gone', source_id: 8 }],
      rejection_details: [{ id: 8004, application_id: reviewing.id, rejection_reason_id: 71 }],
    },
    stageHistory: [
      {
        id: 7002,
        from: '2026-01-04T06:00:00Z',
        to: '2026-01-06T00:00:00Z',
        data: { ...silentRow, current: true },
      },
      { id: 7002, from: '2026-01-06T00:00:00Z', to: null, data: silentRow },
    ],
  };
}
