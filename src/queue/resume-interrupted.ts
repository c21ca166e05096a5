import type { Queue } from 'bullmq';
import { DEFAULT_ACCOUNT, runKey } from '../accounts/account.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { CheckpointStore } from '../sync/ports.js';
import type { RunLock } from './run-lock.js';
import { enqueueRun, type ScheduleTarget, type SyncJobData } from './sync-queue.js';

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
 * Queues a resume job for each run that was really interrupted: its
 * checkpoint is pending and its run lock is free (the process that ran it was
 * killed, and the lock expired, or it stopped and released it). A checkpoint
 * whose lock is held belongs to a live run, of this worker or of another
 * process, and is left to it. Call it before this worker takes jobs and before
 * its schedules are upserted, so that it never sees a run it has just started
 * itself. Resume jobs are deduplicated, and one that finds the checkpoint gone
 * when its turn comes runs nothing. Returns the pairs queued.
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
    if (await options.runLock.isHeld(runKey(account, resource))) {
      logger.info(
        { account, resource, runId: pending.runId },
        'checkpoint pending of a run that is running elsewhere; not resumed here',
      );
      continue;
    }
    const data = { resource, requested: 'auto', origin: 'resume' } as const;
    await enqueueRun(queue, account === DEFAULT_ACCOUNT ? data : { ...data, account }, config);
    logger.info(
      { account, resource, runId: pending.runId },
      'queued the interrupted run to resume',
    );
    queued.push(target);
  }
  return queued;
}
