import { DEFAULT_ACCOUNT } from '../account-name.js';
import type { AccountReport, RetriesReport, StatusReport } from '../status/report-types.js';
import { formatTable } from './format-table.js';

/**
 * An ISO 8601 UTC timestamp as the status tables show it, as Postgres prints
 * it in a UTC session (`2024-05-01 12:00:00.123456+00`): a date and a time,
 * two words, as scripts reading the table have always split it.
 */
export function tableTimestamp(iso: string | null | undefined): string {
  return iso == null ? '-' : iso.replace('T', ' ').replace(/Z$/, '+00');
}

/**
 * `hiresync status` per resource: one line per account and resource (the
 * account column only when an account besides default is shown) with its
 * last run, last success, pending checkpoint and error or what to do; then
 * the accounts that need re-authorizing, the resources not permitted, the
 * typed views that show null, and the clocks that disagree.
 */
export function formatStatusDetail(report: StatusReport): string {
  const withAccount = report.accounts.some((a) => a.name !== DEFAULT_ACCOUNT);
  const rows = report.accounts.flatMap((a) =>
    a.resources.map((s) => {
      const r = s.lastRun;
      const outcome = s.notPermitted ? 'not permitted' : (r?.outcome ?? '-');
      return [
        ...(withAccount ? [a.name] : []),
        s.resource,
        r?.mode ?? 'never run',
        r ? tableTimestamp(r.startedAt) : '-',
        tableTimestamp(r?.finishedAt),
        r ? String(r.pages) : '-',
        r ? String(r.records) : '-',
        a.state === 'enabled' ? outcome : `${outcome} (account ${a.state})`,
        tableTimestamp(s.lastSuccess?.finishedAt),
        s.checkpoint
          ? `yes: run ${s.checkpoint.runId}, ${s.checkpoint.pagesDone} pages done`
          : 'no',
        a.state === 'needs_reauthorization'
          ? `needs re-authorizing: send a connect link ('hiresync accounts invite ${a.name}')`
          : a.state === 'credentials_refused'
            ? `credentials refused: store the right ones with 'hiresync accounts update ${a.name}'`
            : (a.problem ??
              (s.notPermitted
                ? `ask for scope ${s.notPermitted.scope}: ${s.error ?? ''}`
                : (s.error ?? ''))),
      ];
    }),
  );
  const header = [
    ...(withAccount ? ['account'] : []),
    'resource',
    'last run',
    'started',
    'finished',
    'pages',
    'records',
    'outcome',
    'last success',
    'checkpoint pending',
    'error',
  ];
  const reauthorize = report.accounts.flatMap(credentialNotes);
  const refused = report.accounts.flatMap((a) => {
    if (a.everyResourceRefused) {
      return [`${withAccount ? `account ${a.name}: ` : ''}${a.everyResourceRefused}`];
    }
    return a.resources.flatMap((s) =>
      s.notPermitted
        ? [
            `${withAccount ? `${a.name}/` : ''}${s.resource}: not permitted: ${s.notPermitted.action}`,
          ]
        : [],
    );
  });
  const blocked = report.typedViewBlocks.map(
    (b) => `${b.message} (since ${tableTimestamp(b.since)})`,
  );
  const skewed = report.accounts.flatMap((a) =>
    a.resources.flatMap((s) =>
      s.clockSkew ? [`${withAccount ? `${a.name}/` : ''}${s.resource}: ${s.clockSkew.note}`] : [],
    ),
  );
  const retried = report.accounts.flatMap((a) =>
    a.resources.flatMap((s) => {
      const note = s.retries && s.lastRun && retriesNote(s.lastRun.outcome, s.retries);
      return note ? [`${withAccount ? `${a.name}/` : ''}${s.resource}: ${note}`] : [];
    }),
  );
  return [formatTable(header, rows), reauthorize, refused, blocked, skewed, retried]
    .filter((part) => part.length > 0)
    .map((part) => (typeof part === 'string' ? part : part.join('\n')))
    .join('\n\n');
}

/**
 * A run's attempts that failed and were retried, for people: after its
 * success, or while it runs (a failed run's error is in its table row).
 */
export function retriesNote(outcome: string, retries: RetriesReport): string | undefined {
  const { failedAttempts: failed, interruptions } = retries;
  const attempts = `${failed} failed attempt${failed === 1 ? '' : 's'}`;
  const stops = `${interruptions} interruption${interruptions === 1 ? '' : 's'}`;
  // Failed attempts are retried; a run interrupted (its lock lost, a shutdown) is resumed.
  let counts: string;
  let how: string;
  if (failed > 0 && interruptions > 0) {
    [counts, how] = [`${attempts} (retried) and ${stops} (resumed)`, 'each from its checkpoint'];
  } else if (failed > 0) [counts, how] = [attempts, 'each retried from its checkpoint'];
  else if (interruptions > 0) [counts, how] = [stops, 'each resumed from its checkpoint'];
  else return undefined;
  if (outcome === 'succeeded')
    return `run ${retries.runId} succeeded after ${counts}, ${how}; the last: ${retries.lastError}`;
  if (outcome === 'running')
    return `run ${retries.runId}: ${counts} so far, ${how}; the last: ${retries.lastError}`;
  return undefined;
}

/**
 * Why an account cannot run, and what to do, as status prints it below its
 * table or summary: it needs re-authorizing, or its credentials were refused.
 */
export function credentialNotes(a: AccountReport): string[] {
  return [
    ...(a.reauthorization
      ? [
          `${a.name} needs reauthorization: ${a.reauthorization.reason}; ${a.reauthorization.action}`,
        ]
      : []),
    ...(a.credentialsRefused
      ? [
          `${a.name}: credentials refused: ${a.credentialsRefused.reason}; ${a.credentialsRefused.action}`,
        ]
      : []),
  ];
}
