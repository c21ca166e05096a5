import { buildFunnel, type Funnel, type FunnelApplication } from './funnel.js';
import {
  type AnalyticsRecords,
  type ApiRecord,
  bigintOf,
  byId,
  nestedOf,
  textOf,
} from './records.js';
import type { Row } from './source-of-hire.js';

/**
 * 11. `rejection_reasons`: rejection details of applications the API still
 * lists, per (name of the application's last stage, reason).
 */
export function rejectionReasons(records: AnalyticsRecords): Row[] {
  const applications = byId(records.applications);
  const reasons = byId(records.rejection_reasons);
  // Last stages of every application, prospects included: stage rows are defined for any.
  const everyApplication = buildFunnel({
    ...records,
    applications: records.applications.map((a) => ({ ...a, prospect: false })),
  });
  const groups = new Map<
    string,
    { stageName: string | null; reasonId: string | null; ids: Set<string> }
  >();
  for (const detail of records.rejection_details) {
    const applicationId = bigintOf(detail.application_id);
    if (applicationId === null || !applications.has(applicationId)) continue;
    const stageName = everyApplication.applications.get(applicationId)?.lastStage?.name ?? null;
    const reasonId = bigintOf(detail.rejection_reason_id);
    const key = JSON.stringify([stageName, reasonId]);
    const group = groups.get(key) ?? { stageName, reasonId, ids: new Set<string>() };
    group.ids.add(applicationId);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ stageName, reasonId, ids }) => {
    const reason = reasonId === null ? undefined : reasons.get(reasonId);
    return {
      stage_name: stageName,
      rejection_reason_id: reasonId,
      reason_name: textOf(reason?.name),
      reason_type: textOf(nestedOf(reason, 'type', 'key')),
      rejections: ids.size,
    };
  });
}

/** The funnel steps of the diversity funnel, in order. */
export const STEPS: ReadonlyArray<{
  step: string;
  order: number;
  in: (a: FunnelApplication) => boolean;
}> = [
  { step: 'applied', order: 1, in: () => true },
  { step: 'interviewed', order: 2, in: (a) => a.interviewed },
  { step: 'offered', order: 3, in: (a) => a.offered },
  { step: 'hired', order: 4, in: (a) => a.hired },
];

/** The EEOC questions: the keys of an eeoc record. */
export const EEOC_QUESTIONS = ['gender', 'race', 'veteran_status', 'disability_status'] as const;

/** Cells smaller than this are suppressed. */
export const SMALLEST_SHOWN = 5;

const NOT_ANSWERED = '(not answered)';

/** One answer of one application: (source, question, answer). */
interface Answer {
  applicationId: string;
  source: 'eeoc' | 'demographic';
  question: string;
  answer: string;
}

function eeocAnswers(records: AnalyticsRecords): Answer[] {
  return records.eeoc.flatMap((row) => {
    const applicationId = bigintOf(row.application_id);
    if (applicationId === null) return [];
    return EEOC_QUESTIONS.map((question) => ({
      applicationId,
      source: 'eeoc' as const,
      question,
      answer: textOf(nestedOf(row, question, 'description')) ?? NOT_ANSWERED,
    }));
  });
}

function demographicAnswers(records: AnalyticsRecords): Answer[] {
  const questions = byId(records.demographic_questions);
  const options = byId(records.demographic_answer_options);
  const labels = new Map(records.demographic_labels.map((l) => [`${l.kind}:${l.id}`, l.label]));
  const named = (kind: 'question' | 'option', id: string, list: Map<string, ApiRecord>) =>
    textOf(list.get(id)?.name) ?? labels.get(`${kind}:${id}`) ?? `${kind} ${id}`;
  return records.demographic_answers.flatMap((row) => {
    const applicationId = bigintOf(row.application_id);
    const questionId = bigintOf(row.demographic_question_id);
    if (applicationId === null || questionId === null) return [];
    const optionId = bigintOf(row.demographic_answer_option_id);
    return [
      {
        applicationId,
        source: 'demographic' as const,
        question: named('question', questionId, questions),
        answer: optionId === null ? NOT_ANSWERED : named('option', optionId, options),
      },
    ];
  });
}

/** Codepoint order, as the database's C collation orders text. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * 12. `diversity_funnel`: distinct candidates per (source, question, answer,
 * step), cells under 5 suppressed, and the complementary cell too when a
 * group would have exactly one suppressed cell.
 */
export function diversityFunnel(records: AnalyticsRecords, funnel: Funnel): Row[] {
  const cells = new Map<
    string,
    {
      source: string;
      question: string;
      answer: string;
      step: (typeof STEPS)[number];
      people: Set<string>;
    }
  >();
  for (const answer of [...eeocAnswers(records), ...demographicAnswers(records)]) {
    const application = funnel.applications.get(answer.applicationId);
    if (!application || application.candidateId === null) continue;
    for (const step of STEPS) {
      if (!step.in(application)) continue;
      const key = JSON.stringify([answer.source, answer.question, answer.answer, step.step]);
      const cell = cells.get(key) ?? { ...answer, step, people: new Set<string>() };
      cell.people.add(application.candidateId);
      cells.set(key, cell);
    }
  }
  const rows = [...cells.values()].map((cell) => ({
    source: cell.source,
    question: cell.question,
    answer: cell.answer,
    step: cell.step.step,
    step_order: cell.step.order,
    people: cell.people.size as number | null,
    suppressed: cell.people.size < SMALLEST_SHOWN,
  }));
  const groups = new Map<string, typeof rows>();
  for (const row of rows) {
    const key = JSON.stringify([row.source, row.question, row.step]);
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  for (const group of groups.values()) {
    const shown = group.filter((r) => !r.suppressed);
    if (group.length - shown.length !== 1 || shown.length === 0) continue;
    const smallest = [...shown].sort(
      (a, b) => (a.people ?? 0) - (b.people ?? 0) || compareText(a.answer, b.answer),
    )[0];
    if (smallest) smallest.suppressed = true;
  }
  for (const row of rows) if (row.suppressed) row.people = null;
  return rows;
}
