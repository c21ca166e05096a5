// The analytics views (docs/analytics.md; ../shared/interface.md, "Analytics
// (fourth edition)"): each view's rows for a world written by hand into the
// shared tables, worked out by hand from its records, and the same views
// across accounts in all_accounts.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ANALYTICS_VIEWS } from '../../src/warehouse/analytics/analytics-views.js';
import type { AccountsHarness } from '../support/accounts-harness.js';
import { storeJanuaryHistory, storeRecruitingWorld } from '../support/analytics-fixture.js';
import { rowsOf, sortRows, storeList } from '../support/analytics-rows.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { accounts } = cleanupAfterEach();

/** globex holds the recruiting world; default the people of the diversity funnel. */
async function world(): Promise<AccountsHarness> {
  const h = await accounts({ accounts: ['globex'], records: 1 });
  await storeRecruitingWorld(h.database.db, 'globex');
  await storeJanuaryHistory(h.database.db, 'globex');
  return h;
}

const at = (day: string) => `${day}T00:00:00.000Z`;

describe('the analytics views of one account', () => {
  it('source of hire counts funnel applications (no prospects, nothing deleted) by source, referrer, job board and job, with their rates', async () => {
    const db = (await world()).database.db;
    expect(await rowsOf(db, 'globex_analytics.source_of_hire')).toEqual(
      sortRows([
        {
          source_id: 1,
          source_name: 'LinkedIn',
          source_type: 'Prospecting',
          applications: 3,
          offers: 2,
          hires: 1,
          interviewed: 2,
          interview_rate: 0.666667,
          offer_rate: 0.666667,
          hire_rate: 0.333333,
        },
        {
          source_id: 2,
          source_name: 'Referral',
          source_type: 'Referrals',
          applications: 1,
          offers: 0,
          hires: 0,
          interviewed: 0,
          interview_rate: 0,
          offer_rate: 0,
          hire_rate: 0,
        },
        {
          source_id: null,
          source_name: null,
          source_type: null,
          applications: 2,
          offers: 1,
          hires: 2,
          interviewed: 1,
          interview_rate: 0.5,
          offer_rate: 0.5,
          hire_rate: 1,
        },
      ]),
    );
    expect(await rowsOf(db, 'globex_analytics.source_of_hire_by_referrer')).toEqual(
      sortRows([
        {
          referrer_id: 7,
          referrer_name: 'Ann',
          applications: 1,
          interviewed: 1,
          offers: 1,
          hires: 0,
          hire_rate: 0,
        },
        {
          referrer_id: null,
          referrer_name: null,
          applications: 5,
          interviewed: 2,
          offers: 2,
          hires: 3,
          hire_rate: 0.6,
        },
      ]),
    );
    expect(await rowsOf(db, 'globex_analytics.source_of_hire_by_job_board')).toEqual(
      sortRows([
        {
          job_board_id: 900,
          job_board_name: 'Acme Board',
          applications: 2,
          interviewed: 2,
          offers: 2,
          hires: 1,
          hire_rate: 0.5,
        },
        {
          job_board_id: null,
          job_board_name: null,
          applications: 4,
          interviewed: 1,
          offers: 1,
          hires: 2,
          hire_rate: 0.5,
        },
      ]),
    );
    expect(await rowsOf(db, 'globex_analytics.source_of_hire_by_job')).toEqual(
      sortRows([
        {
          job_id: 10,
          job_name: 'Engineer',
          applications: 4,
          interviewed: 2,
          offers: 2,
          hires: 1,
          hire_rate: 0.25,
        },
        {
          job_id: 20,
          job_name: 'Designer',
          applications: 2,
          interviewed: 1,
          offers: 1,
          hires: 2,
          hire_rate: 1,
        },
      ]),
    );
  });

  it('credits an application to the one tracking link it matches, and counts one matching several as ambiguous for each, credited to none', async () => {
    const db = (await world()).database.db;
    expect(await rowsOf(db, 'globex_analytics.source_of_hire_by_tracking_link')).toEqual(
      sortRows([
        // Application 1 (post 50) matches this link only; application 2 (post 50, referrer 7) this and 62.
        {
          tracking_link_id: 61,
          token: 'post50',
          source_id: 1,
          applications: 1,
          interviewed: 1,
          offers: 1,
          hires: 1,
          ambiguous_applications: 1,
        },
        {
          tracking_link_id: 62,
          token: 'job10ann',
          source_id: 1,
          applications: 0,
          interviewed: 0,
          offers: 0,
          hires: 0,
          ambiguous_applications: 1,
        },
        {
          tracking_link_id: 63,
          token: 'anywhere',
          source_id: 2,
          applications: 1,
          interviewed: 0,
          offers: 0,
          hires: 0,
          ambiguous_applications: 0,
        },
      ]),
    );
  });

  it("pipeline conversion follows each job's stage order, ignoring stage rows of another job and deleted stages", async () => {
    const db = (await world()).database.db;
    const stage = (
      job_id: number,
      stage_id: number,
      stage_name: string,
      stage_order: number,
      counts: number[],
      rate: number | null,
      active = true,
    ) => ({
      job_id,
      stage_id,
      stage_name,
      stage_order,
      entered: counts[0],
      moved_on: counts[1],
      rejected: counts[2],
      still_there: counts[3],
      pass_through_rate: rate,
      stage_active: active,
    });
    expect(await rowsOf(db, 'globex_analytics.pipeline_conversion')).toEqual(
      sortRows([
        stage(10, 101, 'Application Review', 0, [3, 2, 0, 1], 0.666667),
        stage(10, 102, 'Phone Screen', 1, [2, 1, 1, 0], 0.5),
        stage(10, 103, 'Onsite', 2, [1, 1, 0, 0], 1),
        stage(10, 104, 'Offer', 3, [1, 1, 0, 0], 1),
        stage(10, 105, 'Old', 5, [0, 0, 0, 0], null, false),
        stage(20, 201, 'Review', 0, [1, 1, 0, 0], 1),
        stage(20, 202, 'Interview', 1, [1, 1, 0, 0], 1),
      ]),
    );
  });

  it("pipeline_as_of(at) is the pipeline as hiresync's history held it then", async () => {
    const db = (await world()).database.db;
    const stage = (
      stage_id: number,
      stage_name: string,
      stage_order: number,
      counts: number[],
      rate: number | null,
    ) => ({
      job_id: 10,
      stage_id,
      stage_name,
      stage_order,
      entered: counts[0],
      moved_on: counts[1],
      rejected: counts[2],
      still_there: counts[3],
      pass_through_rate: rate,
      stage_active: true,
    });
    const asOf = (when: string) => rowsOf(db, `globex_analytics.pipeline_as_of('${when}')`);
    // Application 3 is still there (deleted on Jan 5); 2002 not yet entered.
    expect(await asOf('2026-01-04T12:00:00Z')).toEqual(
      sortRows([
        stage(101, 'Application Review', 0, [3, 0, 0, 3], 0),
        stage(102, 'Phone Screen', 1, [0, 0, 0, 0], null),
      ]),
    );
    expect(await asOf('2026-01-11T00:00:00Z')).toEqual(
      sortRows([
        stage(101, 'Application Review', 0, [2, 1, 0, 1], 0.5),
        stage(102, 'Phone Screen', 1, [1, 0, 0, 1], 0),
      ]),
    );
    // Application 2 rejected on Jan 16.
    expect(await asOf('2026-01-20T00:00:00Z')).toEqual(
      sortRows([
        stage(101, 'Application Review', 0, [2, 1, 0, 1], 0.5),
        stage(102, 'Phone Screen', 1, [1, 0, 1, 0], 0),
      ]),
    );
    expect(await asOf('2025-06-01T00:00:00Z')).toEqual([]);
  });

  it("time in stage takes the API's times, else created_at and hiresync's history, saying which", async () => {
    const db = (await world()).database.db;
    const rows = await rowsOf(db, 'globex_analytics.time_in_stage');
    const now = Date.now();
    // Current rows without an exit run to now.
    for (const row of rows.filter((r) => r.current === true && r.exited_at === null)) {
      const days = (now - Date.parse(String(row.entered_at))) / 86_400_000;
      expect(Number(row.days)).toBeCloseTo(days, 1);
      row.days = 'to now';
    }
    const row = (
      application_id: number,
      job_id: number,
      stage_id: number,
      stage_name: string,
      stage_order: number,
      current: boolean,
      entered: [string, string] | [null, null],
      exited: [string, string] | [null, null],
      days: number | string | null,
    ) => ({
      application_id,
      job_id,
      stage_id,
      stage_name,
      stage_order,
      current,
      entered_at: entered[0] && at(entered[0]),
      entered_at_source: entered[1],
      exited_at:
        exited[0] && (exited[0].includes('T') ? new Date(exited[0]).toISOString() : at(exited[0])),
      exited_at_source: exited[1],
      days,
    });
    expect(rows).toEqual(
      sortRows([
        row(
          1,
          10,
          101,
          'Application Review',
          0,
          false,
          ['2026-01-10', 'api'],
          ['2026-01-12', 'api'],
          2,
        ),
        row(1, 10, 102, 'Phone Screen', 1, false, ['2026-01-10', 'api'], ['2026-01-12', 'api'], 2),
        row(1, 10, 103, 'Onsite', 2, false, ['2026-01-10', 'api'], ['2026-01-12', 'api'], 2),
        row(1, 10, 104, 'Offer', 3, true, ['2026-01-20', 'api'], [null, null], 'to now'),
        row(
          2,
          10,
          101,
          'Application Review',
          0,
          false,
          ['2026-01-10', 'api'],
          ['2026-01-12', 'api'],
          2,
        ),
        row(
          2,
          10,
          102,
          'Phone Screen',
          1,
          false,
          ['2026-01-10', 'api'],
          ['2026-01-15T06:00:00Z', 'history'],
          5.25,
        ),
        row(
          3,
          10,
          101,
          'Application Review',
          0,
          true,
          ['2026-01-09', 'created_at'],
          [null, null],
          'to now',
        ),
        row(4, 20, 201, 'Review', 0, false, ['2026-01-10', 'api'], ['2026-01-12', 'api'], 2),
        row(4, 20, 202, 'Interview', 1, false, ['2026-01-09', 'created_at'], [null, null], null),
      ]),
    );
  });

  it('time to hire takes the hire from the opening it filled, else its accepted latest offer; time to fill counts filled openings only', async () => {
    const db = (await world()).database.db;
    expect(await rowsOf(db, 'globex_analytics.time_to_hire')).toEqual(
      sortRows([
        {
          application_id: 1,
          job_id: 10,
          applied_at: at('2026-01-01'),
          first_offer_at: at('2026-01-20'),
          hired_at: at('2026-02-10'),
          days_to_offer: 19,
          days_to_hire: 40,
          hired_at_source: 'opening',
        },
        {
          application_id: 4,
          job_id: 20,
          applied_at: at('2026-02-01'),
          first_offer_at: at('2026-02-20'),
          hired_at: at('2026-03-05'),
          days_to_offer: 19,
          days_to_hire: 32,
          hired_at_source: 'offer',
        },
        {
          application_id: 8,
          job_id: 20,
          applied_at: at('2026-01-08'),
          first_offer_at: null,
          hired_at: null,
          days_to_offer: null,
          days_to_hire: null,
          hired_at_source: null,
        },
      ]),
    );
    expect(await rowsOf(db, 'globex_analytics.time_to_fill')).toEqual(
      sortRows([
        {
          opening_id: 401,
          job_id: 10,
          opened_at: at('2025-12-01'),
          closed_at: at('2026-02-10'),
          close_reason_id: 1,
          close_reason: 'Hire - New Headcount',
          filled: true,
          application_id: 1,
          days_to_fill: 71,
        },
        {
          opening_id: 402,
          job_id: 10,
          opened_at: at('2026-01-01'),
          closed_at: null,
          close_reason_id: null,
          close_reason: null,
          filled: false,
          application_id: null,
          days_to_fill: null,
        },
        {
          opening_id: 403,
          job_id: 20,
          opened_at: at('2026-01-01'),
          closed_at: at('2026-01-15'),
          close_reason_id: 2,
          close_reason: 'Position cancelled',
          filled: false,
          application_id: null,
          days_to_fill: null,
        },
      ]),
    );
    expect(await rowsOf(db, 'globex_analytics.time_to_fill_by_job')).toEqual(
      sortRows([
        {
          job_id: 10,
          job_name: 'Engineer',
          openings: 2,
          open_openings: 1,
          filled_openings: 1,
          avg_days_to_fill: 71,
          median_days_to_fill: 71,
          max_days_to_fill: 71,
        },
        {
          job_id: 20,
          job_name: 'Designer',
          openings: 1,
          open_openings: 0,
          filled_openings: 0,
          avg_days_to_fill: null,
          median_days_to_fill: null,
          max_days_to_fill: null,
        },
      ]),
    );
  });

  it("offer acceptance reads each application's latest offer, by job and by department, per month resolved", async () => {
    const db = (await world()).database.db;
    expect(await rowsOf(db, 'globex_analytics.offer_acceptance')).toEqual(
      sortRows([
        { job_id: 10, month: '2026-02-01', accepted: 1, declined: 1, acceptance_rate: 0.5 },
        { job_id: 20, month: '2026-03-01', accepted: 1, declined: 0, acceptance_rate: 1 },
      ]),
    );
    expect(await rowsOf(db, 'globex_analytics.offer_acceptance_by_department')).toEqual(
      sortRows([
        {
          department_id: 500,
          department_name: 'Eng',
          month: '2026-02-01',
          accepted: 1,
          declined: 1,
          acceptance_rate: 0.5,
        },
        // The seed shape's departments[0].id when the job has no department_id.
        {
          department_id: 600,
          department_name: 'Design',
          month: '2026-03-01',
          accepted: 1,
          declined: 0,
          acceptance_rate: 1,
        },
      ]),
    );
  });

  it('rejection reasons count rejected applications by their last stage and reason, a rejection without a reason included', async () => {
    const db = (await world()).database.db;
    expect(await rowsOf(db, 'globex_analytics.rejection_reasons')).toEqual(
      sortRows([
        {
          stage_name: 'Phone Screen',
          rejection_reason_id: 1,
          reason_name: 'Not a fit',
          reason_type: 'WE_REJECTED_THEM',
          rejections: 1,
        },
        {
          stage_name: null,
          rejection_reason_id: null,
          reason_name: null,
          reason_type: null,
          rejections: 1,
        },
      ]),
    );
  });
});

/**
 * Default's people: 12 funnel applications of 12 candidates (and a second
 * application of candidate 1), each with an EEOC answer sheet; 2 hired; a
 * demographic question without a name, labelled by the operator.
 */
async function diversityWorld(h: AccountsHarness): Promise<void> {
  const db = h.database.db;
  const gender = ['F', 'F', 'F', 'F', 'F', 'F', 'F', 'M', 'M', 'M', 'M', null];
  const veteran = ['A', 'A', 'A', 'A', 'A', 'B', 'B', 'B', 'B', 'B', 'C', 'C'];
  const disability = ['No', 'No', 'No', 'No', 'No', 'No', 'No', 'No', 'No', 'Yes', 'Yes', 'Yes'];
  const answer = (description: string | null) =>
    description === null ? null : { id: 1, description };
  await storeList(db, 'default', 'applications', [
    ...gender.map((_, i) => ({
      id: i + 1,
      candidate_id: i + 1,
      job_id: 30,
      prospect: false,
      status: i < 2 ? 'hired' : 'in_process',
    })),
    { id: 13, candidate_id: 1, job_id: 31, prospect: false, status: 'in_process' },
    { id: 14, candidate_id: 14, job_id: null, prospect: true, status: 'in_process' },
  ]);
  await storeList(db, 'default', 'eeoc', [
    ...gender.map((g, i) => ({
      id: 100 + i,
      application_id: i + 1,
      gender: answer(g),
      race: null,
      veteran_status: answer(veteran[i] ?? null),
      disability_status: answer(disability[i] ?? null),
    })),
    {
      id: 113,
      application_id: 13,
      gender: answer('F'),
      race: null,
      veteran_status: answer('A'),
      disability_status: answer('No'),
    },
    // A prospect's answers count nowhere.
    {
      id: 114,
      application_id: 14,
      gender: answer('X'),
      race: null,
      veteran_status: null,
      disability_status: null,
    },
  ]);
  await storeList(db, 'default', 'demographic_questions', [{ id: 1, name: null, sort_order: 1 }]);
  await storeList(db, 'default', 'demographic_answer_options', [
    { id: 11, demographic_question_id: 1, name: null, sort_order: 1 },
    { id: 12, demographic_question_id: 1, name: 'Other', sort_order: 2 },
  ]);
  await sql`insert into public.demographic_labels (kind, id, label) values ('question', 1, 'Pronouns'), ('option', 11, 'she/her')`.execute(
    db,
  );
  await storeList(db, 'default', 'demographic_answers', [
    ...[1, 2, 3, 4, 5, 6].map((a) => ({
      id: 200 + a,
      application_id: a,
      demographic_question_id: 1,
      demographic_answer_option_id: 11,
      free_form_text: 'secret',
    })),
    { id: 207, application_id: 7, demographic_question_id: 1, demographic_answer_option_id: null },
    { id: 208, application_id: 8, demographic_question_id: 99, demographic_answer_option_id: 12 },
  ]);
}

describe('the diversity funnel', () => {
  it('suppresses every cell under 5 people, and the smallest other cell of a step where only one was', async () => {
    const h = await world();
    await diversityWorld(h);
    // The labels are the account's own table view: upserts go through it, another account's row never does.
    await sql`insert into public.demographic_labels (kind, id, label) values ('question', 1, 'Pronouns')
      on conflict (account, kind, id) do update set label = excluded.label`.execute(h.database.db);
    await expect(
      sql`insert into public.demographic_labels (account, kind, id, label) values ('globex', 'option', 1, 'x')`.execute(
        h.database.db,
      ),
    ).rejects.toThrow(/violates check option/);
    const cell = (
      source: string,
      question: string,
      answer: string,
      step: string,
      people: number | null,
    ) => ({
      source,
      question,
      answer,
      step,
      step_order: ['applied', 'interviewed', 'offered', 'hired'].indexOf(step) + 1,
      people,
      suppressed: people === null,
    });
    expect(await rowsOf(h.database.db, 'analytics.diversity_funnel')).toEqual(
      sortRows([
        // Candidate 1 applied twice: counted once.
        cell('eeoc', 'gender', 'F', 'applied', 7),
        cell('eeoc', 'gender', 'M', 'applied', null),
        cell('eeoc', 'gender', '(not answered)', 'applied', null),
        cell('eeoc', 'race', '(not answered)', 'applied', 12),
        // C alone is under 5: the smaller of A and B (a tie: A, first in order) goes with it.
        cell('eeoc', 'veteran_status', 'A', 'applied', null),
        cell('eeoc', 'veteran_status', 'B', 'applied', 5),
        cell('eeoc', 'veteran_status', 'C', 'applied', null),
        cell('eeoc', 'disability_status', 'No', 'applied', null),
        cell('eeoc', 'disability_status', 'Yes', 'applied', null),
        cell('eeoc', 'gender', 'F', 'hired', null),
        cell('eeoc', 'race', '(not answered)', 'hired', null),
        cell('eeoc', 'veteran_status', 'A', 'hired', null),
        cell('eeoc', 'disability_status', 'No', 'hired', null),
        // The operator's labels name what the API leaves unnamed.
        cell('demographic', 'Pronouns', 'she/her', 'applied', null),
        cell('demographic', 'Pronouns', '(not answered)', 'applied', null),
        cell('demographic', 'question 99', 'Other', 'applied', null),
        cell('demographic', 'Pronouns', 'she/her', 'hired', null),
      ]),
    );
  });
});

describe('the analytics views across accounts', () => {
  it("all_accounts holds each view with the account first, each account's rows the same as in its own schema", async () => {
    const h = await world();
    await diversityWorld(h);
    const db = h.database.db;
    for (const view of ANALYTICS_VIEWS) {
      const { rows: columns } = await sql<{ names: string[] }>`
        select array_agg(attname::text order by attnum) as names from pg_attribute
        where attrelid = ${`all_accounts.${view.name}`}::regclass and attnum > 0`.execute(db);
      expect(columns[0]?.names, view.name).toEqual(['account', ...view.columns.map((c) => c.name)]);
      for (const [account, schema] of [
        ['default', 'analytics'],
        ['globex', 'globex_analytics'],
      ] as const) {
        // One statement: the same now() on both sides.
        const { rows } = await sql<{ only_union: string; only_schema: string; n: string }>`
          with u as (select to_jsonb(v) - 'account' as r from ${sql.id('all_accounts', view.name)} v where account = ${account}),
            s as (select to_jsonb(v) as r from ${sql.id(schema, view.name)} v)
          select (select count(*) from (select r from u except all select r from s) x)::text as only_union,
            (select count(*) from (select r from s except all select r from u) x)::text as only_schema,
            (select count(*) from s)::text as n`.execute(db);
        expect(rows[0], `${view.name} of ${account}`).toMatchObject({
          only_union: '0',
          only_schema: '0',
        });
      }
    }
    const { rows } = await sql<{ account: string; n: string }>`
      select account, count(*)::text as n from all_accounts.pipeline_as_of('2026-01-11T00:00:00Z') group by account`.execute(
      db,
    );
    expect(rows).toEqual([{ account: 'globex', n: '2' }]);
  });
});
