/**
 * The records of the v3 world as the live service serves them (the fields of
 * ../shared/v3-analytics-resources.md), rendered from the world's rows.
 * Times are ISO 8601 with milliseconds; `_on` fields are dates.
 */

import {
  CLOSE_REASONS,
  DEMOGRAPHIC_OPTIONS,
  DEMOGRAPHIC_QUESTIONS,
  DEPARTMENTS,
  EEOC_FIELDS,
  EEOC_VALUES,
  FIRST_NAMES,
  LAST_NAMES,
  OFFICES,
  REJECTION_REASONS,
} from './world-lists.js';
import { DAY_MS, EPOCH_MS, type WorldState } from './world-model.js';

type Row = Record<string, unknown>;

/** What rendering needs besides the world: ids of any resource's records. */
export interface RenderContext {
  readonly world: WorldState;
  idOf(resource: string, index: number): number;
}

/** `YYYY-MM-DDT` of each day met, by day since the epoch: Date's own formatting is the slow part of a page. */
const dayPrefixes = new Map<number, string>();

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** A time in whole ms as ISO 8601 with milliseconds (`2024-12-15T03:55:00.000Z`), as v3 sends times. */
export function iso(ms: number | null): string | null {
  if (ms === null) return null;
  const day = Math.floor(ms / DAY_MS);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    dayPrefixes.set(day, prefix);
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${prefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest - seconds * 1000)}Z`;
}

function date(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString().slice(0, 10);
}

/** The id of `resource`'s record `index`, or null for -1. */
function ref(ctx: RenderContext, resource: string, index: number): number | null {
  return index < 0 ? null : ctx.idOf(resource, index);
}

/** Times of a record of a fixed list: before the first job, a minute apart. */
export function listTimes(index: number): { createdMs: number; updatedMs: number } {
  const createdMs = EPOCH_MS - 30 * DAY_MS + index * 60_000;
  return { createdMs, updatedMs: createdMs + 3_600_000 };
}

function stamped(row: Row, createdMs: number, updatedMs: number): Row {
  return { ...row, created_at: iso(createdMs), updated_at: iso(updatedMs) };
}

export function renderApplication(ctx: RenderContext, index: number): Row {
  const { world } = ctx;
  const app = world.apps[index];
  if (!app) return {};
  const lastRow = app.stageRows.at(-1) ?? -1;
  const last = world.stageRows[lastRow];
  const stage = world.stages[last?.stage ?? -1];
  return {
    id: ctx.idOf('applications', index),
    candidate_id: ctx.idOf('candidates', app.candidate),
    job_id: ref(ctx, 'jobs', app.job),
    job_post_id: ref(ctx, 'job_posts', app.post),
    source_id: ref(ctx, 'sources', app.source),
    referrer_id: ref(ctx, 'referrers', app.referrer),
    recruiter_id: ref(ctx, 'users', app.recruiter),
    coordinator_id: ref(ctx, 'users', app.coordinator),
    agency_note_id: null,
    stage_id: last?.current ? ctx.idOf('application_stages', lastRow) : null,
    job_interview_stage_id: last ? ctx.idOf('job_interview_stages', last.stage) : null,
    stage_name: stage?.name ?? null,
    status: app.status,
    prospect: app.prospect,
    needs_decision: false,
    rejected_at: iso(app.rejectedMs),
    created_at: iso(app.createdMs),
    updated_at: iso(app.updatedMs),
    last_activity_at: iso(app.updatedMs),
    prospective_job_ids:
      app.prospect && app.job < 0 ? [ctx.idOf('jobs', index % Math.max(1, world.sizes.jobs))] : [],
    answers:
      index % 4 === 0 ? [{ question: 'Why do you want to join?', answer: `Answer ${index}` }] : [],
    location_address: null,
    custom_fields: {},
  };
}

export function renderStageRow(ctx: RenderContext, index: number): Row {
  const row = ctx.world.stageRows[index];
  if (!row) return {};
  const until = row.exitedMs ?? ctx.world.nowMs;
  const days =
    row.enteredMs === null ? 0 : Math.max(0, Math.floor((until - row.enteredMs) / DAY_MS));
  return stamped(
    {
      id: ctx.idOf('application_stages', index),
      application_id: ctx.idOf('applications', row.app),
      job_interview_stage_id: ctx.idOf('job_interview_stages', row.stage),
      entered_at: iso(row.enteredMs),
      exited_at: iso(row.exitedMs),
      days_in_stage: days,
      current: row.current,
    },
    row.createdMs,
    row.updatedMs,
  );
}

export function renderStage(ctx: RenderContext, index: number): Row {
  const stage = ctx.world.stages[index];
  if (!stage) return {};
  return stamped(
    {
      id: ctx.idOf('job_interview_stages', index),
      job_id: ctx.idOf('jobs', stage.job),
      name: stage.name,
      sort_order: stage.sortOrder,
      active: stage.active,
    },
    stage.createdMs,
    stage.createdMs,
  );
}

export function renderOffer(ctx: RenderContext, index: number): Row {
  const offer = ctx.world.offers[index];
  const app = ctx.world.apps[offer?.app ?? -1];
  if (!offer || !app) return {};
  return stamped(
    {
      id: ctx.idOf('offers', index),
      version: offer.version,
      application_id: ctx.idOf('applications', offer.app),
      job_id: ref(ctx, 'jobs', app.job),
      candidate_id: ctx.idOf('candidates', app.candidate),
      opening_id: ref(ctx, 'openings', offer.opening),
      status: offer.status,
      sent_on: date(offer.sentMs),
      starts_on: date(offer.startsMs),
      resolved_at: iso(offer.resolvedMs),
      custom_fields: {
        employment_type: { name: 'Employment Type', type: 'single_select', value: 'Full-time' },
        salary: {
          name: 'Salary',
          type: 'currency',
          value: { amount: 60_000 + (index % 90) * 1_000, unit: 'USD' },
        },
      },
    },
    offer.createdMs,
    offer.updatedMs,
  );
}

export function renderOpening(ctx: RenderContext, index: number): Row {
  const opening = ctx.world.openings[index];
  if (!opening) return {};
  const job = ctx.world.jobs[opening.job];
  return stamped(
    {
      id: ctx.idOf('openings', index),
      job_id: ctx.idOf('jobs', opening.job),
      opening_id: `OPN-${opening.job}-${job?.openings.indexOf(index) ?? 0}`,
      opened_at: iso(opening.openedMs),
      closed_at: iso(opening.closedMs),
      open: opening.closedMs === null,
      application_id: ref(ctx, 'applications', opening.app),
      close_reason_id: ref(ctx, 'close_reasons', opening.reason),
      target_start_on: null,
      sort_order: job?.openings.indexOf(index) ?? 0,
      custom_fields: {},
    },
    opening.createdMs,
    opening.updatedMs,
  );
}

export function renderRejection(ctx: RenderContext, index: number): Row {
  const rejection = ctx.world.rejections[index];
  if (!rejection) return {};
  return stamped(
    {
      id: ctx.idOf('rejection_details', index),
      application_id: ctx.idOf('applications', rejection.app),
      rejected_by_id: ref(ctx, 'users', rejection.by),
      rejection_reason_id: ref(ctx, 'rejection_reasons', rejection.reason),
      rejection_note_id: null,
      rejected_at: iso(rejection.rejectedMs),
      question_custom_fields: {},
    },
    rejection.createdMs,
    rejection.updatedMs,
  );
}

export function renderEeoc(ctx: RenderContext, index: number): Row {
  const row = ctx.world.eeoc[index];
  const app = ctx.world.apps[row?.app ?? -1];
  if (!row || !app) return {};
  const answers = Object.fromEntries(
    EEOC_FIELDS.map((field, f) => {
      const v = row.answers[f] ?? -2;
      const value =
        v === -2
          ? null
          : v === -1
            ? { id: null, description: null }
            : { id: v + 1, description: EEOC_VALUES[field][v] ?? null };
      return [field, value];
    }),
  );
  return stamped(
    {
      id: ctx.idOf('eeoc', index),
      application_id: ctx.idOf('applications', row.app),
      candidate_id: ctx.idOf('candidates', app.candidate),
      ...answers,
      submitted_at: iso(row.submittedMs),
    },
    row.createdMs,
    row.updatedMs,
  );
}

export function renderAnswer(ctx: RenderContext, index: number): Row {
  const row = ctx.world.answers[index];
  if (!row) return {};
  return stamped(
    {
      id: ctx.idOf('demographic_answers', index),
      application_id: ctx.idOf('applications', row.app),
      demographic_question_id: ctx.idOf('demographic_questions', row.question),
      demographic_answer_option_id: ref(ctx, 'demographic_answer_options', row.option),
      free_form_text: row.text,
    },
    row.createdMs,
    row.updatedMs,
  );
}

/** Records of the fixed lists, by resource: built from the index alone. */
export const LIST_RENDERERS: Readonly<Record<string, (ctx: RenderContext, index: number) => Row>> =
  {
    close_reasons: (ctx, i) => ({
      id: ctx.idOf('close_reasons', i),
      name: CLOSE_REASONS[i] ?? null,
    }),
    rejection_reasons: (ctx, i) => {
      const reason = REJECTION_REASONS[i];
      return {
        id: ctx.idOf('rejection_reasons', i),
        name: reason?.name ?? null,
        type: reason?.type ?? null,
      };
    },
    // Neither list has created_at or updated_at on the live service (they arrive null).
    demographic_questions: (ctx, i) => {
      const q = DEMOGRAPHIC_QUESTIONS[i];
      return {
        id: ctx.idOf('demographic_questions', i),
        demographic_question_set_id: 1,
        name: q?.name ?? null,
        sort_order: i,
        required: q?.name === null ? null : false,
        active: true,
        answer_type: q?.answerType ?? null,
        created_at: null,
        updated_at: null,
      };
    },
    demographic_answer_options: (ctx, i) => {
      const o = DEMOGRAPHIC_OPTIONS[i];
      return {
        id: ctx.idOf('demographic_answer_options', i),
        demographic_question_id: ctx.idOf('demographic_questions', o?.question ?? 0),
        name: o?.name ?? null,
        sort_order: i,
        active: true,
        free_form: o?.freeForm ?? false,
        decline_to_answer: o?.decline ?? null,
      };
    },
    users: (ctx, i) => {
      const service = isServiceUser(i);
      const first = service ? 'Integration' : (FIRST_NAMES[i % FIRST_NAMES.length] as string);
      const last = service ? `Service ${i}` : (LAST_NAMES[(i >>> 1) % LAST_NAMES.length] as string);
      return {
        id: ctx.idOf('users', i),
        first_name: first,
        last_name: last,
        name: `${first} ${last}`,
        primary_email: service ? '' : `${first}.${last}${i}@example.com`.toLowerCase(),
        employee_id: service ? null : `EMP-${i}`,
        deactivated: i % 9 === 8,
        site_admin: i === 0,
      };
    },
    departments: (ctx, i) => {
      const d = DEPARTMENTS[i];
      const children = DEPARTMENTS.flatMap((c, k) =>
        c.parent === i ? [ctx.idOf('departments', k)] : [],
      );
      return {
        id: ctx.idOf('departments', i),
        name: d?.name ?? null,
        parent_id: d?.parent == null ? null : ctx.idOf('departments', d.parent),
        child_ids: children,
        external_id: `DEP-${i}`,
      };
    },
    offices: (ctx, i) => ({
      id: ctx.idOf('offices', i),
      name: OFFICES[i] ?? null,
      location: { name: OFFICES[i] ?? null },
      parent_id: null,
      external_id: i % 2 === 0 ? `OFF-${i}` : null,
    }),
  };

/** Integration and service users: every fifth (4, 9, …), listed only with `show_service_accounts=true`. */
export function isServiceUser(index: number): boolean {
  return index % 5 === 4;
}
