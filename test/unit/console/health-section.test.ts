import { describe, expect, it } from 'vitest';
import { renderConsolePage } from '../../../src/console/console-page.js';
import { NEXT_RUNS_SHOWN } from '../../../src/console/health-section.js';
import { checkReport } from '../../../src/status/check.js';
import { noWorkerProblem } from '../../../src/status/liveness.js';
import { overviewOf } from '../../../src/status/overview.js';
import type {
  AccountReport,
  StatusReport,
  WorkerReport,
  WorkersReport,
} from '../../../src/status/report-types.js';
import { accountOf, resource, run } from '../../support/status-fixture.js';

const VIEW = { formToken: 't' };
const WORKER: WorkerReport = {
  host: 'sync-1',
  pid: 4242,
  startedAt: '2026-11-26T03:00:00.000Z',
  version: '0.1.0',
  lastSeen: '2026-11-26T03:59:50.000Z',
  alive: true,
};

function workers(fields: Partial<WorkersReport>): WorkersReport {
  return {
    ran: true,
    alive: [WORKER],
    lastSeen: WORKER,
    heartbeatPeriodMs: 15_000,
    maxAgeMs: 45_000,
    ...fields,
  };
}

function report(
  accounts: AccountReport[],
  fields: Pick<StatusReport, 'workers'>,
  extra: StatusReport['check']['problems'] = [],
): StatusReport {
  const named = checkReport(accounts);
  const check = {
    passed: named.passed && extra.length === 0,
    problems: [...extra, ...named.problems],
  };
  return {
    generatedAt: '2026-11-26T04:00:00.000Z',
    overview: overviewOf(accounts, check),
    accounts,
    typedViewBlocks: [],
    queue: { waiting: 3, prioritized: 1, active: 2, delayed: 24, failed: 1, completed: 40 },
    check,
    ...fields,
  };
}

function acme(nextRuns: number): AccountReport {
  const account = accountOf({ name: 'acme', authMode: 'partner', state: 'enabled' }, [
    resource('acme', 'jobs', run({ id: '1', outcome: 'succeeded' })),
  ]);
  const [jobs] = account.resources;
  if (!jobs) throw new Error('no jobs');
  account.resources = Array.from({ length: nextRuns }, (_, i) => ({
    ...jobs,
    resource: `r${String(i).padStart(2, '0')}`,
    nextRun: {
      at: `2026-11-26T04:${String(59 - i).padStart(2, '0')}:00.000Z`,
      mode: 'incremental',
    },
  }));
  return account;
}

describe('the console shows the workers, the queue and the next runs', () => {
  it('lists the workers alive with host, pid and last seen, the queue by state and the soonest run first', () => {
    const page = renderConsolePage(report([acme(2)], { workers: workers({}) }), VIEW);
    expect(page).toContain('<h2>Workers and queue</h2>');
    expect(page).toContain('1 worker alive');
    expect(page).toMatch(/<td>sync-1<\/td><td class="num">4242<\/td><td>0\.1\.0<\/td>/);
    expect(page).toContain('Run queue: 4 waiting · 2 active · 24 delayed · 1 failed');
    expect(page).toContain('Next scheduled run: acme/r01 (incremental) at 2026-11-26 04:58');
  });

  it('names the stopped worker and what to do when none was seen within the max age, and lists it under Needs attention', () => {
    const stopped = { ...WORKER, alive: false };
    const problem = noWorkerProblem(
      [{ host: 'sync-1', pid: 4242, lastSeenMs: Date.parse(WORKER.lastSeen) }],
      Date.parse('2026-11-26T04:03:00Z'),
      45_000,
    );
    if (!problem) throw new Error('no problem');
    const page = renderConsolePage(
      report([acme(1)], { workers: workers({ alive: [], lastSeen: stopped }) }, [problem]),
      VIEW,
    );
    expect(page).toContain('<a href="#health">workers</a>: no worker seen');
    expect(page).toContain(
      'no worker seen for 3m (last: sync-1:4242 at 2026-11-26T03:59:50.000Z); start &#39;hiresync worker&#39; or check its logs',
    );
  });

  it('says a deployment without a worker syncs from cron, with no next run, rather than a problem', () => {
    const page = renderConsolePage(
      report([acme(0)], { workers: workers({ ran: false, alive: [], lastSeen: null }) }),
      VIEW,
    );
    expect(page).toContain('No worker has run in this deployment (it syncs from cron, or not yet)');
    expect(page).toContain('No scheduled run: no worker keeps the schedules.');
  });

  it(`lists at most ${NEXT_RUNS_SHOWN} next runs and says where the others are`, () => {
    const page = renderConsolePage(report([acme(30)], { workers: workers({}) }), VIEW);
    expect(page.match(/<td>acme\/r\d\d<\/td>/g)?.length).toBe(NEXT_RUNS_SHOWN);
    expect(page).toContain('and 10 more');
  });
});
