import { describe, expect, it } from 'vitest';
import {
  application,
  offer,
  stageRows,
  world,
} from '../../support/analytics-reference/fixtures.js';
import { expectedAnalytics } from '../../support/analytics-reference/index.js';

const NOW = Date.parse('2026-02-01T00:00:00Z');

describe('the reference of source_of_hire and its breakdowns', () => {
  it('counts funnel applications only: prospects and applications the API no longer lists are left out', () => {
    const kept = application({ source_id: 7 });
    const prospect = application({ source_id: 7, prospect: true, job_id: null });
    // An application no longer served: its stage rows and offers are still served.
    const gone = application({ source_id: 7 });
    const views = expectedAnalytics(
      world({
        applications: [kept, prospect],
        application_stages: [...stageRows(gone, [11, 12])],
        offers: [offer(gone)],
        sources: [{ id: 7, name: 'LinkedIn', type: { id: 1, name: 'Job board' } }],
      }),
      { now: NOW },
    );
    expect(views.source_of_hire).toEqual([
      {
        source_id: '7',
        source_name: 'LinkedIn',
        source_type: 'Job board',
        applications: 1,
        interviewed: 0,
        offers: 0,
        hires: 0,
        interview_rate: 0,
        offer_rate: 0,
        hire_rate: 0,
      },
    ]);
  });

  it('gives applications without a source one row with source_id null and no name', () => {
    const hired = application({ status: 'hired' });
    const views = expectedAnalytics(
      world({
        applications: [hired, application(), application({ source_id: 404 })],
        application_stages: stageRows(hired, [11, 12]),
        offers: [offer(hired)],
      }),
      { now: NOW },
    );
    expect(views.source_of_hire).toContainEqual({
      source_id: null,
      source_name: null,
      source_type: null,
      applications: 2,
      interviewed: 1,
      offers: 1,
      hires: 1,
      interview_rate: 0.5,
      offer_rate: 0.5,
      hire_rate: 0.5,
    });
    // A source the API does not list: its row, unnamed.
    expect(views.source_of_hire).toContainEqual(
      expect.objectContaining({ source_id: '404', source_name: null, applications: 1 }),
    );
  });

  it('counts an application interviewed for a stage after its job’s first, and ignores stage rows of another job', () => {
    const first = application();
    const later = application();
    const otherJob = application({ job_id: 2 });
    const views = expectedAnalytics(
      world({
        applications: [first, later, otherJob],
        application_stages: [
          ...stageRows(first, [11]),
          ...stageRows(later, [11, 12]),
          // Stage 12 is job 1's: ignored for an application of job 2.
          ...stageRows(otherJob, [12]),
        ],
      }),
      { now: NOW },
    );
    expect(views.source_of_hire_by_job).toEqual(
      expect.arrayContaining([
        {
          job_id: '1',
          job_name: 'Engineer',
          applications: 2,
          interviewed: 1,
          offers: 0,
          hires: 0,
          hire_rate: 0,
        },
        {
          job_id: '2',
          job_name: 'Designer',
          applications: 1,
          interviewed: 0,
          offers: 0,
          hires: 0,
          hire_rate: 0,
        },
      ]),
    );
    expect(views.source_of_hire_by_job).toHaveLength(2);
    expect(views.pipeline_conversion.find((r) => r.stage_id === '12')).toMatchObject({
      entered: 1,
    });
    expect(views.time_in_stage.filter((r) => r.application_id === String(otherJob.id))).toEqual([]);
  });

  it('groups by referrer and by the job board of the application’s job post', () => {
    const viaBoard = application({ referrer_id: 31, job_post_id: 41, status: 'hired' });
    const viaPostWithoutBoard = application({ referrer_id: 31, job_post_id: 42 });
    const internal = application();
    const views = expectedAnalytics(
      world({
        applications: [viaBoard, viaPostWithoutBoard, internal],
        referrers: [{ id: 31, name: 'Ada' }],
        job_posts: [
          { id: 41, job_id: 1, job_board_id: 51 },
          { id: 42, job_id: 1, job_board_id: null },
        ],
        job_boards: [{ id: 51, company_name: 'Acme careers' }],
      }),
      { now: NOW },
    );
    expect(views.source_of_hire_by_referrer).toEqual(
      expect.arrayContaining([
        {
          referrer_id: '31',
          referrer_name: 'Ada',
          applications: 2,
          interviewed: 0,
          offers: 0,
          hires: 1,
          hire_rate: 0.5,
        },
        {
          referrer_id: null,
          referrer_name: null,
          applications: 1,
          interviewed: 0,
          offers: 0,
          hires: 0,
          hire_rate: 0,
        },
      ]),
    );
    expect(views.source_of_hire_by_job_board).toEqual(
      expect.arrayContaining([
        {
          job_board_id: '51',
          job_board_name: 'Acme careers',
          applications: 1,
          interviewed: 0,
          offers: 0,
          hires: 1,
          hire_rate: 1,
        },
        {
          job_board_id: null,
          job_board_name: null,
          applications: 2,
          interviewed: 0,
          offers: 0,
          hires: 0,
          hire_rate: 0,
        },
      ]),
    );
  });
});

describe('the reference of source_of_hire_by_tracking_link', () => {
  const post = { id: 41, job_id: 1, job_board_id: 51 };

  it('credits an application matching one link, reads the flat referrer_id as the link’s referrer, and never credits a sourceless application', () => {
    const matched = application({
      source_id: 7,
      referrer_id: 31,
      job_post_id: 41,
      status: 'hired',
    });
    const otherReferrer = application({ source_id: 7, referrer_id: 32, job_post_id: 41 });
    const sourceless = application({ job_post_id: 41 });
    const views = expectedAnalytics(
      world({
        applications: [matched, otherReferrer, sourceless],
        job_posts: [post],
        tracking_links: [
          {
            id: 61,
            token: 'abc',
            source_id: 7,
            referrer_id: 31,
            job_post_id: 41,
            job_id: null,
            job_board_id: null,
          },
        ],
      }),
      { now: NOW },
    );
    expect(views.source_of_hire_by_tracking_link).toEqual([
      {
        tracking_link_id: '61',
        token: 'abc',
        source_id: '7',
        applications: 1,
        interviewed: 0,
        offers: 0,
        hires: 1,
        ambiguous_applications: 0,
      },
    ]);
  });

  it('counts an application matching several links as ambiguous for each, credited to none', () => {
    const both = application({ source_id: 7, job_post_id: 41 });
    const boardOnly = application({ source_id: 7, job_id: 2, job_post_id: 41 });
    const views = expectedAnalytics(
      world({
        applications: [both, boardOnly],
        job_posts: [post],
        tracking_links: [
          // Matches by job.
          { id: 61, token: 'a', source_id: 7, job_id: 1 },
          // Matches by the board of the post (nested shape), any referrer.
          { id: 62, token: 'b', source: { id: 7 }, job_board: { id: 51 }, credited_to: null },
          // No target: matches every application of its source.
          { id: 63, token: 'c', source_id: 7 },
          // Another source: never.
          { id: 64, token: 'd', source_id: 8 },
        ],
      }),
      { now: NOW },
    );
    const rows = views.source_of_hire_by_tracking_link;
    expect(rows.map((r) => [r.tracking_link_id, r.applications, r.ambiguous_applications])).toEqual(
      [
        ['61', 0, 1],
        ['62', 0, 2],
        ['63', 0, 2],
      ],
    );
  });
});
