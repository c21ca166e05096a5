import { Queue } from 'bullmq';
import { runKey } from '../account-name.js';
import { accountOf, QUEUE_NAME, type SyncJob } from '../queue/sync-job.js';
import { scheduleOfKey } from '../queue/upsert-schedules.js';
import type { RedisConnection } from '../redis/connect.js';
import type { NextRunReport, QueueReport, RetriesReport } from './report-types.js';

/** The states `status` counts the run queue's jobs in. */
const STATES = [
  'waiting',
  'prioritized',
  'active',
  'delayed',
  'failed',
  'completed',
] as const satisfies ReadonlyArray<keyof QueueReport>;

/** The run queue as `status` shows it. */
export interface QueueHealth {
  counts: QueueReport;
  /** Per run key (`<account>:<resource>`, `<resource>` for default): its next scheduled run. */
  nextRuns: Map<string, NextRunReport>;
  /** Per run key and run: attempts that failed and were retried (see {@link failedAttemptsOf}). */
  failedAttempts: FailedAttempts;
}

/** How many of the newest jobs of each state are read for failed attempts. */
const RECENT_JOBS = 100;

/**
 * Per run key, then per run: the attempts of `jobs` that failed at the run
 * (the processor names it, `failedRun`) and were retried, and the last
 * one's error (BullMQ keeps it on the job, also once a later attempt
 * completes, which it counts too); and the times a job's run was
 * interrupted (`interruptedRun`: shutdown, the run lock lost), whose
 * last reason stands for the error when no attempt failed.
 */
export function failedAttemptsOf(jobs: readonly (SyncJob | undefined)[]): FailedAttempts {
  const found: FailedAttempts = new Map();
  const last = new Map<RetriesReport, number>();
  const lastStop = new Map<RetriesReport, number>();
  const reportOf = (job: SyncJob, runId: string, reason: string): RetriesReport => {
    const key = runKey(accountOf(job.data), job.data.resource);
    const runs = found.get(key) ?? new Map<string, RetriesReport>();
    found.set(key, runs);
    const report = runs.get(runId) ?? {
      runId,
      failedAttempts: 0,
      interruptions: 0,
      lastError: reason,
    };
    runs.set(runId, report);
    return report;
  };
  for (const job of jobs) {
    if (!job) continue;
    const { failedRun, interruptedRun, interruptions, lastInterruption } = job.data ?? {};
    if (interruptedRun !== undefined && interruptions && lastInterruption !== undefined) {
      const report = reportOf(job, interruptedRun, lastInterruption);
      report.interruptions += interruptions;
      // The latest job's reason, while no attempt failed (a failure's error wins).
      const at = job.processedOn ?? 0;
      if (at >= (lastStop.get(report) ?? 0)) {
        lastStop.set(report, at);
        if (report.failedAttempts === 0) report.lastError = lastInterruption;
      }
    }
    if (failedRun === undefined || !job.failedReason) continue;
    const report = reportOf(job, failedRun, job.failedReason);
    report.failedAttempts += job.finishedOn === undefined ? job.attemptsMade : job.attemptsMade - 1;
    const at = job.processedOn ?? 0;
    if (at >= (last.get(report) ?? 0)) {
      last.set(report, at);
      report.lastError = job.failedReason;
    }
  }
  return found;
}

/** Per run key, then per run id: its failed attempts. */
export type FailedAttempts = Map<string, Map<string, RetriesReport>>;

/**
 * The run queue under `prefix`, read through BullMQ's own API on `redis`
 * (which it leaves open): its jobs by state (getJobCounts) and, from its job
 * schedulers (getJobSchedulers), each (account, resource)'s next run, the
 * earlier of its incremental and full ones. Reads every scheduler, two per
 * (account, resource), as the schedule keeper does every minute.
 */
export async function readQueueHealth(
  redis: RedisConnection,
  prefix: string,
): Promise<QueueHealth> {
  // Read only: `status` writes nothing of the queue's (its metadata is the workers' to keep).
  const queue = new Queue(QUEUE_NAME, { connection: redis, prefix, skipMetasUpdate: true });
  try {
    const [counts, schedulers, ...recent] = await Promise.all([
      queue.getJobCounts(...STATES),
      queue.getJobSchedulers(0, -1),
      ...(['completed', 'delayed', 'active', 'failed'] as const).map(
        (state) => queue.getJobs([state], 0, RECENT_JOBS - 1) as Promise<SyncJob[]>,
      ),
    ]);
    const nextRuns = new Map<string, NextRunReport>();
    for (const s of schedulers) {
      const schedule = scheduleOfKey(s.key);
      if (!schedule || typeof s.next !== 'number') continue;
      const key = runKey(schedule.account, schedule.resource);
      const at = new Date(s.next).toISOString();
      const held = nextRuns.get(key);
      if (!held || at < held.at) nextRuns.set(key, { at, mode: schedule.kind });
    }
    const report = Object.fromEntries(STATES.map((s) => [s, counts[s] ?? 0])) as QueueReport;
    return { counts: report, nextRuns, failedAttempts: failedAttemptsOf(recent.flat()) };
  } finally {
    await queue.close();
  }
}
