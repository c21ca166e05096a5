import { Queue } from 'bullmq';
import { runKey } from '../account-name.js';
import { QUEUE_NAME } from '../queue/sync-job.js';
import { scheduleOfKey } from '../queue/upsert-schedules.js';
import type { RedisConnection } from '../redis/connect.js';
import type { NextRunReport, QueueReport } from './report-types.js';

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
}

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
    const [counts, schedulers] = await Promise.all([
      queue.getJobCounts(...STATES),
      queue.getJobSchedulers(0, -1),
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
    return { counts: report, nextRuns };
  } finally {
    await queue.close();
  }
}
