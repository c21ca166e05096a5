/**
 * How an application of the v3 world is made: which job, post, source,
 * referrer and tracking link it has, and its answers to the EEOC survey and
 * the demographic questions. Its history (stages, offers, rejection) is
 * played by world-history.ts.
 */

import { DEMOGRAPHIC_OPTIONS, EEOC_FIELDS, EEOC_VALUES, optionsOf } from './world-lists.js';
import {
  type AppRow,
  boardOfPost,
  hash,
  isDraft,
  jobOfPost,
  linkFacts,
  postsOfJob,
  type WorldState,
} from './world-model.js';

/** What choosing applications' jobs needs, computed once per world. */
export interface Placement {
  /** Jobs that take applications (not drafts). */
  openJobs: number[];
  /** Posts of jobs taking applications, by job board. */
  boardPosts: Map<number, number[]>;
}

export function placementOf(world: WorldState, seed: number): Placement {
  const openJobs: number[] = [];
  for (let j = 0; j < world.sizes.jobs; j += 1) if (!isDraft(j)) openJobs.push(j);
  const boardPosts = new Map<number, number[]>();
  for (let p = 0; p < world.sizes.jobPosts; p += 1) {
    const board = boardOfPost(seed, world.sizes, p);
    if (board < 0 || isDraft(jobOfPost(world.sizes, p))) continue;
    const list = boardPosts.get(board) ?? [];
    list.push(p);
    boardPosts.set(board, list);
  }
  return { openJobs, boardPosts };
}

/** Index of the candidate of application `index`: one or two applications each (as the extra candidates list). */
export function candidateOf(index: number): number {
  return Math.floor((2 * index) / 3);
}

function pick<T>(list: readonly T[], n: number): T | undefined {
  return list.length === 0 ? undefined : list[n % list.length];
}

/** A non-service user (service accounts are every fifth: 4, 9, …), or -1 when there are none. */
export function staffUser(world: WorldState, n: number): number {
  const users = world.sizes.users;
  if (users === 0) return -1;
  const u = n % users;
  return u % 5 === 4 ? u - 1 : u;
}

/** Where a tracking link would place an application: its job and post, or undefined when it cannot. */
function placeByLink(
  world: WorldState,
  place: Placement,
  link: number,
  seed: number,
  n: number,
): { job: number; post: number; source: number; referrer: number } | undefined {
  const facts = linkFacts(seed, world.sizes, link);
  if (facts.source < 0) return undefined;
  const { source, referrer } = facts;
  let job: number;
  let post = -1;
  if (facts.target === 'post') {
    job = jobOfPost(world.sizes, facts.on);
    post = facts.on;
  } else if (facts.target === 'job') {
    job = facts.on;
    post = n % 10 < 7 ? (pick(postsOfJob(world.sizes, job), n >>> 4) ?? -1) : -1;
  } else if (facts.target === 'board') {
    post = pick(place.boardPosts.get(facts.on) ?? [], n) ?? -1;
    if (post < 0) return undefined;
    job = jobOfPost(world.sizes, post);
  } else {
    job = pick(place.openJobs, n) ?? -1;
    post = n % 10 < 7 ? (pick(postsOfJob(world.sizes, job), n >>> 4) ?? -1) : -1;
  }
  if (job < 0 || isDraft(job)) return undefined;
  return { job, post, source, referrer };
}

/**
 * Application `index` created at `createdMs`, with no history yet: a
 * prospect (one in twelve; half of them on no job), or a candidate's
 * application to an open job, four in ten through a tracking link (then its
 * source, referrer and post or board are the link's).
 */
export function makeApplication(
  world: WorldState,
  place: Placement,
  seed: number,
  index: number,
  createdMs: number,
): AppRow {
  const h = hash(seed, 50, index);
  const { sizes } = world;
  const app: AppRow = {
    candidate: candidateOf(index),
    job: -1,
    post: -1,
    source: -1,
    referrer: -1,
    recruiter: staffUser(world, h >>> 5),
    coordinator: staffUser(world, h >>> 11),
    link: -1,
    prospect: (h % 12 === 0 && !inFunnel(world, index)) || place.openJobs.length === 0,
    status: 'in_process',
    createdMs,
    updatedMs: createdMs,
    rejectedMs: null,
    stageRows: [],
    offers: [],
    rejection: -1,
    eeoc: -1,
    answers: [],
    deleted: false,
  };
  const n = hash(seed, 49, index);
  if (app.prospect) {
    app.job = h % 24 === 0 ? -1 : (pick(place.openJobs, n) ?? -1);
    app.status = (h >>> 3) % 10 < 3 ? 'converted' : 'in_process';
    app.source = sizes.sources === 0 ? -1 : (n >>> 16) % sizes.sources;
    return app;
  }
  const link = twinned(world, index)
    ? 0
    : (h >>> 4) % 5 < 2 && sizes.trackingLinks > 0
      ? (h >>> 7) % sizes.trackingLinks
      : -1;
  const byLink = link < 0 ? undefined : placeByLink(world, place, link, seed, n);
  if (byLink) {
    Object.assign(app, byLink);
    app.link = link;
  } else {
    app.job = pick(place.openJobs, n) ?? -1;
    app.post = n % 10 < 7 ? (pick(postsOfJob(sizes, app.job), n >>> 4) ?? -1) : -1;
    app.source = (h >>> 14) % 20 === 0 || sizes.sources === 0 ? -1 : (n >>> 16) % sizes.sources;
    app.referrer = (h >>> 20) % 8 === 0 && sizes.referrers > 0 ? (n >>> 22) % sizes.referrers : -1;
  }
  // At most one application per candidate per job: a second one moves to the next job.
  const previous = world.apps[index - 1];
  if (previous && previous.candidate === app.candidate && previous.job === app.job) {
    const at = place.openJobs.indexOf(app.job);
    app.job = pick(place.openJobs, at + 1) ?? app.job;
    app.post = pick(postsOfJob(sizes, app.job), 0) ?? -1;
    app.link = -1;
  }
  return app;
}

/**
 * Whether application `index` comes through link 0, which has a twin: every
 * fiftieth from 2, so that even a small world holds an ambiguous application.
 */
function twinned(world: WorldState, index: number): boolean {
  return index % 50 === 2 && world.sizes.trackingLinks > 1 && world.sizes.jobPosts > 0;
}

/** Applications never prospects: those through link 0, and the newest four of the start (see playStart). */
function inFunnel(world: WorldState, index: number): boolean {
  const newest = world.startApps - index;
  return twinned(world, index) || (newest >= 1 && newest <= 4);
}

/** A skewed pick among `n` values (lower ones more often), so some cells stay small. */
function skewed(h: number, n: number): number {
  const x = (h % 1000) / 1000;
  return Math.min(n - 1, Math.floor(x * x * n));
}

/**
 * The EEOC row of application `index`, for six in ten funnel applications:
 * a survey submitted an hour after applying (or requested and never
 * answered: all answers skipped, submitted_at null), some answers skipped,
 * some objects null.
 */
export function addEeoc(world: WorldState, seed: number, index: number, app: AppRow): void {
  const he = hash(seed, 54, index);
  if (he % 10 >= 6) return;
  const unanswered = he % 20 === 7;
  const answers = EEOC_FIELDS.map((field, f) => {
    if (unanswered) return -1;
    const x = hash(seed, 55 + f, index);
    if (x % 100 < 5) return -2;
    if (x % 100 < 13) return -1;
    return skewed(x >>> 8, EEOC_VALUES[field].length);
  }) as [number, number, number, number];
  const at = app.createdMs + 3_600_000;
  app.eeoc = world.eeoc.length;
  world.eeoc.push({
    app: index,
    answers,
    submittedMs: unanswered ? null : at,
    createdMs: at,
    updatedMs: at,
    deleted: false,
  });
}

/**
 * The demographic answers of application `index`, for half the funnel
 * applications: one row for the standard question, one or two for the
 * multi-select one, one for pronouns (free text with the self-describe
 * option); some skipped (option null), one in twenty pronoun rows free text only.
 */
export function addAnswers(world: WorldState, seed: number, index: number, app: AppRow): void {
  const hd = hash(seed, 60, index);
  if (hd % 10 >= 5) return;
  const at = app.createdMs + 3_600_000;
  const add = (question: number, option: number, text: string | null) => {
    app.answers.push(world.answers.length);
    world.answers.push({
      app: index,
      question,
      option,
      text,
      createdMs: at,
      updatedMs: at,
      deleted: false,
    });
  };
  const q0 = optionsOf(0);
  add(0, (hd >>> 4) % 10 === 0 ? -1 : (pick(q0, hd >>> 8) ?? -1), null);
  const q1 = optionsOf(1);
  if ((hd >>> 12) % 10 === 0) add(1, -1, null);
  else {
    const a = (hd >>> 16) % q1.length;
    add(1, q1[a] ?? -1, null);
    if ((hd >>> 24) % 3 === 0)
      add(1, q1[(a + 1 + ((hd >>> 20) % (q1.length - 1))) % q1.length] ?? -1, null);
  }
  const q2 = optionsOf(2);
  if ((hd >>> 26) % 20 === 0) add(2, -1, 'I would rather write it out');
  else {
    const option = pick(q2, hd >>> 27) ?? -1;
    add(2, option, DEMOGRAPHIC_OPTIONS[option]?.freeForm ? 'self-described' : null);
  }
}
