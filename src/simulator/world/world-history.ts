/**
 * What happens to an application of the v3 world: it enters its job's
 * stages in order, is rejected at one, or gets offers (several versions) and
 * is hired, filling an opening. The start's history is played at once; an
 * advance (world-advance.ts) plays the next steps with the same functions.
 */

import {
  BUILT_IN_REASONS,
  DECLINE_REASONS,
  DEPARTMENTS,
  HIRE_BACKFILL,
  HIRE_NEW_HEADCOUNT,
  MIDDLE_STAGES,
  OFFICES,
  REJECTION_REASONS,
  RETIRED_STAGE,
} from './world-lists.js';
import {
  type AppRow,
  BACKFILL_BEFORE_MS,
  DAY_MS,
  hash,
  isDraft,
  type OfferStatus,
  PLAN_CHANGE_MS,
  START_NOW_MS,
  type WorldState,
} from './world-model.js';

const HOUR_MS = 3_600_000;
/** Applications created this long before the start may still be active; older ones are settled. */
const RECENT_MS = 150 * DAY_MS;

/**
 * The plans of the jobs: a department (none for every seventh from 5), one
 * or two offices, and a pipeline of 4 to 6 active stages, `Application
 * Review` first and `Offer` last; every fourth job from 1 also keeps an
 * inactive stage its plan retired, second in order.
 */
export function planJobs(world: WorldState, seed: number, jobCreatedMs: (job: number) => number) {
  for (let j = 0; j < world.sizes.jobs; j += 1) {
    const h = hash(seed, 57, j);
    const createdMs = jobCreatedMs(j);
    const middle = MIDDLE_STAGES.slice((h >>> 4) % 2).slice(0, 2 + (h % 3));
    const names: Array<[string, boolean]> = [
      ['Application Review', true],
      ...(j % 4 === 1 ? [[RETIRED_STAGE, false] as [string, boolean]] : []),
      ...middle.map((name): [string, boolean] => [name, true]),
      ['Offer', true],
    ];
    const stages = names.map(([name, active], sortOrder) => {
      world.stages.push({ job: j, sortOrder, name, active, createdMs });
      return world.stages.length - 1;
    });
    world.jobs.push({
      draft: isDraft(j),
      openedMs: isDraft(j) ? null : createdMs + HOUR_MS,
      department: j % 7 === 5 ? -1 : j % DEPARTMENTS.length,
      offices: [j % OFFICES.length, ...(j % 3 === 0 ? [(j + 2) % OFFICES.length] : [])],
      stages,
      openings: [],
      changedMs: 0,
    });
  }
}

/** The stages application `app` goes through, in order: its job's, the retired one only before the plan changed. */
export function pathOf(world: WorldState, app: AppRow): number[] {
  const job = world.jobs[app.job];
  if (!job) return [];
  return job.stages.filter((s) => world.stages[s]?.active || app.createdMs < PLAN_CHANGE_MS);
}

/** Starts a stage row of `app` (index `index`) for stage `stage` at `atMs`: the current one. */
export function enterStage(
  world: WorldState,
  index: number,
  app: AppRow,
  stage: number,
  atMs: number,
): void {
  app.stageRows.push(world.stageRows.length);
  world.stageRows.push({
    app: index,
    stage,
    enteredMs: atMs,
    exitedMs: null,
    current: true,
    createdMs: atMs,
    updatedMs: atMs,
    deleted: false,
  });
}

/** Ends `app`'s current stage row at `atMs`, its exit recorded (`exitedMs`) or left null. */
export function leaveStage(app: AppRow, world: WorldState, atMs: number, exitedMs: number | null) {
  const row = world.stageRows[app.stageRows.at(-1) ?? -1];
  if (!row) return;
  row.current = false;
  row.exitedMs = exitedMs;
  row.updatedMs = atMs;
}

/** Rejects `app` at `atMs` with reason `reason` (-1: none): its status, rejected_at and rejection_details row. */
export function reject(
  world: WorldState,
  seed: number,
  index: number,
  app: AppRow,
  atMs: number,
  reason: number,
): void {
  const hr = hash(seed, 53, index);
  app.status = 'rejected';
  app.rejectedMs = atMs;
  app.rejection = world.rejections.length;
  world.rejections.push({
    app: index,
    reason,
    // A legacy record now and then: rejected_at null on the detail, set on the application.
    rejectedMs: hr % 37 === 5 ? null : atMs,
    by: hr % 10 === 0 && world.sizes.users > 4 ? 4 : app.recruiter,
    createdMs: atMs,
    updatedMs: atMs,
    deleted: false,
  });
}

/** The reason a rejection of application `index` gives: none (1 in 10), a built-in one (1 in 5) or a custom one. */
export function reasonFor(seed: number, index: number): number {
  const hr = hash(seed, 53, index) >>> 4;
  if (hr % 20 < 2) return -1;
  if (hr % 20 < 6) return hr % BUILT_IN_REASONS;
  return BUILT_IN_REASONS + ((hr >>> 5) % (REJECTION_REASONS.length - BUILT_IN_REASONS));
}

/** Adds offer version `version` of `app` created at `createdMs`, status `status`. */
export function addOffer(
  world: WorldState,
  index: number,
  app: AppRow,
  version: number,
  status: OfferStatus,
  createdMs: number,
  sent: boolean,
): void {
  app.offers.push(world.offers.length);
  world.offers.push({
    app: index,
    version,
    status,
    sentMs: sent ? createdMs + 2 * HOUR_MS : null,
    resolvedMs: null,
    startsMs: createdMs + 30 * DAY_MS,
    opening: -1,
    createdMs,
    updatedMs: createdMs,
    deleted: false,
  });
}

/** Resolves `app`'s latest offer at `atMs`: Accepted or Rejected, resolved at noon UTC of that day (as the API stores it). */
export function resolveOffer(world: WorldState, app: AppRow, status: OfferStatus, atMs: number) {
  const offer = world.offers[app.offers.at(-1) ?? -1];
  if (!offer) return;
  offer.status = status;
  offer.resolvedMs = Math.floor(atMs / DAY_MS) * DAY_MS + 12 * HOUR_MS;
  offer.sentMs ??= offer.createdMs + 2 * HOUR_MS;
  offer.updatedMs = atMs;
}

/**
 * Closes the first opening of `app`'s job open at `atMs` with the hire of
 * `app`, and names it on the accepted offer; returns the opening, or -1 when
 * none was open (a hire without an opening, as the live service allows).
 */
export function fillOpening(
  world: WorldState,
  seed: number,
  index: number,
  app: AppRow,
  atMs: number,
) {
  const job = world.jobs[app.job];
  if (!job) return -1;
  for (const [k, o] of job.openings.entries()) {
    const opening = world.openings[o];
    if (!opening || opening.openedMs === null || opening.openedMs > atMs) continue;
    if (opening.closedMs !== null) continue;
    opening.closedMs = atMs;
    opening.app = index;
    opening.reason = k === 0 || hash(seed, 58, o) % 2 === 0 ? HIRE_NEW_HEADCOUNT : HIRE_BACKFILL;
    opening.updatedMs = atMs;
    const offer = world.offers[app.offers.at(-1) ?? -1];
    if (offer) offer.opening = o;
    return o;
  }
  return -1;
}

/**
 * Plays the history of funnel application `index` from its creation to the
 * world's start. Those older than 150 days are settled: one in eight hired
 * (several offer versions, the latest accepted), one in twenty declining
 * its offer (rejected at Offer), the rest rejected at some stage. Of the
 * recent ones, some are hired or declined, one in nine waits on an offer, a
 * quarter are rejected and the rest are active in some stage. Stage times grow; an old application now
 * and then has backfilled rows (times null) before its last one.
 */
export function playStart(world: WorldState, seed: number, index: number, app: AppRow) {
  const path = pathOf(world, app);
  if (path.length === 0) return;
  const h2 = hash(seed, 51, index);
  const r = h2 % 100;
  // Older applications are settled (hired or rejected); the recent ones still move.
  const recent = app.createdMs >= START_NOW_MS - RECENT_MS;
  // The newest four of the start: one waiting on an offer, two active, one hired, so that
  // even a small world has a hire and an advance can hire, move and reject.
  const newest = world.startApps - index;
  const outcome =
    newest === 1
      ? 'pending'
      : newest === 2 || newest === 3
        ? 'active'
        : newest === 4
          ? 'hired'
          : recent
            ? r < 6
              ? 'hired'
              : r < 9
                ? 'declined'
                : r < 20
                  ? 'pending'
                  : r < 45
                    ? 'rejected'
                    : 'active'
            : r < 12
              ? 'hired'
              : r < 17
                ? 'declined'
                : 'rejected';
  const offered = outcome === 'hired' || outcome === 'declined' || outcome === 'pending';
  const last = offered ? path.length - 1 : (h2 >>> 8) % (path.length - 1);
  const versions = 1 + ((h2 >>> 16) % 3);
  const backfilled = app.createdMs < BACKFILL_BEFORE_MS && index % 11 === 3;
  let t = app.createdMs + 600_000;
  for (let k = 0; k <= last; k += 1) {
    const stage = path[k] as number;
    const dwell =
      offered && k === last
        ? (versions + 2) * DAY_MS + ((h2 >>> 20) % 12) * HOUR_MS
        : (12 + (hash(seed, 52, index * 8 + k) % 288)) * HOUR_MS;
    enterStage(world, index, app, stage, t);
    if (k < last) {
      leaveStage(app, world, t + dwell, t + dwell);
      if (backfilled) {
        const row = world.stageRows[app.stageRows.at(-1) ?? -1];
        if (row) {
          row.enteredMs = null;
          row.exitedMs = null;
        }
      }
    }
    if (k === last && offered)
      for (let v = 1; v <= versions; v += 1) {
        const sent = outcome !== 'pending' || v < versions || h2 % 2 === 0;
        addOffer(
          world,
          index,
          app,
          v,
          v < versions ? 'Deprecated' : 'Created',
          t + v * DAY_MS + HOUR_MS,
          sent,
        );
        const previous = world.offers[app.offers.at(-2) ?? -1];
        if (v > 1 && previous) previous.updatedMs = t + v * DAY_MS + HOUR_MS;
      }
    if (k === last && outcome !== 'active' && outcome !== 'pending') {
      const end = t + dwell;
      leaveStage(app, world, end, end);
      if (outcome === 'hired') {
        app.status = 'hired';
        resolveOffer(world, app, 'Accepted', end);
      } else if (outcome === 'declined') {
        resolveOffer(world, app, 'Rejected', end);
        reject(world, seed, index, app, end, DECLINE_REASONS[h2 % 2] as number);
      } else reject(world, seed, index, app, end, reasonFor(seed, index));
    }
    t += dwell;
  }
  app.updatedMs = lastChangeOf(world, app);
}

/** The time of `app`'s last change: its stage rows', offers' and rejection's. */
export function lastChangeOf(world: WorldState, app: AppRow): number {
  let at = app.createdMs;
  for (const r of app.stageRows) at = Math.max(at, world.stageRows[r]?.updatedMs ?? 0);
  for (const o of app.offers) at = Math.max(at, world.offers[o]?.updatedMs ?? 0);
  at = Math.max(at, world.rejections[app.rejection]?.updatedMs ?? 0);
  return at;
}
