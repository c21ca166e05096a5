import { describe, expect, it } from 'vitest';
import { application, stageRows, world } from '../../support/analytics-reference/fixtures.js';
import {
  expectedAnalytics,
  pipelineAsOf,
  type RecordVersion,
} from '../../support/analytics-reference/index.js';

const NOW = Date.parse('2026-02-01T00:00:00Z');
const DAY = 86_400_000;

describe('the reference of pipeline_conversion', () => {
  it('counts entered, moved on, rejected and still there per stage, a hire at the last stage moved on', () => {
    const hiredAtOffer = application({ status: 'hired' });
    const rejectedAtScreen = application({ status: 'rejected' });
    const activeAtScreen = application({ status: 'active' });
    const inProcessAtReview = application({ status: 'in_process' });
    const views = expectedAnalytics(
      world({
        applications: [hiredAtOffer, rejectedAtScreen, activeAtScreen, inProcessAtReview],
        application_stages: [
          ...stageRows(hiredAtOffer, [11, 12, 13]),
          ...stageRows(rejectedAtScreen, [11, 12]),
          ...stageRows(activeAtScreen, [11, 12]),
          ...stageRows(inProcessAtReview, [11]),
        ],
      }),
      { now: NOW },
    );
    const byStage = Object.fromEntries(views.pipeline_conversion.map((r) => [r.stage_id, r]));
    expect(byStage['11']).toEqual({
      job_id: '1',
      stage_id: '11',
      stage_name: 'Application Review',
      stage_order: 0,
      entered: 4,
      moved_on: 3,
      rejected: 0,
      still_there: 1,
      pass_through_rate: 0.75,
      stage_active: true,
    });
    expect(byStage['12']).toMatchObject({ entered: 3, moved_on: 1, rejected: 1, still_there: 1 });
    // The hire's last stage is the last of the plan: it moved on all the same.
    expect(byStage['13']).toMatchObject({
      entered: 1,
      moved_on: 1,
      rejected: 0,
      still_there: 0,
      pass_through_rate: 1,
      stage_active: false,
    });
    // A stage nobody entered: a row, with no rate.
    expect(byStage['21']).toMatchObject({ entered: 0, moved_on: 0, pass_through_rate: null });
  });

  it('takes the last stage by stage order, whatever order the rows came in', () => {
    const app = application({ status: 'rejected' });
    const rows = stageRows(app, [12, 11]);
    const views = expectedAnalytics(world({ applications: [app], application_stages: rows }), {
      now: NOW,
    });
    const byStage = Object.fromEntries(views.pipeline_conversion.map((r) => [r.stage_id, r]));
    expect(byStage['12']).toMatchObject({ rejected: 1, moved_on: 0 });
    expect(byStage['11']).toMatchObject({ rejected: 0, moved_on: 1 });
  });

  it('pipeline_as_of computes the same over the records of that time', () => {
    const app = application({ status: 'active' });
    const before = pipelineAsOf({
      applications: [app],
      application_stages: stageRows(app, [11]),
      job_interview_stages: world().job_interview_stages,
      offers: [],
    });
    expect(before.find((r) => r.stage_id === '11')).toMatchObject({ entered: 1, still_there: 1 });
    expect(before.find((r) => r.stage_id === '12')).toMatchObject({ entered: 0 });
  });
});

describe('the reference of time_in_stage', () => {
  it('reads the API’s times, and days to now() for the current stage', () => {
    const app = application();
    const views = expectedAnalytics(
      world({ applications: [app], application_stages: stageRows(app, [11, 12]) }),
      { now: NOW },
    );
    const [review, screen] = [...views.time_in_stage].sort((a, b) =>
      String(a.stage_id).localeCompare(String(b.stage_id)),
    );
    expect(review).toMatchObject({
      stage_name: 'Application Review',
      current: false,
      entered_at: Date.parse('2026-01-02T00:00:00Z'),
      entered_at_source: 'api',
      exited_at: Date.parse('2026-01-03T00:00:00Z'),
      exited_at_source: 'api',
      days: 1,
    });
    expect(screen).toMatchObject({
      current: true,
      exited_at: null,
      exited_at_source: null,
      days: (NOW - Date.parse('2026-01-03T00:00:00Z')) / DAY,
    });
  });

  it('falls back to created_at for a backfilled row with null times, and has no days for a past one', () => {
    const app = application();
    const backfilled = {
      id: 77,
      application_id: app.id,
      job_interview_stage_id: 11,
      entered_at: null,
      exited_at: null,
      current: false,
      created_at: '2026-01-05T12:00:00.000Z',
    };
    const views = expectedAnalytics(
      world({ applications: [app], application_stages: [backfilled] }),
      {
        now: NOW,
      },
    );
    expect(views.time_in_stage).toEqual([
      expect.objectContaining({
        entered_at: Date.parse('2026-01-05T12:00:00Z'),
        entered_at_source: 'created_at',
        exited_at: null,
        exited_at_source: null,
        days: null,
      }),
    ]);
  });

  it('takes the exit from hiresync’s history when a current row became past without an API time', () => {
    const app = application();
    const row = {
      id: 78,
      application_id: app.id,
      job_interview_stage_id: 11,
      entered_at: null,
      exited_at: null,
      current: true,
      created_at: '2026-01-05T00:00:00.000Z',
    };
    const left = Date.parse('2026-01-08T06:00:00Z');
    const history: RecordVersion[] = [
      { id: '78', validFrom: Date.parse('2026-01-06T00:00:00Z'), record: row },
      // A change that leaves it current does not count.
      { id: '78', validFrom: Date.parse('2026-01-07T00:00:00Z'), record: { ...row, x: 1 } },
      { id: '78', validFrom: left, record: { ...row, current: false } },
      { id: '78', validFrom: left + DAY, record: { ...row, current: false, y: 2 } },
    ];
    const views = expectedAnalytics(
      world({ applications: [app], application_stages: [{ ...row, current: false }] }),
      { now: NOW, stageHistory: history },
    );
    expect(views.time_in_stage).toEqual([
      expect.objectContaining({
        current: false,
        entered_at: Date.parse('2026-01-05T00:00:00Z'),
        entered_at_source: 'created_at',
        exited_at: left,
        exited_at_source: 'history',
        days: 3.25,
      }),
    ]);
    // Never current in the history: no exit.
    const never = expectedAnalytics(
      world({ applications: [app], application_stages: [{ ...row, current: false }] }),
      { now: NOW, stageHistory: history.slice(2) },
    );
    expect(never.time_in_stage[0]).toMatchObject({ exited_at: null, days: null });
  });
});
