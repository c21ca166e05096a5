/**
 * The small fixed lists of the v3 world: close reasons, rejection reasons,
 * demographic questions and answer options, EEOC answer values, departments,
 * offices, and the names of a job's pipeline stages. Records of these lists
 * are built from their index (see world-records.ts).
 */

/** Names of the stages between `Application Review` (first) and `Offer` (last) of a pipeline. */
export const MIDDLE_STAGES = [
  'Preliminary Phone Screen',
  'Take Home Test',
  'Face to Face',
  'Reference Check',
  'Executive Interview',
] as const;

/** The stage a job's plan retired: inactive, kept because older applications went through it. */
export const RETIRED_STAGE = 'Hiring Manager Review';

/** Close reasons: those whose name starts with `Hire -` close an opening with a hire. */
export const CLOSE_REASONS = [
  'Hire - New Headcount',
  'Hire - Backfill',
  'Position Cancelled',
  'Budget Cut',
] as const;
export const HIRE_NEW_HEADCOUNT = 0;
export const HIRE_BACKFILL = 1;
export const POSITION_CANCELLED = 2;
export const BUDGET_CUT = 3;

const WE = { id: 1, key: 'WE_REJECTED_THEM', name: 'We rejected them' };
const THEY = { id: 2, key: 'THEY_REJECTED_US', name: 'They rejected us' };
const NONE = { id: 3, key: 'NONE_SPECIFIED', name: 'None specified' };

/**
 * Rejection reasons: the first {@link BUILT_IN_REASONS} are the built-in
 * ones, listed only with `include_defaults=true`; the others are the
 * organisation's own, always listed.
 */
export const REJECTION_REASONS = [
  { name: 'Other (add notes below)', type: NONE },
  { name: 'Did not meet requirements', type: WE },
  { name: 'Candidate withdrew', type: THEY },
  { name: 'Lacking skill(s)/qualification(s)', type: WE },
  { name: 'Hired another candidate', type: WE },
  { name: 'Position closed', type: WE },
  { name: 'Accepted another offer', type: THEY },
  { name: 'Compensation expectations', type: THEY },
  { name: 'Spam', type: NONE },
] as const;
export const BUILT_IN_REASONS = 3;
/** Custom reasons a declined offer is rejected with. */
export const DECLINE_REASONS = [6, 7] as const;

/** EEOC answers by field: `{id, description}` values (the regulator's categories). */
export const EEOC_VALUES = {
  gender: ['Male', 'Female', 'Decline To Self Identify'],
  race: [
    'American Indian or Alaskan Native',
    'Asian',
    'Black or African American',
    'Hispanic or Latino',
    'White',
    'Native Hawaiian or Other Pacific Islander',
    'Two or More Races',
    'Decline To Self Identify',
  ],
  veteran_status: [
    'I am not a protected veteran',
    'I identify as one or more of the classifications of protected veteran',
    "I don't wish to answer",
  ],
  disability_status: [
    'Yes, I have a disability (or previously had a disability)',
    'No, I do not have a disability',
    'I do not want to answer',
  ],
} as const;
export const EEOC_FIELDS = ['gender', 'race', 'veteran_status', 'disability_status'] as const;

/**
 * Demographic questions: question 0 is a standard one (its prompt a
 * localized template, so the API serves `name` null).
 */
export const DEMOGRAPHIC_QUESTIONS = [
  { name: null, answerType: 'multi_value_single_select' },
  {
    name: 'Which of the following best describes your racial or ethnic background?',
    answerType: 'multi_value_multi_select',
  },
  { name: 'What are your pronouns?', answerType: 'multi_value_single_select' },
] as const;

/**
 * Demographic answer options, by question: standard options have `name`
 * null; `decline` is the option's `decline_to_answer` (null on some, which
 * reads as not a decline); `freeForm` asks for free text.
 */
export const DEMOGRAPHIC_OPTIONS: ReadonlyArray<{
  question: number;
  name: string | null;
  decline: boolean | null;
  freeForm: boolean;
}> = [
  { question: 0, name: null, decline: false, freeForm: false },
  { question: 0, name: null, decline: false, freeForm: false },
  { question: 0, name: 'Non-binary', decline: false, freeForm: false },
  { question: 0, name: null, decline: true, freeForm: false },
  { question: 1, name: 'Asian', decline: false, freeForm: false },
  { question: 1, name: 'Black', decline: false, freeForm: false },
  { question: 1, name: 'Hispanic or Latinx', decline: false, freeForm: false },
  { question: 1, name: 'Middle Eastern or North African', decline: false, freeForm: false },
  { question: 1, name: 'White', decline: false, freeForm: false },
  { question: 1, name: 'I prefer not to answer', decline: true, freeForm: false },
  { question: 2, name: 'she/her', decline: null, freeForm: false },
  { question: 2, name: 'he/him', decline: null, freeForm: false },
  { question: 2, name: 'they/them', decline: null, freeForm: false },
  { question: 2, name: 'Prefer to self-describe', decline: null, freeForm: true },
];

/** Indexes of the answer options of question `question`. */
export function optionsOf(question: number): number[] {
  const out: number[] = [];
  DEMOGRAPHIC_OPTIONS.forEach((o, i) => {
    if (o.question === question) out.push(i);
  });
  return out;
}

/** Departments: `parent` is the index of the parent department, or null. */
export const DEPARTMENTS = [
  { name: 'Engineering', parent: null },
  { name: 'Product', parent: null },
  { name: 'Design', parent: 1 },
  { name: 'Sales', parent: null },
  { name: 'Customer Success', parent: 3 },
  { name: 'Marketing', parent: null },
  { name: 'People', parent: null },
  { name: 'Finance', parent: null },
] as const;

export const OFFICES = ['New York', 'London', 'Berlin', 'Toronto', 'Remote'] as const;

export const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances'];
export const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen'];
