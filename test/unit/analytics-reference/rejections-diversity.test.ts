import { describe, expect, it } from 'vitest';
import {
  application,
  offer,
  stageRows,
  world,
} from '../../support/analytics-reference/fixtures.js';
import {
  type ApiRecord,
  expectedAnalytics,
  type Row,
} from '../../support/analytics-reference/index.js';

const NOW = Date.parse('2026-02-01T00:00:00Z');

describe('the reference of rejection_reasons', () => {
  it('counts rejected applications per last stage name and reason, leaving out applications no longer listed', () => {
    const atScreen = application({ status: 'rejected' });
    const atScreenToo = application({ status: 'rejected' });
    const noStages = application({ status: 'rejected' });
    const gone = application({ status: 'rejected' });
    const detail = (app: ApiRecord, reason: number | null) => ({
      id: Number(app.id) + 500_000,
      application_id: app.id,
      rejection_reason_id: reason,
      rejected_at: '2026-01-20T00:00:00Z',
    });
    const views = expectedAnalytics(
      world({
        applications: [atScreen, atScreenToo, noStages],
        application_stages: [...stageRows(atScreen, [11, 12]), ...stageRows(atScreenToo, [12])],
        rejection_details: [
          detail(atScreen, 71),
          detail(atScreenToo, 71),
          detail(noStages, null),
          detail(gone, 71),
        ],
        rejection_reasons: [
          {
            id: 71,
            name: 'Lacks skills',
            type: { id: 1, key: 'WE_REJECTED_THEM', name: 'We rejected them' },
          },
        ],
      }),
      { now: NOW },
    );
    expect(views.rejection_reasons).toEqual(
      expect.arrayContaining([
        {
          stage_name: 'Phone Screen',
          rejection_reason_id: '71',
          reason_name: 'Lacks skills',
          reason_type: 'WE_REJECTED_THEM',
          rejections: 2,
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
    expect(views.rejection_reasons).toHaveLength(2);
  });
});

/** `n` hired applications of distinct candidates whose EEOC gender is `gender`. */
function people(n: number, gender: string | null) {
  const applications = Array.from({ length: n }, () => application({ status: 'hired' }));
  const eeoc = applications.map((a) => ({
    id: Number(a.id) + 600_000,
    application_id: a.id,
    candidate_id: a.candidate_id,
    gender: gender === null ? null : { id: 1, description: gender },
    race: { id: 2, description: null },
    veteran_status: null,
    disability_status: null,
  }));
  return { applications, eeoc };
}

function cells(rows: readonly Row[], question: string, step: string) {
  return Object.fromEntries(
    rows
      .filter((r) => r.question === question && r.step === step)
      .map((r) => [r.answer, [r.people, r.suppressed]]),
  );
}

describe('the reference of diversity_funnel', () => {
  it('suppresses cells under 5, and the smallest other cell when only one would be', () => {
    const women = people(6, 'Female');
    const men = people(7, 'Male');
    const skipped = people(2, null);
    const views = expectedAnalytics(
      world({
        applications: [...women.applications, ...men.applications, ...skipped.applications],
        eeoc: [...women.eeoc, ...men.eeoc, ...skipped.eeoc],
        offers: women.applications.slice(0, 5).map((a) => offer(a)),
      }),
      { now: NOW },
    );
    const rows = views.diversity_funnel;
    expect(cells(rows, 'gender', 'applied')).toEqual({
      Female: [null, true],
      Male: [7, false],
      '(not answered)': [null, true],
    });
    // Only women were offered: one cell, shown.
    expect(cells(rows, 'gender', 'offered')).toEqual({ Female: [5, false] });
    // A description null reads as not answered.
    expect(cells(rows, 'race', 'hired')).toEqual({ '(not answered)': [15, false] });
    expect(
      rows.find((r) => r.question === 'gender' && r.answer === 'Male' && r.step === 'hired'),
    ).toEqual({
      source: 'eeoc',
      question: 'gender',
      answer: 'Male',
      step: 'hired',
      step_order: 4,
      people: 7,
      suppressed: false,
    });
    // Nobody was interviewed: no cells at all.
    expect(rows.filter((r) => r.step === 'interviewed')).toEqual([]);
  });

  it('breaks a tie for the complementary cell by the first answer in text order, and leaves two suppressed cells alone', () => {
    const a = people(6, 'B');
    const b = people(6, 'A');
    const c = people(1, 'C');
    const tie = expectedAnalytics(
      world({
        applications: [...a.applications, ...b.applications, ...c.applications],
        eeoc: [...a.eeoc, ...b.eeoc, ...c.eeoc],
      }),
      { now: NOW },
    );
    expect(cells(tie.diversity_funnel, 'gender', 'applied')).toEqual({
      A: [null, true],
      B: [6, false],
      C: [null, true],
    });
    const d = people(2, 'D');
    const two = expectedAnalytics(
      world({
        applications: [...a.applications, ...c.applications, ...d.applications],
        eeoc: [...a.eeoc, ...c.eeoc, ...d.eeoc],
      }),
      { now: NOW },
    );
    expect(cells(two.diversity_funnel, 'gender', 'applied')).toEqual({
      B: [6, false],
      C: [null, true],
      D: [null, true],
    });
  });

  it('names demographic questions and options by the API, else the local label, else by id; counts a candidate once', () => {
    const apps = Array.from({ length: 5 }, () => application());
    // A second application of the first candidate: still one person.
    apps.push(application({ candidate_id: apps[0]?.candidate_id }));
    const answer = (a: ApiRecord, question: number, option: number | null) => ({
      id: Number(a.id) * 10 + question,
      application_id: a.id,
      demographic_question_id: question,
      demographic_answer_option_id: option,
      free_form_text: 'never read',
    });
    const views = expectedAnalytics(
      world({
        applications: apps,
        demographic_questions: [
          { id: 301, name: 'Pronouns', sort_order: 1 },
          { id: 302, name: null, sort_order: 2 },
          { id: 303, name: null, sort_order: 3 },
        ],
        demographic_answer_options: [
          { id: 401, demographic_question_id: 301, name: 'they/them' },
          { id: 402, demographic_question_id: 302, name: null },
          { id: 403, demographic_question_id: 303, name: null },
        ],
        demographic_labels: [
          { kind: 'question', id: '302', label: 'Age range' },
          { kind: 'option', id: '402', label: '25-34' },
        ],
        demographic_answers: apps.flatMap((a) => [
          answer(a, 301, 401),
          answer(a, 302, 402),
          answer(a, 303, 403),
          answer(a, 304, null),
        ]),
      }),
      { now: NOW },
    );
    const applied = views.diversity_funnel.filter((r) => r.step === 'applied');
    expect(
      applied.map((r) => [r.source, r.question, r.answer, r.people, r.suppressed]).sort(),
    ).toEqual([
      ['demographic', 'Age range', '25-34', 5, false],
      ['demographic', 'Pronouns', 'they/them', 5, false],
      ['demographic', 'question 303', 'option 403', 5, false],
      ['demographic', 'question 304', '(not answered)', 5, false],
    ]);
  });
});
