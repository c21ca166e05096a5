/**
 * The catalog's jobs, job posts and tracking links as the v3 world shapes
 * them: the keys the plain generators give (so everything that read them
 * before still does) with the world's values where they must agree with its
 * applications, openings and stages.
 */

import { simulateJobPost } from '../records/job-posts.js';
import { simulateJob } from '../records/jobs.js';
import { simulateJobBoard, simulateReferrer, simulateSource } from '../records/reference-lists.js';
import { simulateTrackingLink } from '../records/tracking-links.js';
import type { RecordGenerator, SimulationContext } from '../simulation-context.js';
import { boardOfPost, jobOfPost, linkFacts, type WorldState } from './world-model.js';
import { iso } from './world-records.js';

/** The world a generator reads (built on first use). */
export type WorldOf = () => WorldState;

/**
 * A v3 job: department_id, office_ids, opened_at, and a status that follows
 * its openings (draft; open while one is open; closed, with closed_at the
 * latest close, once all are).
 */
export function worldJob(worldOf: WorldOf): RecordGenerator {
  return (sim, index) => {
    const world = worldOf();
    const job = world.jobs[index];
    const base = simulateJob(sim, index);
    if (!job) return base;
    const openings = job.openings.map((o) => world.openings[o]);
    const open = openings.some((o) => o && o.openedMs !== null && o.closedMs === null);
    const closedMs = Math.max(0, ...openings.map((o) => o?.closedMs ?? 0));
    const status = job.draft ? 'draft' : open ? 'open' : 'closed';
    return {
      ...base,
      status,
      department_id: job.department < 0 ? null : sim.idOf('departments', job.department),
      office_ids: job.offices.map((o) => sim.idOf('offices', o)),
      opened_at: iso(job.openedMs),
      closed_at: status === 'closed' && closedMs > 0 ? iso(closedMs) : null,
      confidential: false,
      is_template: false,
    };
  };
}

/** A v3 job post: of the job `index % jobs`, on a job board (none for every ninth). */
export function worldJobPost(worldOf: WorldOf): RecordGenerator {
  return (sim, index) => {
    const { sizes } = worldOf();
    const job = jobOfPost(sizes, index);
    const board = boardOfPost(sim.seed, sizes, index);
    return {
      ...simulateJobPost(sim, index),
      job_id: job < 0 ? null : sim.idOf('jobs', job),
      job_board_id: board < 0 ? null : sim.idOf('job_boards', board),
    };
  };
}

function ids(sim: SimulationContext, world: WorldState, index: number) {
  const facts = linkFacts(sim.seed, world.sizes, index);
  const on = (target: string, resource: string) =>
    facts.target === target ? sim.idOf(resource, facts.on) : null;
  return {
    facts,
    job_id: on('job', 'jobs'),
    job_post_id: on('post', 'job_posts'),
    job_board: facts.target === 'board' ? facts.on : -1,
  };
}

/**
 * A tracking link of the world: one target (a post, a job, a board, or
 * none), a source and for some a referrer, the same the applications it
 * brought carry; flat or with nested objects as the dataset sends links.
 */
export function worldTrackingLink(worldOf: WorldOf): RecordGenerator {
  return (sim, index) => {
    const world = worldOf();
    const base = simulateTrackingLink(sim, index);
    const { facts, job_id, job_post_id, job_board } = ids(sim, world, index);
    if (sim.flat)
      return {
        ...base,
        job_id,
        job_post_id,
        job_board_id: job_board < 0 ? null : sim.idOf('job_boards', job_board),
        referrer_id: facts.referrer < 0 ? null : sim.idOf('referrers', facts.referrer),
        source_id: facts.source < 0 ? null : sim.idOf('sources', facts.source),
      };
    const board = job_board < 0 ? undefined : simulateJobBoard(sim, job_board);
    const person = facts.referrer < 0 ? undefined : simulateReferrer(sim, facts.referrer);
    const origin = facts.source < 0 ? undefined : simulateSource(sim, facts.source);
    return {
      ...base,
      job_id,
      job_post_id,
      job_board: board
        ? { id: board.id, company_name: board.company_name, url_token: board.url_token }
        : null,
      credited_to: person ? { id: person.id, name: person.name, employee_id: null } : null,
      source: origin ? { id: origin.id, public_name: origin.name } : null,
    };
  };
}

/** The world's generators of the catalog's resources, by name. */
export function worldCatalogGenerators(worldOf: WorldOf): ReadonlyMap<string, RecordGenerator> {
  return new Map([
    ['jobs', worldJob(worldOf)],
    ['job_posts', worldJobPost(worldOf)],
    ['tracking_links', worldTrackingLink(worldOf)],
  ]);
}
