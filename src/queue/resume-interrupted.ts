import type { Queue } from 'bullmq';
import { DEFAULT_ACCOUNT, runKey } from '../account-name.js';
import type { Config } from '../config/types.js';
import type { Logger } from '../logger.js';
import type { CheckpointStore } from '../sync/ports.js';
import type { RunLock } from './run-lock.js';
import { enqueueRun, type SyncJobData } from './sync-job.js';
import type { ScheduleTarget } from './upsert-schedules.js';

/** Options of {@link queueInterruptedRuns}. */
export interface QueueInterruptedRunsOptions {
  queue: Queue<SyncJobData>;
  config: Pick<Config, 'runAttempts' | 'runBackoffMs'>;
  /** The (account, resource) pairs whose checkpoints are looked at. */
  targets: readonly ScheduleTarget[];
  checkpointsOf: (account: string) => Pick<CheckpointStore, 'load'>;
  runLock: Pick<RunLock, 'isHeld'>;
  logger: Logger;
}

/**
 * Queues a resume job for each pending checkpoint, and says which runs were
 * really interrupted: those whose run lock is free (the process that ran it
 * was killed and the lock expired, or it stopped and released it). A
 * checkpoint whose lock is held belongs to a live run elsewhere, or to a
 * killed one whose lock has yet to expire: its resume job waits for the lock
 * and, as every resume job does, runs nothing if the checkpoint is gone by
 * then (the live run finished), so no run is done twice. Call it before this
 * worker takes jobs and before its schedules are upserted, so that it never
 * sees a run it has just started itself. Resume jobs are deduplicated by
 * (account, resource). Returns the pairs whose run was interrupted.
 */
export async function queueInterruptedRuns(
  options: QueueInterruptedRunsOptions,
): Promise<ScheduleTarget[]> {
  const { queue, config, logger } = options;
  const queued: ScheduleTarget[] = [];
  for (const target of options.targets) {
    const { account, resource } = target;
    const pending = await options.checkpointsOf(account).load(resource);
    if (!pending) continue;
    const held = await options.runLock.isHeld(runKey(account, resource));
    const data = { resource, requested: 'auto', origin: 'resume' } as const;
    await enqueueRun(queue, account === DEFAULT_ACCOUNT ? data : { ...data, account }, config);
    if (held) {
      logger.info(
        { account, resource, runId: pending.runId },
        'pending checkpoint of a run whose lock is held (a live run elsewhere, or a killed one whose lock has yet to expire); resumed only if still pending once the lock is free',
      );
      continue;
    }
    logger.info(
      { account, resource, runId: pending.runId },
      'queued the interrupted run to resume',
    );
    queued.push(target);
  }
  return queued;
}
