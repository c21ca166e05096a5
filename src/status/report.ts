/**
 * Reads what `hiresync status` knows into one document (its types:
 * src/status/report-types.ts) for `status`, `status --json` and the console.
 */

import type { Kysely } from 'kysely';
import { DEFAULT_ACCOUNT, runKey } from '../account-name.js';
import { AccountSettingsStore } from '../accounts/account-settings-store.js';
import type { AccountInfo } from '../accounts/stored-account.js';
import { isoTimestamp } from '../iso-timestamp.js';
import { RunLock } from '../queue/run-lock.js';
import { HEARTBEAT_PERIOD_MS, HEARTBEAT_TTL_MS, readWorkers } from '../queue/worker-heartbeat.js';
import type { RedisConnection } from '../redis/connect.js';
import type { Database } from '../warehouse/tables.js';
import { reportOfAccount } from './account-report.js';
import { checkDeployment, workerReportOf } from './liveness.js';
import { overviewOf } from './overview.js';
import { type ResourceStatus, readStatus, readTypedViewBlocks } from './read-status.js';
import type { ReportAccount, StatusReport, StatusReportOptions } from './report-types.js';

/** A registered account as the report takes it. */
export function reportAccountOf(account: AccountInfo): ReportAccount {
  return {
    name: account.name,
    authMode: account.authMode,
    state: account.state,
    reauthorizationReason: account.partner?.reauthorizationReason ?? null,
    refusalReason: account.refusalReason,
  };
}

/**
 * The accounts a report covers: the environment's own (`default`) when
 * `environment` is given, then the registered accounts in their order.
 * `default` shown from its runs alone (this environment sets no credentials,
 * `configured` false) is `not configured here`, as `accounts list` says.
 */
export function reportAccounts(
  registered: readonly AccountInfo[],
  environment: { authMode: string | null; configured: boolean } | undefined,
): ReportAccount[] {
  return [
    ...(environment
      ? [
          {
            name: DEFAULT_ACCOUNT,
            authMode: environment.authMode,
            state: environment.configured ? 'enabled' : 'not configured here',
          },
        ]
      : []),
    ...registered.map(reportAccountOf),
  ];
}

/**
 * Reads the status of `accounts` (in their order; their runs from the shared
 * table hiresync.data_sync_runs, their checkpoints under `prefix` in Redis)
 * into one document, in a constant number of statements and round trips
 * whatever the number of accounts. Never holds a secret: errors are
 * redacted as stored rows are read.
 */
export async function readStatusReport(
  db: Kysely<Database>,
  redis: RedisConnection,
  prefix: string,
  accounts: readonly ReportAccount[],
  options: StatusReportOptions,
): Promise<StatusReport> {
  const names = accounts.map((a) => a.name);
  const generatedAt = new Date().toISOString();
  // An account whose settings name its own resources shows those.
  const own = new Map(
    [...(await new AccountSettingsStore(db).all())].flatMap(([account, settings]) =>
      settings.resources ? [[account, settings.resources] as const] : [],
    ),
  );
  const [statuses, blocks, seen, queue] = await Promise.all([
    readStatus(db, redis, prefix, names, own),
    readTypedViewBlocks(db, names),
    readWorkers(redis, prefix),
    // BullMQ is loaded here, not when `status` starts (its help and usage errors need none).
    import('./queue-health.js').then(({ readQueueHealth }) => readQueueHealth(redis, prefix)),
  ]);
  // Runs in flight: which a live process holds, in one round trip.
  const running = statuses.filter((s) => s.lastRun?.outcome === 'running');
  const heldKeys = await new RunLock(redis, prefix).heldAmong(
    running.map((s) => runKey(s.account, s.resource)),
  );
  const held = new Set(
    running
      .filter((s) => heldKeys.has(runKey(s.account, s.resource)))
      .map((s) => `${s.account}/${s.resource}`),
  );
  const byAccount = new Map<string, ResourceStatus[]>();
  for (const status of statuses) {
    const of = byAccount.get(status.account) ?? [];
    byAccount.set(status.account, of);
    of.push(status);
  }
  const reports = accounts.map((account) => {
    const report = reportOfAccount(
      account,
      byAccount.get(account.name) ?? [],
      held,
      new Set(own.get(account.name) ?? options.resources),
      options,
    );
    for (const r of report.resources) {
      r.nextRun = queue.nextRuns.get(runKey(account.name, r.resource)) ?? null;
      const lastRun = r.lastRun?.id;
      r.retries =
        (lastRun && queue.failedAttempts.get(runKey(account.name, r.resource))?.get(lastRun)) ||
        null;
    }
    return report;
  });
  const maxAgeMs = options.maxAgeMs ?? HEARTBEAT_TTL_MS;
  const check = checkDeployment(reports, {
    workers: seen.workers,
    workersNowMs: seen.nowMs,
    nowMs: Date.parse(generatedAt),
    maxAgeMs,
    staleMs: options.staleMs,
  });
  const workers = seen.workers.map(workerReportOf);
  return {
    generatedAt,
    overview: overviewOf(reports, check),
    accounts: reports,
    typedViewBlocks: blocks.map((b) => ({ ...b, since: isoTimestamp(b.since) })),
    workers: {
      ran: workers.length > 0,
      alive: workers.filter((w) => w.alive),
      lastSeen: workers[0] ?? null,
      heartbeatPeriodMs: HEARTBEAT_PERIOD_MS,
      maxAgeMs,
    },
    queue: queue.counts,
    check,
  };
}
