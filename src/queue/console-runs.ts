import type { Queue } from 'bullmq';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import type { Config } from '../config/types.js';
import { deduplicationIdOf, enqueueRun, type SyncJobData } from './sync-job.js';

/** What {@link enqueueConsoleRun} did: the job of the run, and whether one was queued already. */
export interface ConsoleRun {
  jobId: string;
  /** A run asked from the console for the pair was waiting or running already: nothing more was queued. */
  already: boolean;
}

/**
 * Queues an incremental run (`auto`: a full one if the resource has never
 * had one) of `resource` of `account` on the shared queue, origin `console`,
 * as a webhook event queues one: the run lock keeps it from running beside a
 * scheduled run of the same pair (it waits for it), and one asked from the
 * console at a time per pair is queued (see enqueueRun).
 */
export async function enqueueConsoleRun(
  queue: Queue<SyncJobData>,
  account: string,
  resource: string,
  config: Pick<Config, 'runAttempts' | 'runBackoffMs'>,
): Promise<ConsoleRun> {
  const base = { resource, requested: 'auto', origin: 'console' } as const;
  const data: SyncJobData = account === DEFAULT_ACCOUNT ? base : { ...base, account };
  const dedup = deduplicationIdOf(data);
  const waiting = dedup === undefined ? null : await queue.getDeduplicationJobId(dedup);
  if (waiting) return { jobId: waiting, already: true };
  const job = await enqueueRun(queue, data, config);
  return { jobId: String(job.id), already: false };
}
