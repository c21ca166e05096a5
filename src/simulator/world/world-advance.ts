/**
 * One step of the v3 world's time: what happened since the last one, all
 * stamped at the step's time, so incremental runs (`updated_at=gte|…`) see
 * every record it changed.
 */

import type { Placement } from './world-applications.js';
import { addApplication } from './world-build.js';
import {
  addOffer,
  enterStage,
  fillOpening,
  leaveStage,
  pathOf,
  reasonFor,
  reject,
  resolveOffer,
} from './world-history.js';
import { type AppRow, hash, type WorldState } from './world-model.js';

/** What one advance changed, by index of each resource's rows. */
export interface AdvanceReport {
  /** The step's time (ms): every changed record's updated_at. */
  atMs: number;
  /** Applications that moved to their next stage. */
  moved: number[];
  /** The stage row left with `current: false` and `exited_at` still null (hiresync's history is its only witness). */
  silentExit: number;
  rejected: number[];
  hired: number[];
  /** Applications created. */
  added: number[];
  /** The application deleted (and with it its stage rows, offers, rejection, EEOC row and answers); -1 none. */
  deleted: number;
  /** Jobs whose status or closed_at may have changed (an opening closed). */
  jobs: number[];
}

function isActiveFunnel(app: AppRow): boolean {
  return !app.deleted && !app.prospect && app.status === 'in_process' && app.stageRows.length > 0;
}

/** Whether `app` waits on a pending offer (its latest offer Created). */
function pendingOffer(world: WorldState, app: AppRow): boolean {
  return world.offers[app.offers.at(-1) ?? -1]?.status === 'Created';
}

/**
 * Advances the world to `atMs`: of the active applications, about one in
 * five moves to its next stage (an offer created on reaching Offer; the
 * first mover's old row left without an exit time), one in ten is rejected
 * where it stands; about half of those waiting on an offer accept it and are
 * hired (closing an open opening of the job when there is one); 5% new
 * applications (at least 3) arrive; one application not hired is deleted.
 * At least one of each happens when the world holds a candidate for it.
 */
export function advanceWorld(
  world: WorldState,
  place: Placement,
  seed: number,
  atMs: number,
): AdvanceReport {
  world.advances += 1;
  world.nowMs = atMs;
  const round = world.advances;
  const report: AdvanceReport = {
    atMs,
    moved: [],
    silentExit: -1,
    rejected: [],
    hired: [],
    added: [],
    deleted: -1,
    jobs: [],
  };
  const waiting: number[] = [];
  const movable: number[] = [];
  world.apps.forEach((app, index) => {
    if (!isActiveFunnel(app)) return;
    if (pendingOffer(world, app)) waiting.push(index);
    else if (nextStage(world, index) !== undefined) movable.push(index);
  });
  const chosen = (list: number[], salt: number, per: number) => {
    const out = list.filter((i) => hash(seed, salt + round * 7, i) % per === 0);
    const first = list[0];
    return out.length === 0 && first !== undefined ? [first] : out;
  };
  const hires = chosen(waiting, 300, 2);
  const chosenMoves = chosen(movable, 310, 5);
  // Leave one to reject when every movable one was chosen to move.
  const moves =
    chosenMoves.length === movable.length && movable.length > 1
      ? chosenMoves.slice(0, -1)
      : chosenMoves;
  const rejects = chosen(
    movable.filter((i) => !moves.includes(i)),
    320,
    10,
  );
  for (const index of hires) {
    const app = world.apps[index];
    if (!app) continue;
    app.status = 'hired';
    app.updatedMs = atMs;
    leaveStage(app, world, atMs, atMs);
    resolveOffer(world, app, 'Accepted', atMs);
    if (fillOpening(world, seed, index, app, atMs) >= 0) {
      const job = world.jobs[app.job];
      if (job) job.changedMs = atMs;
      report.jobs.push(app.job);
    }
    report.hired.push(index);
  }
  for (const index of moves) {
    const app = world.apps[index];
    const stage = nextStage(world, index);
    if (!app || stage === undefined) continue;
    const silent = report.silentExit < 0;
    if (silent) report.silentExit = app.stageRows.at(-1) ?? -1;
    leaveStage(app, world, atMs, silent ? null : atMs);
    enterStage(world, index, app, stage, atMs);
    const path = pathOf(world, app);
    if (stage === path.at(-1)) addOffer(world, index, app, 1, 'Created', atMs, false);
    app.updatedMs = atMs;
    report.moved.push(index);
  }
  for (const index of rejects) {
    const app = world.apps[index];
    if (!app) continue;
    leaveStage(app, world, atMs, atMs);
    reject(world, seed, index, app, atMs, reasonFor(seed, index + round));
    app.updatedMs = atMs;
    report.rejected.push(index);
  }
  const arriving = Math.max(3, Math.round(world.startApps * 0.05));
  for (let k = 0; k < arriving; k += 1) {
    const index = world.apps.length;
    addApplication(world, place, seed, index, atMs + k, false);
    report.added.push(index);
  }
  report.deleted = deleteOne(world, seed, round, new Set([...hires, ...moves, ...rejects]));
  return report;
}

/** The stage after `app`'s current one on its path, or undefined at the last. */
function nextStage(world: WorldState, index: number): number | undefined {
  const app = world.apps[index];
  if (!app) return undefined;
  const current = world.stageRows[app.stageRows.at(-1) ?? -1]?.stage;
  const path = pathOf(world, app);
  const at = current === undefined ? -1 : path.indexOf(current);
  return at < 0 ? undefined : path[at + 1];
}

/** Deletes one funnel application not hired and not changed this step, with its child rows; returns it (-1 none). */
function deleteOne(world: WorldState, seed: number, round: number, changed: Set<number>): number {
  const n = world.apps.length;
  if (n === 0) return -1;
  const start = hash(seed, 330, round) % n;
  for (let k = 0; k < n; k += 1) {
    const index = (start + k) % n;
    const app = world.apps[index];
    if (!app || app.deleted || app.prospect || app.status === 'hired' || changed.has(index))
      continue;
    if (app.stageRows.length === 0) continue;
    app.deleted = true;
    for (const r of app.stageRows) {
      const row = world.stageRows[r];
      if (row) row.deleted = true;
    }
    for (const o of app.offers) {
      const offer = world.offers[o];
      if (offer) offer.deleted = true;
    }
    const rejection = world.rejections[app.rejection];
    if (rejection) rejection.deleted = true;
    const eeoc = world.eeoc[app.eeoc];
    if (eeoc) eeoc.deleted = true;
    for (const a of app.answers) {
      const answer = world.answers[a];
      if (answer) answer.deleted = true;
    }
    return index;
  }
  return -1;
}
