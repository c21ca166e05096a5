/**
 * The v3 world of one dataset: the analytics resources (applications and
 * their stage histories, offers, openings, rejections, EEOC and demographic
 * answers, and the lists they name) as one consistent whole with the
 * dataset's jobs, job posts and tracking links. Built on first use from the
 * dataset's seed and sizes, deterministic by seed; changed only by
 * {@link World.advance} (and the dataset's remove/touch on its records).
 */

import { ANALYTICS_RESOURCES } from '../../resources/index.js';
import type { SimulationContext } from '../simulation-context.js';
import { type AdvanceReport, advanceWorld } from './world-advance.js';
import { type Placement, placementOf } from './world-applications.js';
import { addApplication, buildWorld } from './world-build.js';
import {
  BUILT_IN_REASONS,
  CLOSE_REASONS,
  DEMOGRAPHIC_OPTIONS,
  DEMOGRAPHIC_QUESTIONS,
  DEPARTMENTS,
  OFFICES,
  REJECTION_REASONS,
} from './world-lists.js';
import type { WorldSizes, WorldState } from './world-model.js';
import {
  iso,
  isServiceUser,
  LIST_RENDERERS,
  listTimes,
  type RenderContext,
  renderAnswer,
  renderApplication,
  renderEeoc,
  renderOffer,
  renderOpening,
  renderRejection,
  renderStage,
  renderStageRow,
} from './world-records.js';

export type { AdvanceReport } from './world-advance.js';

/**
 * The resources the world serves at `/v3/NAME`, besides the catalog's jobs,
 * job posts and tracking links it shapes: the set `@analytics`, in its order.
 */
export const WORLD_RESOURCES: readonly string[] = Object.freeze([...ANALYTICS_RESOURCES.keys()]);

/**
 * Id of each world resource's record at index 0 before an account's offset:
 * applications, offers and departments keep the extra resources' ranges
 * (candidates' `application_ids` name the same applications either way).
 */
export const WORLD_ID_BASE: Readonly<Record<string, number>> = {
  applications: 21_300_000_000,
  offers: 22_300_000_000,
  departments: 23_300_000_000,
  application_stages: 33_300_000_000,
  job_interview_stages: 34_300_000_000,
  openings: 35_300_000_000,
  close_reasons: 36_300_000_000,
  rejection_details: 37_300_000_000,
  rejection_reasons: 38_300_000_000,
  eeoc: 39_300_000_000,
  demographic_answers: 40_300_000_000,
  demographic_questions: 41_300_000_000,
  demographic_answer_options: 42_300_000_000,
  users: 43_300_000_000,
  offices: 44_300_000_000,
};

/** The query parameter that lists a resource's rows hidden by default, as the live service names it. */
export const SHOW_HIDDEN_PARAMETER: Readonly<Record<string, string>> = {
  rejection_reasons: 'include_defaults',
  users: 'show_service_accounts',
};

/** Applications of a world whose dataset's counts name none. */
export const DEFAULT_WORLD_APPLICATIONS = 300;

/**
 * Records of the catalog's lists when a world's dataset's counts leave them
 * unsaid, from its applications: about 15 applications a job, two posts a
 * job, one and a half tracking links a job, a candidate for every one or two
 * applications.
 */
export function worldCounts(applications: number): Record<string, number> {
  const jobs = Math.max(3, Math.round(applications / 15));
  return {
    jobs,
    job_posts: 2 * jobs,
    tracking_links: Math.max(4, Math.round(1.5 * jobs)),
    candidates: Math.ceil((2 * applications) / 3) + 1,
  };
}

const FIXED_SIZES: Readonly<Record<string, number>> = {
  close_reasons: CLOSE_REASONS.length,
  rejection_reasons: REJECTION_REASONS.length,
  demographic_questions: DEMOGRAPHIC_QUESTIONS.length,
  demographic_answer_options: DEMOGRAPHIC_OPTIONS.length,
  departments: DEPARTMENTS.length,
  offices: OFFICES.length,
};

type Timed = { createdMs: number; updatedMs: number; deleted?: boolean };

export class World {
  readonly #sim: SimulationContext;
  readonly #applications: number;
  #state: WorldState | undefined;
  #place: Placement | undefined;

  constructor(sim: SimulationContext, applications: number) {
    this.#sim = sim;
    this.#applications = applications;
  }

  /** The world's rows (built on first use), for tests that check its rules. */
  get state(): WorldState {
    if (!this.#state) {
      const sim = this.#sim;
      const held = (name: string, usual: number) => (sim.size(name) > 0 ? sim.size(name) : usual);
      const sizes: WorldSizes = {
        jobs: sim.size('jobs'),
        jobPosts: sim.size('job_posts'),
        trackingLinks: sim.size('tracking_links'),
        sources: held('sources', 12),
        referrers: held('referrers', 40),
        jobBoards: held('job_boards', 13),
        users: 10 + Math.ceil(this.#applications / 200),
      };
      this.#state = buildWorld(sim.seed, sizes, this.#applications, (job) =>
        Date.parse(sim.times('jobs', job).created_at),
      );
      this.#place = placementOf(this.#state, sim.seed);
    }
    return this.#state;
  }

  get #placement(): Placement {
    const state = this.state;
    this.#place ??= placementOf(state, this.#sim.seed);
    return this.#place;
  }

  /** Rows of `resource` (deleted ones included). */
  size(resource: string): number {
    const fixed = FIXED_SIZES[resource];
    if (fixed !== undefined) return fixed;
    if (resource === 'users') return this.state.sizes.users;
    if (resource === 'job_interview_stages') return this.state.stages.length;
    return this.#rows(resource)?.length ?? 0;
  }

  #tablesMemo: Readonly<Record<string, readonly Timed[]>> | undefined;

  /** The world's tables of rows by resource (the fixed lists and job_interview_stages have none). */
  #rows(resource: string): readonly Timed[] | undefined {
    if (!this.#tablesMemo) {
      const s = this.state;
      this.#tablesMemo = {
        applications: s.apps,
        application_stages: s.stageRows,
        offers: s.offers,
        openings: s.openings,
        rejection_details: s.rejections,
        eeoc: s.eeoc,
        demographic_answers: s.answers,
      };
    }
    return this.#tablesMemo[resource];
  }

  /** Whether row `index` of `resource` is served (the world deletes some rows as it advances). */
  isPresent(resource: string, index: number): boolean {
    const row = this.#rows(resource)?.[index];
    return row === undefined ? index < this.size(resource) : row.deleted !== true;
  }

  /** Whether row `index` is one the live service lists only when asked (built-in reasons, service users). */
  hidden(resource: string, index: number): boolean {
    if (resource === 'rejection_reasons') return index < BUILT_IN_REASONS;
    if (resource === 'users') return isServiceUser(index);
    return false;
  }

  /** Creation and update times of row `index` (ISO 8601). */
  times(
    resource: string,
    index: number,
  ): { version: number; created_at: string; updated_at: string } {
    const stage = resource === 'job_interview_stages' ? this.state.stages[index] : undefined;
    const t =
      this.#rows(resource)?.[index] ??
      (stage ? { createdMs: stage.createdMs, updatedMs: stage.createdMs } : listTimes(index));
    return { version: 0, created_at: iso(t.createdMs) ?? '', updated_at: iso(t.updatedMs) ?? '' };
  }

  /** The record of row `index` of `resource`, as the live service serves it. */
  record(resource: string, index: number): Record<string, unknown> {
    const ctx: RenderContext = { world: this.state, idOf: (r, i) => this.#sim.idOf(r, i) };
    switch (resource) {
      case 'applications':
        return renderApplication(ctx, index);
      case 'application_stages':
        return renderStageRow(ctx, index);
      case 'job_interview_stages':
        return renderStage(ctx, index);
      case 'offers':
        return renderOffer(ctx, index);
      case 'openings':
        return renderOpening(ctx, index);
      case 'rejection_details':
        return renderRejection(ctx, index);
      case 'eeoc':
        return renderEeoc(ctx, index);
      case 'demographic_answers':
        return renderAnswer(ctx, index);
    }
    const render = LIST_RENDERERS[resource];
    if (!render) throw new Error(`the world serves no resource ${resource}`);
    const record = render(ctx, index);
    if (resource.startsWith('demographic_')) return record;
    const t = this.times(resource, index);
    return { ...record, created_at: t.created_at, updated_at: t.updated_at };
  }

  /** Advances the world to `atMs` (see advanceWorld). */
  advance(atMs: number): AdvanceReport {
    return advanceWorld(this.state, this.#placement, this.#sim.seed, atMs);
  }

  /** Adds `n` applications created at `atMs`, each just entered its job's first stage; returns their indexes. */
  addApplications(n: number, atMs: number): number[] {
    const state = this.state;
    return Array.from({ length: n }, (_, k) => {
      const index = state.apps.length;
      addApplication(state, this.#placement, this.#sim.seed, index, atMs + k, false);
      return index;
    });
  }

  /** Marks row `index` of `resource` changed at `atMs` (its updated_at), when the world holds its rows. */
  touch(resource: string, index: number, atMs: number): void {
    const row = this.#rows(resource)?.[index];
    if (row) (row as { updatedMs: number }).updatedMs = atMs;
  }
}
