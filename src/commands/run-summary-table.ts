import { DEFAULT_ACCOUNT } from '../account-name.js';
import type { RunOnceOutcome } from '../queue/run-once.js';
import { redactSecrets } from '../secret.js';
import { formatTable } from './format-table.js';

/**
 * The summary `sync` and `demo` print: one row per run (resource, mode,
 * pages, records, rejected, deleted, seconds, outcome), errors redacted.
 * When any run is of an account other than `default`, an `account` column
 * comes first; a single-account deployment's summary is as it always was.
 */
export function formatRunSummary(outcomes: RunOnceOutcome[]): string {
  const withAccount = outcomes.some((o) => o.account !== DEFAULT_ACCOUNT);
  const rows = outcomes.map((o) => {
    const r = o.ok ? o.summary : undefined;
    return [
      ...(withAccount ? [o.account] : []),
      o.resource,
      r?.mode ?? '-',
      r ? String(r.pages) : '-',
      r ? String(r.records) : '-',
      r ? String(r.rejected) : '-',
      r ? String(r.deleted) : '-',
      r ? r.seconds.toFixed(1) : '-',
      o.ok
        ? o.summary.resumed
          ? 'succeeded (resumed)'
          : 'succeeded'
        : `failed: ${redactSecrets(o.error)}`,
    ];
  });
  return formatTable(
    [
      ...(withAccount ? ['account'] : []),
      'resource',
      'mode',
      'pages',
      'records',
      'rejected',
      'deleted',
      'seconds',
      'outcome',
    ],
    rows,
  );
}
