/**
 * The openings of the v3 world's jobs and the hires of the start that close
 * them: each job has one to three; every sixth job from 3 is reopened (its
 * first opening closed, a second one opened 90 days after the job); every
 * fifth from 2 has its last unfilled opening closed without a hire.
 */

import { fillOpening } from './world-history.js';
import { BUDGET_CUT, POSITION_CANCELLED } from './world-lists.js';
import { DAY_MS, hash, START_NOW_MS, type WorldState } from './world-model.js';

/** Whether job `job` is reopened: a closed opening and a newer one. */
export function isReopened(job: number): boolean {
  return job % 6 === 3;
}

function closeWithout(world: WorldState, o: number, reason: number, atMs: number): void {
  const opening = world.openings[o];
  if (!opening || opening.closedMs !== null) return;
  opening.closedMs = atMs;
  opening.reason = reason;
  opening.updatedMs = atMs;
}

/** Opens every job's openings and closes them with the start's hires, in the order they happened. */
export function buildOpenings(world: WorldState, seed: number): void {
  const hires = new Map<number, Array<{ index: number; atMs: number }>>();
  world.apps.forEach((app, index) => {
    if (app.status !== 'hired') return;
    const atMs = world.stageRows[app.stageRows.at(-1) ?? -1]?.exitedMs ?? app.updatedMs;
    const list = hires.get(app.job) ?? [];
    list.push({ index, atMs });
    hires.set(app.job, list);
  });
  world.jobs.forEach((job, j) => {
    const reopened = isReopened(j) && !job.draft;
    const count = job.draft ? 1 : Math.max(reopened ? 2 : 1, 1 + (hash(seed, 56, j) % 3));
    const createdMs = world.stages[job.stages[0] ?? -1]?.createdMs ?? 0;
    for (let k = 0; k < count; k += 1) {
      const openedMs =
        job.openedMs === null
          ? null
          : reopened && k === 1
            ? job.openedMs + 90 * DAY_MS
            : job.openedMs;
      job.openings.push(world.openings.length);
      world.openings.push({
        job: j,
        openedMs,
        closedMs: null,
        app: -1,
        reason: -1,
        createdMs: openedMs ?? createdMs,
        updatedMs: openedMs ?? createdMs,
      });
    }
    const first = job.openings[0] ?? -1;
    const cancelAt = (job.openedMs ?? 0) + 80 * DAY_MS;
    const ordered = (hires.get(j) ?? []).sort((a, b) => a.atMs - b.atMs);
    for (const hire of ordered) {
      if (reopened && hire.atMs >= cancelAt)
        closeWithout(world, first, POSITION_CANCELLED, cancelAt);
      const app = world.apps[hire.index];
      if (app) fillOpening(world, seed, hire.index, app, hire.atMs);
    }
    if (reopened) closeWithout(world, first, POSITION_CANCELLED, cancelAt);
    else if (j % 5 === 2 && job.openedMs !== null)
      closeWithout(world, job.openings.at(-1) ?? -1, BUDGET_CUT, START_NOW_MS - 20 * DAY_MS);
  });
  // Pending offers name an opening still open, when their job has one.
  for (const offer of world.offers) {
    if (offer.status !== 'Created' || offer.opening >= 0) continue;
    const job = world.jobs[world.apps[offer.app]?.job ?? -1];
    const open = job?.openings.find((o) => world.openings[o]?.closedMs === null);
    if (open !== undefined) offer.opening = open;
  }
}
