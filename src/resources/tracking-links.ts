import { z } from 'zod';
import { storeTrackingLinks } from '../warehouse/store-tracking-links.js';
import { defineResource, type SimulationContext } from './resource.js';
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

function nested(sim: SimulationContext, index: number) {
  const h = sim.mix(sim.seed + 2, index);
  return { h, board: h % 13, referrer: (h >>> 4) % 40, source: (h >>> 8) % 12 };
}

function simulateNested(sim: SimulationContext, index: number) {
  const { h, board, referrer, source } = nested(sim, index);
  const t = sim.times('tracking_links', index);
  const anonymous = h % 11 === 0;
  return {
    id: sim.idOf('tracking_links', index),
    job_id: h % 5 === 0 ? null : sim.idOf('jobs', h % Math.max(1, sim.size('jobs'))),
    job_post_id:
      h % 7 === 0 ? null : sim.idOf('job_posts', (h >>> 3) % Math.max(1, sim.size('job_posts'))),
    job_board:
      h % 9 === 0
        ? null
        : {
            id: 2_200_000_000 + board,
            company_name: `Company ${board}`,
            url_token: `company${board}`,
          },
    token: `t${sim.idOf('tracking_links', index).toString(36)}`,
    related_post_id: h % 3 === 0 ? null : 8_000_000_000 + (h % 1000),
    related_post_type: h % 3 === 0 ? null : h % 2 === 0 ? 'SocialMediaPost' : 'EmailTemplate',
    credited_to:
      h % 4 === 0
        ? null
        : {
            id: anonymous ? null : 3_300_000_000 + referrer,
            name: `Referrer ${referrer}${t.version ? ` (rev ${t.version})` : ''}`,
            employee_id: referrer % 3 === 0 ? null : `E-${referrer}`,
          },
    source: h % 10 === 0 ? null : { id: 100 + source, public_name: `Source ${source}` },
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}

function simulateFlat(sim: SimulationContext, index: number) {
  const { h, board, referrer, source } = nested(sim, index);
  const link = simulateNested(sim, index);
  return {
    id: link.id,
    job_id: link.job_id,
    job_post_id: link.job_post_id,
    job_board_id: h % 9 === 0 ? null : 2_200_000_000 + board,
    token: link.token,
    related_post_id: link.related_post_id,
    related_post_type: link.related_post_type,
    referrer_id: h % 4 === 0 || h % 11 === 0 ? null : 3_300_000_000 + referrer,
    source_id: h % 10 === 0 ? null : 100 + source,
    created_at: link.created_at,
    updated_at: link.updated_at,
  };
}

/**
 * Tracking links: normalised into tracking_links, with their nested job_board,
 * credited_to and source objects in job_boards, referrers and sources.
 */
export const trackingLinks = defineResource({
  name: 'tracking_links',
  description: 'tracking links, with their job boards, referrers and sources normalised',
  table: 'tracking_links',
  path: (api) => api.trackingLinksPath,
  pathVariable: 'HIRESYNC_TRACKING_LINKS_PATH',
  schema: trackingLinkSchema,
  write: storeTrackingLinks,
  recordColumn: 'raw',
  simulate: (sim, index) => (sim.flat ? simulateFlat(sim, index) : simulateNested(sim, index)),
});
