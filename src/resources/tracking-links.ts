import { z } from 'zod';
import { defineResource } from './resource.js';
import { bigintId, opt, timestamp } from './validate-record.js';

/** The spec's tracking link (section 2.1), and the flat shape some deployments send. */
export const trackingLinkSchema = z.looseObject({
  id: bigintId,
  job_id: opt(bigintId),
  job_post_id: opt(bigintId),
  job_board: opt(
    z.looseObject({ id: opt(bigintId), company_name: opt(z.string()), url_token: opt(z.string()) }),
  ),
  token: opt(z.string()),
  related_post_id: opt(bigintId),
  related_post_type: opt(z.string()),
  credited_to: opt(
    z.looseObject({ id: opt(bigintId), name: opt(z.string()), employee_id: opt(z.string()) }),
  ),
  source: opt(z.looseObject({ id: opt(bigintId), public_name: opt(z.string()) })),
  // The flat shape some deployments send.
  job_board_id: opt(bigintId),
  referrer_id: opt(bigintId),
  source_id: opt(bigintId),
  created_at: opt(timestamp),
  updated_at: opt(timestamp),
});

/**
 * Tracking links: normalised into tracking_links, with their nested job_board,
 * credited_to and source objects in job_boards, referrers and sources.
 */
export const trackingLinks = defineResource({
  name: 'tracking_links',
  description: 'tracking links, with their job boards, referrers and sources normalised',
  table: 'tracking_links',
  defaultPath: '/v3/tracking_links',
  pathVariable: 'HIRESYNC_TRACKING_LINKS_PATH',
  schema: trackingLinkSchema,
  storage: 'tracking_links',
  recordColumn: 'raw',
});
