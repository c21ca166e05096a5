import type { RunOnceOutcome } from '../queue/run-once.js';
import { redactSecrets } from '../secret.js';
import { formatTable } from './format-table.js';

/**
 * The summary `sync` and `demo` print: one row per resource (mode, pages,
 * records, rejected, deleted, seconds, outcome), errors redacted.
 */
export function formatRunSummary(outcomes: RunOnceOutcome[]): string {
  const rows = outcomes.map((o) => {
    const r = o.ok ? o.summary : undefined;
    return [
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
    ['resource', 'mode', 'pages', 'records', 'rejected', 'deleted', 'seconds', 'outcome'],
    rows,
  );
}
