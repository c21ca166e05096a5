import type { RecordGenerator, SimulationContext } from '../simulation-context.js';
import { simulateJobBoard, simulateReferrer, simulateSource } from './reference-lists.js';

/**
 * How many of a reference list's records links name: the first `usual` (the
 * default list's size), or fewer when the dataset's list started smaller, so
 * that every board, referrer and source a link names is one its list serves
 * (until the list removes it), as in the real API. A dataset without the list
 * still names `usual` of them.
 */
function named(sim: SimulationContext, list: string, usual: number): number {
  const held = sim.startSize(list);
  return held > 0 ? Math.min(held, usual) : usual;
}

function nested(sim: SimulationContext, index: number) {
  const h = sim.mix(sim.seed + 2, index);
  return {
    h,
    board: h % named(sim, 'job_boards', 13),
    referrer: (h >>> 4) % named(sim, 'referrers', 40),
    source: (h >>> 8) % named(sim, 'sources', 12),
  };
}

function simulateNested(sim: SimulationContext, index: number) {
  const { h, board, referrer, source } = nested(sim, index);
  // The nested objects are the records of the reference lists, as the lists serve them now.
  const jobBoard = simulateJobBoard(sim, board);
  const person = simulateReferrer(sim, referrer);
  const origin = simulateSource(sim, source);
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
            id: jobBoard.id,
            company_name: jobBoard.company_name,
            url_token: jobBoard.url_token,
          },
    token: `t${sim.idOf('tracking_links', index).toString(36)}`,
    related_post_id: h % 3 === 0 ? null : 8_000_000_000 + (h % 1000),
    related_post_type: h % 3 === 0 ? null : h % 2 === 0 ? 'SocialMediaPost' : 'EmailTemplate',
    credited_to:
      h % 4 === 0
        ? null
        : {
            id: anonymous ? null : person.id,
            name: person.name,
            employee_id: referrer % 3 === 0 ? null : `E-${referrer}`,
          },
    source: h % 10 === 0 ? null : { id: origin.id, public_name: origin.name },
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
    job_board_id: h % 9 === 0 ? null : sim.idOf('job_boards', board),
    token: link.token,
    related_post_id: link.related_post_id,
    related_post_type: link.related_post_type,
    referrer_id: h % 4 === 0 || h % 11 === 0 ? null : sim.idOf('referrers', referrer),
    source_id: h % 10 === 0 ? null : sim.idOf('sources', source),
    created_at: link.created_at,
    updated_at: link.updated_at,
  };
}

/**
 * A tracking link: with nested job_board, credited_to and source objects, or
 * their bare ids when the dataset sends tracking links flat.
 */
export const simulateTrackingLink: RecordGenerator = (sim, index) =>
  sim.flat ? simulateFlat(sim, index) : simulateNested(sim, index);
