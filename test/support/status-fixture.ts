import { reportOfAccount } from '../../src/status/account-report.js';
import { checkReport } from '../../src/status/check.js';
import { overviewOf } from '../../src/status/overview.js';
import type { ResourceStatus } from '../../src/status/read-status.js';
import type { AccountReport, ReportAccount, StatusReport } from '../../src/status/report-types.js';
import type { SyncRun } from '../../src/warehouse/tables.js';

/** A sync_runs row as Postgres returns it (timestamps as text in a UTC session). */
export function run(fields: Partial<SyncRun> & Pick<SyncRun, 'id' | 'outcome'>): SyncRun {
  return {
    resource: 'jobs',
    mode: 'full',
    filter: null,
    started_at: '2026-05-01 12:00:00.123456+00',
    finished_at: fields.outcome === 'running' ? null : '2026-05-01 12:01:00.5+00',
    pages: 3,
    records: '120',
    rejected: '0',
    deleted: '0',
    max_id: null,
    error: null,
    warnings: null,
    api_started_at: null,
    api_clock_skew_ms: null,
    ...fields,
  };
}

/** A resource's status as readStatus gives it. */
export function resource(
  account: string,
  name: string,
  lastRun?: SyncRun,
  extra: Partial<ResourceStatus> = {},
): ResourceStatus {
  return {
    account,
    resource: name,
    lastRun: lastRun && { ...lastRun, resource: name },
    lastSuccess: lastRun?.outcome === 'succeeded' ? { ...lastRun, resource: name } : undefined,
    checkpoint: undefined,
    ...extra,
  };
}

/** One account's report. */
export function accountOf(
  account: ReportAccount,
  statuses: ResourceStatus[],
  held: string[] = [],
  synced: readonly string[] = statuses.map((s) => s.resource),
): AccountReport {
  return reportOfAccount(account, statuses, new Set(held), new Set(synced), {
    updatedLookbackMs: 300_000,
    resources: synced,
  });
}

/** A whole report of these accounts' parts. */
export function reportOf(accounts: AccountReport[]): StatusReport {
  const check = checkReport(accounts);
  return {
    generatedAt: '2026-05-01T12:05:00.000Z',
    overview: overviewOf(accounts, check),
    accounts,
    typedViewBlocks: [],
    check,
  };
}
