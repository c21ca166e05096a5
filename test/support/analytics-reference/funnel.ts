import {
  type AnalyticsRecords,
  type ApiRecord,
  bigintOf,
  booleanOf,
  byId,
  compareIds,
  groupBy,
  integerOf,
  textOf,
} from './records.js';

/** A job interview stage, read. */
export interface Stage {
  id: string;
  jobId: string | null;
  name: string | null;
  order: number | null;
  active: boolean | null;
}

/** An application stage row that counts: its stage belongs to the application's job. */
export interface StageRow {
  record: ApiRecord;
  id: string | null;
  stage: Stage;
}

/** A funnel application (not a prospect) with what the views derive from it. */
export interface FunnelApplication {
  record: ApiRecord;
  id: string;
  jobId: string | null;
  candidateId: string | null;
  status: string | null;
  stageRows: StageRow[];
  lastStage: Stage | null;
  interviewed: boolean;
  offered: boolean;
  hired: boolean;
  rejected: boolean;
  active: boolean;
}

/** The records a funnel is built from. */
export type FunnelInput = Pick<
  AnalyticsRecords,
  'applications' | 'application_stages' | 'job_interview_stages' | 'offers'
>;

/** The funnel of an account: its stages, and its funnel applications by id. */
export interface Funnel {
  stages: Map<string, Stage>;
  applications: Map<string, FunnelApplication>;
}

function stageOf(record: ApiRecord, id: string): Stage {
  return {
    id,
    jobId: bigintOf(record.job_id),
    name: textOf(record.name),
    order: integerOf(record.sort_order),
    active: booleanOf(record.active),
  };
}

/**
 * Orders stages by stage order, then id (SQL's ascending order: a null order
 * sorts after every number).
 */
export function compareStages(a: Stage, b: Stage): number {
  if (a.order !== b.order) {
    if (a.order === null) return 1;
    if (b.order === null) return -1;
    return a.order - b.order;
  }
  return compareIds(a.id, b.id);
}

/** `a`'s order is greater than `b`'s (false when either is null, as in SQL). */
export function orderAfter(a: Stage, b: Stage): boolean {
  return a.order !== null && b.order !== null && a.order > b.order;
}

/** Funnel applications and their stage rows, per the spec's shared definitions. */
export function buildFunnel(input: FunnelInput): Funnel {
  const stages = new Map<string, Stage>();
  for (const [id, record] of byId(input.job_interview_stages)) stages.set(id, stageOf(record, id));
  const firstStageOfJob = new Map<string, Stage>();
  for (const stage of stages.values()) {
    if (stage.jobId === null) continue;
    const first = firstStageOfJob.get(stage.jobId);
    if (!first || compareStages(stage, first) < 0) firstStageOfJob.set(stage.jobId, stage);
  }
  const stageRowsOf = groupBy(input.application_stages, 'application_id');
  const offersOf = groupBy(input.offers, 'application_id');
  const applications = new Map<string, FunnelApplication>();
  for (const [id, record] of byId(input.applications)) {
    if (booleanOf(record.prospect) === true) continue;
    const jobId = bigintOf(record.job_id);
    const stageRows: StageRow[] = [];
    for (const row of stageRowsOf.get(id) ?? []) {
      const stageId = bigintOf(row.job_interview_stage_id);
      const stage = stageId === null ? undefined : stages.get(stageId);
      if (stage && jobId !== null && stage.jobId === jobId) {
        stageRows.push({ record: row, id: bigintOf(row.id), stage });
      }
    }
    let lastStage: Stage | null = null;
    for (const row of stageRows) {
      if (!lastStage || compareStages(row.stage, lastStage) > 0) lastStage = row.stage;
    }
    const first = jobId === null ? undefined : firstStageOfJob.get(jobId);
    const status = textOf(record.status);
    applications.set(id, {
      record,
      id,
      jobId,
      candidateId: bigintOf(record.candidate_id),
      status,
      stageRows,
      lastStage,
      interviewed: first !== undefined && stageRows.some((row) => orderAfter(row.stage, first)),
      offered: (offersOf.get(id) ?? []).length > 0,
      hired: status === 'hired',
      rejected: status === 'rejected',
      active: status === 'in_process' || status === 'active',
    });
  }
  return { stages, applications };
}
