import { describe, expect, it } from 'vitest';
import { retriesNote } from '../../../src/commands/status-detail.js';
import type { SyncJob } from '../../../src/queue/sync-job.js';
import { failedAttemptsOf } from '../../../src/status/queue-health.js';

/** A run queue job as BullMQ reads it back, with what failedAttemptsOf looks at. */
function job(fields: Partial<Omit<SyncJob, 'data'>> & { data: Partial<SyncJob['data']> }): SyncJob {
  return {
    attemptsMade: 0,
    ...fields,
    data: { resource: 'job_posts', requested: 'auto', origin: 'schedule', ...fields.data },
  } as SyncJob;
}

describe('failed attempts of a run, from the run queue', () => {
  it('counts the failed attempts of every job at the run, the last error the latest one', () => {
    const found = failedAttemptsOf([
      // Failed once at run 7, then completed (skipped: another job held the run).
      job({
        data: { failedRun: '7' },
        attemptsMade: 2,
        finishedOn: 3000,
        processedOn: 2000,
        failedReason: 'read ECONNRESET',
      }),
      // Failed twice at run 7 and waits for its third attempt.
      job({
        data: { failedRun: '7', account: 'acme' },
        attemptsMade: 2,
        processedOn: 2500,
        failedReason: 'connect ECONNREFUSED',
      }),
      job({
        data: { failedRun: '7', account: 'acme' },
        attemptsMade: 1,
        processedOn: 1000,
        failedReason: 'terminating connection',
      }),
      // No failed attempt: a run put back after a shutdown sets no reason.
      job({ data: {}, attemptsMade: 1, finishedOn: 4000 }),
    ]);
    expect(found.get('job_posts')?.get('7')).toEqual({
      runId: '7',
      failedAttempts: 1,
      interruptions: 0,
      lastError: 'read ECONNRESET',
    });
    expect(found.get('acme:job_posts')?.get('7')).toEqual({
      runId: '7',
      failedAttempts: 3,
      interruptions: 0,
      lastError: 'connect ECONNREFUSED',
    });
    expect(found.size).toBe(2);
  });

  it('are named after a success and while running, and left to the error column after a failure', () => {
    const retries = {
      runId: '7',
      failedAttempts: 1,
      interruptions: 0,
      lastError: 'read ECONNRESET',
    };
    expect(retriesNote('succeeded', retries)).toBe(
      'run 7 succeeded after 1 failed attempt, each retried from its checkpoint; the last: read ECONNRESET',
    );
    expect(retriesNote('running', { ...retries, failedAttempts: 2 })).toBe(
      'run 7: 2 failed attempts so far, each retried from its checkpoint; the last: read ECONNRESET',
    );
    expect(retriesNote('failed', retries)).toBeUndefined();
  });

  it('counts the interruptions of a run (the run lock lost, a shutdown), whose reason stands when no attempt failed', () => {
    const lost = 'lock h:run-lock:job_posts was lost; run 9 of job_posts stopped after page 3';
    const found = failedAttemptsOf([
      job({
        data: { interruptedRun: '9', interruptions: 2, lastInterruption: lost },
        processedOn: 2000,
      }),
      // An older job's interruption of the same run: counted, its reason not the last.
      job({
        data: { interruptedRun: '9', interruptions: 1, lastInterruption: 'shutting down' },
        processedOn: 1000,
      }),
      job({
        data: {
          account: 'acme',
          interruptedRun: '4',
          interruptions: 1,
          lastInterruption: 'shutting down',
          failedRun: '4',
        },
        attemptsMade: 1,
        processedOn: 1000,
        failedReason: 'connect ECONNREFUSED',
      }),
    ]);
    const alone = found.get('job_posts')?.get('9');
    expect(alone).toEqual({ runId: '9', failedAttempts: 0, interruptions: 3, lastError: lost });
    expect(retriesNote('succeeded', alone as NonNullable<typeof alone>)).toBe(
      `run 9 succeeded after 3 interruptions, each resumed from its checkpoint; the last: ${lost}`,
    );
    const both = found.get('acme:job_posts')?.get('4');
    expect(both).toEqual({
      runId: '4',
      failedAttempts: 1,
      interruptions: 1,
      lastError: 'connect ECONNREFUSED',
    });
    expect(retriesNote('running', both as NonNullable<typeof both>)).toBe(
      'run 4: 1 failed attempt (retried) and 1 interruption (resumed) so far, each from its checkpoint; the last: connect ECONNREFUSED',
    );
  });
});
