import type { ResourceDeclaration } from '../resource.js';
import { applicationStages, applications, jobInterviewStages } from './applications.js';
import {
  demographicAnswerOptions,
  demographicAnswers,
  demographicQuestions,
  eeoc,
} from './diversity.js';
import { closeReasons, offers, openings } from './offers.js';
import { departments, offices, users } from './organisation.js';
import { rejectionDetails, rejectionReasons } from './rejections.js';

/**
 * The lists the analytics views read, each stored like a list named in
 * HIRESYNC_RESOURCES (table `NAME_data`, views `NAME` and `NAME_flat`), in
 * the order of the `@analytics` set.
 */
export const ANALYTICS_DECLARATIONS: readonly ResourceDeclaration[] = [
  applications,
  applicationStages,
  jobInterviewStages,
  offers,
  openings,
  closeReasons,
  rejectionDetails,
  rejectionReasons,
  eeoc,
  demographicAnswers,
  demographicQuestions,
  demographicAnswerOptions,
  users,
  departments,
  offices,
];
