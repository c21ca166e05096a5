/**
 * Builds the v3 world of a dataset at its start: the jobs' plans, then each
 * application with its history, survey answers and, once every hire is
 * known, the openings those hires closed.
 */

import {
  addAnswers,
  addEeoc,
  makeApplication,
  type Placement,
  placementOf,
} from './world-applications.js';
import { enterStage, planJobs, playStart } from './world-history.js';
import {
  DAY_MS,
  EPOCH_MS,
  hash,
  SPAN_MS,
  START_NOW_MS,
  type WorldSizes,
  type WorldState,
} from './world-model.js';
import { buildOpenings } from './world-openings.js';

/**
 * The world of `applications` applications over catalog lists of `sizes`,
 * seeded by `seed`; `jobCreatedMs` gives each job's creation time (its
 * record's `created_at`).
 */
export function buildWorld(
  seed: number,
  sizes: WorldSizes,
  applications: number,
  jobCreatedMs: (job: number) => number,
): WorldState {
  const world: WorldState = {
    sizes,
    jobs: [],
    stages: [],
    apps: [],
    stageRows: [],
    offers: [],
    openings: [],
    rejections: [],
    eeoc: [],
    answers: [],
    nowMs: START_NOW_MS,
    startApps: applications,
    advances: 0,
  };
  planJobs(world, seed, jobCreatedMs);
  const place = placementOf(world, seed);
  const firstMs = EPOCH_MS + 3 * DAY_MS;
  for (let index = 0; index < applications; index += 1) {
    // Spread over the span in index order, so newer applications have higher ids.
    const createdMs =
      firstMs +
      Math.floor((index * SPAN_MS) / Math.max(1, applications)) +
      (hash(seed, 48, index) % 3_600_000);
    addApplication(world, place, seed, index, createdMs, true);
  }
  buildOpenings(world, seed);
  return world;
}

/**
 * Adds application `index` created at `createdMs`: with the history it had
 * by the start (`atStart`), or else just entered its job's first stage.
 */
export function addApplication(
  world: WorldState,
  place: Placement,
  seed: number,
  index: number,
  createdMs: number,
  atStart: boolean,
): void {
  const app = makeApplication(world, place, seed, index, createdMs);
  world.apps.push(app);
  if (app.prospect) return;
  if (atStart) playStart(world, seed, index, app);
  else {
    const first = world.jobs[app.job]?.stages.find((s) => world.stages[s]?.active);
    if (first !== undefined) enterStage(world, index, app, first, createdMs);
  }
  addEeoc(world, seed, index, app);
  addAnswers(world, seed, index, app);
}
