import { z } from 'zod';
import { defineResource } from './resource.js';
import { bigintId, opt, timestamp } from './validate-record.js';

/** A job board of `/v3/job_boards`: `id, company_name, url_token` (more keys are kept in raw). */
export const jobBoardSchema = z.looseObject({
  id: bigintId,
  company_name: opt(z.string()),
  url_token: opt(z.string()),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

/** A source of `/v3/sources`: `id, name, type: {id, name}`. */
export const sourceSchema = z.looseObject({
  id: bigintId,
  name: opt(z.string()),
  type: opt(z.looseObject({ id: opt(bigintId), name: opt(z.string()) })),
});

/** A referrer of `/v3/referrers`: `id, name, user_id` (no employee_id). */
export const referrerSchema = z.looseObject({
  id: bigintId,
  name: opt(z.string()),
  user_id: opt(bigintId),
  employee_id: opt(z.string()),
});

/**
 * Job boards: the list `/v3/job_boards`, in the table job_boards that the
 * nested job_board objects of tracking links fill too.
 */
export const jobBoards = defineResource({
  name: 'job_boards',
  description: 'job boards, in the table the nested job_board objects of tracking links fill',
  table: 'job_boards',
  defaultPath: '/v3/job_boards',
  pathVariable: 'HIRESYNC_RESOURCE_PATHS',
  schema: jobBoardSchema,
  storage: 'job_boards',
  recordColumn: 'raw',
});

/** Sources: the list `/v3/sources` (`name` in the column public_name), in the table sources. */
export const sources = defineResource({
  name: 'sources',
  description: 'sources (name as public_name), in the table the nested source objects fill',
  table: 'sources',
  defaultPath: '/v3/sources',
  pathVariable: 'HIRESYNC_RESOURCE_PATHS',
  schema: sourceSchema,
  storage: 'sources',
  recordColumn: 'raw',
});

/** Referrers: the list `/v3/referrers`, in the table referrers (tracking links' credited_to). */
export const referrers = defineResource({
  name: 'referrers',
  description: 'referrers, in the table the nested credited_to objects of tracking links fill',
  table: 'referrers',
  defaultPath: '/v3/referrers',
  pathVariable: 'HIRESYNC_RESOURCE_PATHS',
  schema: referrerSchema,
  storage: 'referrers',
  recordColumn: 'raw',
});
