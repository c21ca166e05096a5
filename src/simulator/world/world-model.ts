/**
 * The state of the v3 world: one row object per record of its resources,
 * built once per dataset (lazily, on first use) and changed in place when the
 * world advances. Records are rendered from these rows when served
 * (world-records.ts). Indexes name rows of other tables; -1 is none.
 */

import { mix } from '../dataset-values.js';

export const DAY_MS = 86_400_000;
export const EPOCH_MS = Date.UTC(2024, 0, 1);
/** Applications of the start are created over this span from {@link EPOCH_MS} + 3 days. */
export const SPAN_MS = 540 * DAY_MS;
/** The world's clock at start: every event of the start happened before it. */
export const START_NOW_MS = EPOCH_MS + 640 * DAY_MS;
/** Applications created before this went through the stage their job's plan later retired. */
export const PLAN_CHANGE_MS = EPOCH_MS + 200 * DAY_MS;
/** Applications created before this have backfilled stage rows (null times) on some. */
export const BACKFILL_BEFORE_MS = EPOCH_MS + 150 * DAY_MS;

export type AppStatus = 'in_process' | 'rejected' | 'hired' | 'converted';

/** What the world reads of the catalog resources' sizes, fixed when it is built. */
export interface WorldSizes {
  jobs: number;
  jobPosts: number;
  trackingLinks: number;
  sources: number;
  referrers: number;
  jobBoards: number;
  users: number;
}

export interface JobPlan {
  draft: boolean;
  openedMs: number | null;
  /** Index in DEPARTMENTS, or -1 (a job without a department). */
  department: number;
  offices: number[];
  /** Rows of job_interview_stages, in sort order. */
  stages: number[];
  openings: number[];
  /** When an advance last changed the job (status, closed_at); 0 never. */
  changedMs: number;
}

export interface StageDef {
  job: number;
  sortOrder: number;
  name: string;
  active: boolean;
  createdMs: number;
}

export interface AppRow {
  candidate: number;
  job: number;
  post: number;
  source: number;
  referrer: number;
  recruiter: number;
  coordinator: number;
  /** The tracking link the application came through (not served: the API has no such key), or -1. */
  link: number;
  prospect: boolean;
  status: AppStatus;
  createdMs: number;
  updatedMs: number;
  rejectedMs: number | null;
  /** Rows of application_stages, oldest first. */
  stageRows: number[];
  offers: number[];
  rejection: number;
  eeoc: number;
  answers: number[];
  deleted: boolean;
}

export interface StageRow {
  app: number;
  stage: number;
  enteredMs: number | null;
  exitedMs: number | null;
  current: boolean;
  createdMs: number;
  updatedMs: number;
  deleted: boolean;
}

export type OfferStatus = 'Created' | 'Accepted' | 'Rejected' | 'Deprecated';

export interface OfferRow {
  app: number;
  version: number;
  status: OfferStatus;
  sentMs: number | null;
  resolvedMs: number | null;
  startsMs: number;
  opening: number;
  createdMs: number;
  updatedMs: number;
  deleted: boolean;
}

export interface OpeningRow {
  job: number;
  openedMs: number | null;
  closedMs: number | null;
  app: number;
  reason: number;
  createdMs: number;
  updatedMs: number;
}

export interface RejectionRow {
  app: number;
  reason: number;
  rejectedMs: number | null;
  by: number;
  createdMs: number;
  updatedMs: number;
  deleted: boolean;
}

/** An EEOC answer: a value's index, -1 skipped (id and description null), -2 the whole object null. */
export interface EeocRow {
  app: number;
  answers: [number, number, number, number];
  submittedMs: number | null;
  createdMs: number;
  updatedMs: number;
  deleted: boolean;
}

export interface AnswerRow {
  app: number;
  question: number;
  option: number;
  text: string | null;
  createdMs: number;
  updatedMs: number;
  deleted: boolean;
}

/** Every table of the world. */
export interface WorldState {
  sizes: WorldSizes;
  jobs: JobPlan[];
  stages: StageDef[];
  apps: AppRow[];
  stageRows: StageRow[];
  offers: OfferRow[];
  openings: OpeningRow[];
  rejections: RejectionRow[];
  eeoc: EeocRow[];
  answers: AnswerRow[];
  /** The world's clock: the start's, then the time of the last advance. */
  nowMs: number;
  /** Applications at start. */
  startApps: number;
  advances: number;
}

/**
 * A stable hash of (seed, salt, index); seed and salt mixed apart, so that
 * adjacent seeds (accounts 101, 102, …) do not share streams.
 */
export function hash(seed: number, salt: number, index: number): number {
  return mix(mix(seed, salt), index);
}

/** Job posts of job `job`: every post p with p % jobs === job (some jobs have none). */
export function postsOfJob(sizes: WorldSizes, job: number): number[] {
  const out: number[] = [];
  if (sizes.jobs === 0) return out;
  for (let p = job; p < sizes.jobPosts; p += sizes.jobs) out.push(p);
  return out;
}

/** The job of post `post`. */
export function jobOfPost(sizes: WorldSizes, post: number): number {
  return sizes.jobs === 0 ? -1 : post % sizes.jobs;
}

/** The job board of post `post`, or -1: every ninth post (8, 17, …) is on no board. */
export function boardOfPost(seed: number, sizes: WorldSizes, post: number): number {
  if (post % 9 === 8 || sizes.jobBoards === 0) return -1;
  return hash(seed, 42, post) % sizes.jobBoards;
}

/** Whether job `job` is a draft: every thirteenth (12, 25, …); drafts get no applications. */
export function isDraft(job: number): boolean {
  return job % 13 === 12;
}

export type LinkTarget = 'post' | 'job' | 'board' | 'none';

export interface LinkFacts {
  source: number;
  referrer: number;
  target: LinkTarget;
  /** The post, job or board targeted (by `target`); -1 for none. */
  on: number;
}

/**
 * What tracking link `link` names. Each link targets one thing (a post, a
 * job, a board, or nothing); link 0 targets post 0, and every link 1, 11,
 * 21, … is a twin of the one before (same source, referrer and target), so
 * the applications either brought match both: ambiguous.
 */
export function linkFacts(seed: number, sizes: WorldSizes, link: number): LinkFacts {
  if (link % 10 === 1) return linkFacts(seed, sizes, link - 1);
  const h = hash(seed, 41, link);
  // Link 0 (and its twin) always has a source and targets post 0, of job 0, never a draft.
  const source =
    (link !== 0 && h % 10 === 9) || sizes.sources === 0 ? -1 : (h >>> 3) % sizes.sources;
  const referrer = h % 3 === 0 && sizes.referrers > 0 ? (h >>> 7) % sizes.referrers : -1;
  const pick = link === 0 ? 0 : (h >>> 11) % 20;
  const n = link === 0 ? 0 : h >>> 13;
  if (pick < 9 && sizes.jobPosts > 0)
    return { source, referrer, target: 'post', on: n % sizes.jobPosts };
  if (pick < 14 && sizes.jobs > 0) return { source, referrer, target: 'job', on: n % sizes.jobs };
  if (pick < 18 && sizes.jobBoards > 0)
    return { source, referrer, target: 'board', on: n % sizes.jobBoards };
  return { source, referrer, target: 'none', on: -1 };
}
