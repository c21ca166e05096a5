import { buildFunnel, type Funnel, type FunnelInput, orderAfter } from './funnel.js';
import { type ApiRecord, booleanOf, daysBetween, rate, timestampOf } from './records.js';
import type { Row } from './source-of-hire.js';

/** 6. `pipeline_conversion`: per stage of a job, over the job's funnel applications. */
export function pipelineConversion(funnel: Funnel): Row[] {
  const rows: Row[] = [];
  for (const stage of funnel.stages.values()) {
    const entered = [...funnel.applications.values()].filter(
      (a) => a.jobId === stage.jobId && a.stageRows.some((row) => row.stage.id === stage.id),
    );
    const endedHere = (a: (typeof entered)[number]) => a.lastStage?.id === stage.id;
    const movedOn = entered.filter(
      (a) => a.hired || (a.lastStage !== null && orderAfter(a.lastStage, stage)),
    ).length;
    rows.push({
      job_id: stage.jobId,
      stage_id: stage.id,
      stage_name: stage.name,
      stage_order: stage.order,
      entered: entered.length,
      moved_on: movedOn,
      rejected: entered.filter((a) => a.rejected && endedHere(a)).length,
      still_there: entered.filter((a) => a.active && endedHere(a)).length,
      pass_through_rate: rate(movedOn, entered.length),
      stage_active: stage.active,
    });
  }
  return rows;
}

/** A version of a record in hiresync's history: the record from `validFrom` (epoch ms). */
export interface RecordVersion {
  id: string;
  validFrom: number;
  record: ApiRecord;
}

/**
 * When hiresync's history saw the stage row leave: the first version with
 * `current` false that follows a version with `current` true, else null.
 */
function historyExit(versions: readonly RecordVersion[]): number | null {
  let wasCurrent = false;
  for (const version of [...versions].sort((a, b) => a.validFrom - b.validFrom)) {
    const current = booleanOf(version.record.current);
    if (current === true) wasCurrent = true;
    else if (current === false && wasCurrent) return version.validFrom;
  }
  return null;
}

/**
 * 7. `time_in_stage`: one row per stage row of a funnel application.
 * `stageHistory` holds the versions of application_stages records hiresync
 * recorded; `now` is the database's now() (epoch ms) for rows still current.
 */
export function timeInStage(
  funnel: Funnel,
  stageHistory: readonly RecordVersion[],
  now: number,
): Row[] {
  const versionsOf = new Map<string, RecordVersion[]>();
  for (const version of stageHistory) {
    const list = versionsOf.get(version.id) ?? [];
    list.push(version);
    versionsOf.set(version.id, list);
  }
  const rows: Row[] = [];
  for (const application of funnel.applications.values()) {
    for (const { record, id, stage } of application.stageRows) {
      const apiEntered = timestampOf(record.entered_at);
      const createdAt = timestampOf(record.created_at);
      const enteredAt = apiEntered ?? createdAt;
      const apiExited = timestampOf(record.exited_at);
      const fromHistory =
        apiExited === null && id !== null ? historyExit(versionsOf.get(id) ?? []) : null;
      const exitedAt = apiExited ?? fromHistory;
      const current = booleanOf(record.current);
      rows.push({
        application_id: application.id,
        job_id: application.jobId,
        stage_id: stage.id,
        stage_name: stage.name,
        stage_order: stage.order,
        current,
        entered_at: enteredAt,
        entered_at_source: apiEntered !== null ? 'api' : createdAt !== null ? 'created_at' : null,
        exited_at: exitedAt,
        exited_at_source: apiExited !== null ? 'api' : fromHistory !== null ? 'history' : null,
        days:
          exitedAt !== null
            ? daysBetween(enteredAt, exitedAt)
            : current === true
              ? daysBetween(enteredAt, now)
              : null,
      });
    }
  }
  return rows;
}

/**
 * 13. `pipeline_as_of(at)`: pipeline_conversion over the records current at
 * `at`. The caller passes the records the API served at that time (those
 * hiresync's history holds as current then).
 */
export function pipelineAsOf(recordsAtThatTime: FunnelInput): Row[] {
  return pipelineConversion(buildFunnel(recordsAtThatTime));
}
