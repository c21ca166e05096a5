import type { TokenRequestOutcome } from '../api/token-grants.js';
import type { RunMode } from '../sync/ports.js';
import { ACCOUNT_STATES, PAIR_STATES } from './account-series-scope.js';

/** Every member of a union of strings, as a list: a record over the union makes the compiler check it. */
function everyValue<T extends string>(values: Record<T, true>): readonly T[] {
  return Object.keys(values) as T[];
}

/** Every outcome hiresync_token_requests_total counts. */
export const TOKEN_REQUEST_OUTCOMES = everyValue<TokenRequestOutcome>({
  ok: true,
  refused: true,
  error: true,
});

/** The states hiresync_queue_jobs counts (waiting includes BullMQ's prioritized jobs). */
export const QUEUE_JOB_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/**
 * The values of the metric labels that take a fixed set of values, by metric
 * (a summary's `_count` and `_sum` under its own name): what docs/metrics.md
 * lists, and what test/unit/deploy-files.test.ts holds the alert rules' and
 * the dashboard's selectors to, so that no rule waits for a value hiresync
 * never sends.
 */
export const METRIC_LABEL_VALUES: Readonly<Record<string, Record<string, readonly string[]>>> = {
  hiresync_queue_jobs: { state: QUEUE_JOB_STATES },
  hiresync_accounts: { state: ACCOUNT_STATES },
  hiresync_account_resources: { state: PAIR_STATES },
  hiresync_token_requests_total: { outcome: TOKEN_REQUEST_OUTCOMES },
  hiresync_run_duration_seconds: {
    mode: everyValue<RunMode>({ incremental: true, full: true }),
    outcome: ['succeeded', 'failed'],
  },
};
