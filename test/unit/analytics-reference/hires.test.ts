import { describe, expect, it } from 'vitest';
import { application, offer, world } from '../../support/analytics-reference/fixtures.js';
import { expectedAnalytics } from '../../support/analytics-reference/index.js';

const NOW = Date.parse('2026-02-01T00:00:00Z');
const DAY = 86_400_000;
const APPLIED = Date.parse('2026-01-01T00:00:00Z');

describe('the reference of time_to_hire', () => {
  it('dates a hire by the earliest closed opening it filled, else by its latest offer if accepted, else not at all', () => {
    const viaOpening = application({ status: 'hired' });
    const viaOffer = application({ status: 'hired' });
    const neither = application({ status: 'hired' });
    const notHired = application({ status: 'active' });
    const views = expectedAnalytics(
      world({
        applications: [viaOpening, viaOffer, neither, notHired],
        openings: [
          {
            id: 81,
            job_id: 1,
            opened_at: '2025-12-01T00:00:00Z',
            closed_at: '2026-01-20T00:00:00Z',
            application_id: viaOpening.id,
          },
          {
            id: 82,
            job_id: 1,
            opened_at: '2025-12-01T00:00:00Z',
            closed_at: '2026-01-15T00:00:00Z',
            application_id: viaOpening.id,
          },
          // Moved onto an opening, not yet closed: no hire date.
          {
            id: 83,
            job_id: 1,
            opened_at: '2025-12-01T00:00:00Z',
            closed_at: null,
            application_id: viaOffer.id,
          },
        ],
        offers: [
          offer(viaOpening, {
            status: 'Accepted',
            resolved_at: '2026-01-12T12:00:00Z',
            created_at: '2026-01-10T00:00:00Z',
          }),
          offer(viaOffer, { version: 1, status: 'Deprecated', created_at: '2026-01-05T00:00:00Z' }),
          offer(viaOffer, {
            version: 2,
            status: 'Accepted',
            resolved_at: '2026-01-09T12:00:00Z',
            created_at: '2026-01-08T00:00:00Z',
          }),
          // The latest offer was declined: no hire date from offers.
          offer(neither, { version: 1, status: 'Accepted', resolved_at: '2026-01-09T00:00:00Z' }),
          offer(neither, { version: 2, status: 'Rejected', resolved_at: '2026-01-11T00:00:00Z' }),
        ],
      }),
      { now: NOW },
    );
    const byApplication = Object.fromEntries(views.time_to_hire.map((r) => [r.application_id, r]));
    expect(Object.keys(byApplication).sort()).toEqual(
      [viaOpening, viaOffer, neither].map((a) => String(a.id)).sort(),
    );
    expect(byApplication[String(viaOpening.id)]).toEqual({
      application_id: String(viaOpening.id),
      job_id: '1',
      applied_at: APPLIED,
      first_offer_at: Date.parse('2026-01-10T00:00:00Z'),
      hired_at: Date.parse('2026-01-15T00:00:00Z'),
      days_to_offer: 9,
      days_to_hire: 14,
      hired_at_source: 'opening',
    });
    expect(byApplication[String(viaOffer.id)]).toMatchObject({
      first_offer_at: Date.parse('2026-01-05T00:00:00Z'),
      hired_at: Date.parse('2026-01-09T12:00:00Z'),
      days_to_offer: 4,
      days_to_hire: 8.5,
      hired_at_source: 'offer',
    });
    expect(byApplication[String(neither.id)]).toMatchObject({
      hired_at: null,
      days_to_hire: null,
      hired_at_source: null,
    });
  });

  it('takes the latest offer by version, ties by the higher id', () => {
    const app = application({ status: 'hired' });
    const views = expectedAnalytics(
      world({
        applications: [app],
        offers: [
          offer(app, {
            id: 5,
            version: 3,
            status: 'Rejected',
            resolved_at: '2026-01-03T00:00:00Z',
          }),
          offer(app, {
            id: 6,
            version: 3,
            status: 'Accepted',
            resolved_at: '2026-01-04T00:00:00Z',
          }),
          offer(app, {
            id: 7,
            version: 2,
            status: 'Accepted',
            resolved_at: '2026-01-02T00:00:00Z',
          }),
        ],
      }),
      { now: NOW },
    );
    expect(views.time_to_hire[0]).toMatchObject({
      hired_at: APPLIED + 3 * DAY,
      hired_at_source: 'offer',
    });
  });
});

describe('the reference of time_to_fill', () => {
  it('counts an opening filled when closed for a reason starting “Hire -”, and summarises per job', () => {
    const views = expectedAnalytics(
      world({
        close_reasons: [
          { id: 91, name: 'Hire - New Headcount' },
          { id: 92, name: 'Position cancelled' },
        ],
        openings: [
          {
            id: 81,
            job_id: 1,
            opened_at: '2026-01-01T00:00:00Z',
            closed_at: '2026-01-11T00:00:00Z',
            close_reason_id: 91,
          },
          {
            id: 82,
            job_id: 1,
            opened_at: '2026-01-01T00:00:00Z',
            closed_at: '2026-01-21T00:00:00Z',
            close_reason_id: 91,
          },
          {
            id: 83,
            job_id: 1,
            opened_at: '2026-01-01T00:00:00Z',
            closed_at: '2026-01-31T00:00:00Z',
            close_reason_id: 91,
          },
          {
            id: 84,
            job_id: 1,
            opened_at: '2026-01-01T00:00:00Z',
            closed_at: '2026-01-05T00:00:00Z',
            close_reason_id: 92,
          },
          {
            id: 85,
            job_id: 1,
            opened_at: '2026-01-01T00:00:00Z',
            closed_at: null,
            close_reason_id: null,
          },
          { id: 86, job_id: 2, opened_at: null, closed_at: null },
        ],
      }),
      { now: NOW },
    );
    const byOpening = Object.fromEntries(views.time_to_fill.map((r) => [r.opening_id, r]));
    expect(byOpening['81']).toMatchObject({
      filled: true,
      close_reason: 'Hire - New Headcount',
      days_to_fill: 10,
    });
    expect(byOpening['84']).toMatchObject({
      filled: false,
      close_reason: 'Position cancelled',
      days_to_fill: null,
    });
    expect(byOpening['85']).toMatchObject({
      filled: false,
      close_reason: null,
      days_to_fill: null,
    });
    expect(views.time_to_fill_by_job).toEqual(
      expect.arrayContaining([
        {
          job_id: '1',
          job_name: 'Engineer',
          openings: 5,
          open_openings: 1,
          filled_openings: 3,
          avg_days_to_fill: 20,
          median_days_to_fill: 20,
          max_days_to_fill: 30,
        },
        {
          job_id: '2',
          job_name: 'Designer',
          openings: 1,
          open_openings: 1,
          filled_openings: 0,
          avg_days_to_fill: null,
          median_days_to_fill: null,
          max_days_to_fill: null,
        },
      ]),
    );
  });
});

describe('the reference of offer_acceptance', () => {
  it('counts latest offers accepted or declined by job and UTC month, and by the job’s department', () => {
    const a = application();
    const b = application();
    const c = application();
    const d = application({ job_id: 2 });
    const e = application();
    const views = expectedAnalytics(
      world({
        applications: [a, b, c, d, e],
        offers: [
          // Late on 31 January in New York, February in UTC.
          offer(a, { status: 'Accepted', resolved_at: '2026-01-31T23:30:00-05:00' }),
          offer(b, { version: 1, status: 'Rejected', resolved_at: '2026-02-02T12:00:00Z' }),
          offer(b, { version: 2, status: 'Accepted', resolved_at: '2026-02-03T12:00:00Z' }),
          offer(c, { status: 'Rejected', resolved_at: '2026-02-10T12:00:00Z' }),
          offer(d, { job_id: 2, status: 'Accepted', resolved_at: '2026-01-10T12:00:00Z' }),
          // A superseded or unresolved latest offer is not counted.
          offer(e, { version: 2, status: 'Created' }),
          offer(e, { version: 1, status: 'Accepted', resolved_at: '2026-01-10T12:00:00Z' }),
        ],
      }),
      { now: NOW },
    );
    expect(views.offer_acceptance).toEqual(
      expect.arrayContaining([
        { job_id: '1', month: '2026-02-01', accepted: 2, declined: 1, acceptance_rate: 2 / 3 },
        { job_id: '2', month: '2026-01-01', accepted: 1, declined: 0, acceptance_rate: 1 },
      ]),
    );
    expect(views.offer_acceptance).toHaveLength(2);
    expect(views.offer_acceptance_by_department).toEqual(
      expect.arrayContaining([
        {
          department_id: '501',
          department_name: 'Engineering',
          month: '2026-02-01',
          accepted: 2,
          declined: 1,
          acceptance_rate: 2 / 3,
        },
        // Job 2 names its department only in the seed shape's departments array.
        {
          department_id: '502',
          department_name: 'Design',
          month: '2026-01-01',
          accepted: 1,
          declined: 0,
          acceptance_rate: 1,
        },
      ]),
    );
  });
});
