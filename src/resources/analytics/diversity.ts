import { z } from 'zod';
import { defineListResource } from '../json-resource.js';
import { bigintId, opt, timestamp } from '../validate-record.js';
import { UPDATED_AT_GTE } from './applications.js';

// Self-identification answers (special-category personal data, row-level:
// the analytics views aggregate them and suppress small cells) and the
// question and option lists they name.

/** An EEOC answer: `{id, description}`; the whole object, or both keys, null when skipped. */
const eeocAnswer = opt(z.looseObject({ id: opt(bigintId), description: opt(z.string()) }));

/** A row of `/v3/eeoc`: one per application that answered the survey. */
export const eeocSchema = z.looseObject({
  id: bigintId,
  application_id: opt(bigintId),
  candidate_id: opt(bigintId),
  gender: eeocAnswer,
  race: eeocAnswer,
  veteran_status: eeocAnswer,
  disability_status: eeocAnswer,
  submitted_at: opt(timestamp),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const eeoc = defineListResource('eeoc', {
  description:
    'EEOC self-identification answers (gender, race, veteran and disability status), one per application',
  schema: eeocSchema,
  // Not verified on the live service (submitted_at is the documented filter,
  // and misses corrections); HIRESYNC_UPDATED_FILTER replaces it.
  read: { incremental: UPDATED_AT_GTE },
  columns: {
    application_id: 'bigint',
    candidate_id: 'bigint',
    gender: 'jsonb',
    race: 'jsonb',
    veteran_status: 'jsonb',
    disability_status: 'jsonb',
    submitted_at: 'timestamptz',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
});

/**
 * A row of `/v3/demographic_answers`: one chosen option (or none) of one
 * question for one application. `free_form_text` is the vendor's "highly
 * sensitive" free text: unchecked, so that a field policy may drop it, and
 * never a typed column.
 */
export const demographicAnswerSchema = z.looseObject({
  id: bigintId,
  application_id: opt(bigintId),
  demographic_question_id: opt(bigintId),
  demographic_answer_option_id: opt(bigintId),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const demographicAnswers = defineListResource('demographic_answers', {
  description: "applications' demographic answers: the question and the option chosen",
  schema: demographicAnswerSchema,
  read: { incremental: UPDATED_AT_GTE },
  columns: {
    application_id: 'bigint',
    demographic_question_id: 'bigint',
    demographic_answer_option_id: 'bigint',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
});

/** A question of `/v3/demographic_questions`; `name` is null on the standard questions, and the times too in practice. */
export const demographicQuestionSchema = z.looseObject({
  id: bigintId,
  demographic_question_set_id: opt(bigintId),
  name: opt(z.string()),
  sort_order: opt(bigintId),
  required: opt(z.boolean()),
  active: opt(z.boolean()),
  answer_type: opt(z.string()),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const demographicQuestions = defineListResource('demographic_questions', {
  description: 'demographic questions (name null on the standard ones), read in full every run',
  schema: demographicQuestionSchema,
  // The list has no date filter: an incremental run would miss every change.
  read: { everyRunFull: true },
  columns: {
    demographic_question_set_id: 'bigint',
    name: 'text',
    sort_order: 'bigint',
    required: 'boolean',
    active: 'boolean',
    answer_type: 'text',
  },
});

/** An option of `/v3/demographic_answer_options`; `name` is null on the standard options. */
export const demographicAnswerOptionSchema = z.looseObject({
  id: bigintId,
  demographic_question_id: opt(bigintId),
  name: opt(z.string()),
  sort_order: opt(bigintId),
  active: opt(z.boolean()),
  free_form: opt(z.boolean()),
  decline_to_answer: opt(z.boolean()),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

export const demographicAnswerOptions = defineListResource('demographic_answer_options', {
  description:
    "demographic questions' answer options (name null on the standard ones), read in full every run",
  schema: demographicAnswerOptionSchema,
  // The list has no date filter: an incremental run would miss every change.
  read: { everyRunFull: true },
  columns: {
    demographic_question_id: 'bigint',
    name: 'text',
    sort_order: 'bigint',
    active: 'boolean',
    free_form: 'boolean',
    decline_to_answer: 'boolean',
  },
});
