import type { ResourceName } from './ports.js';

/**
 * The lists the analytics views read, as the set `@analytics` names them, in
 * order: written once here, below every layer that needs them (config expands
 * the set, src/resources/analytics declares each, the warehouse makes their
 * shared tables for the views; a unit test holds the declarations to it).
 */
export const ANALYTICS_SET: readonly ResourceName[] = Object.freeze([
  'applications',
  'application_stages',
  'job_interview_stages',
  'offers',
  'openings',
  'close_reasons',
  'rejection_details',
  'rejection_reasons',
  'eeoc',
  'demographic_answers',
  'demographic_questions',
  'demographic_answer_options',
  'users',
  'departments',
  'offices',
]);
