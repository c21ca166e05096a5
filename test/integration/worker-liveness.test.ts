// Liveness: each worker records a heartbeat in Redis (host, pid, last seen);
// `status` shows the workers alive, the run queue's jobs by state and each
// resource's next scheduled run; `status --check` fails when the deployment
// has run workers but none was seen within --max-age (a deployment syncing
// from cron, which never ran a worker, is not judged), and with --stale D
// when a resource's last success is older than D.
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import type { StatusReport } from '../../src/status/report-types.js';
import { targetsOf } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { accounts, cli } = cleanupAfterEach();

/** Runs `hiresync ARGV` in this process. */
async function run(argv: string[], env: Record<string, string>) {
  const io = captureIo();
  const code = await main(argv, env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

async function statusJson(env: Record<string, string>): Promise<StatusReport> {
  const { code, stdout, stderr } = await run(['status', '--json'], env);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(stdout) as StatusReport;
}

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('worker liveness in status and status --check', () => {
  it('shows a running worker alive with its host and pid, the queue by state and each resource’s next run; once it stops, --check with a max age shorter than its silence exits 1 naming it', async () => {
    const h = await accounts({ accounts: ['acme'] });
    const worker = cli(['worker'], h.env);
    const started = await waitFor(
      async () => /"worker started"/.test(worker.stdout()) && worker.stdout(),
      30_000,
    );
    const port = Number(/"port":(\d+)/.exec(started)?.[1]);
    const pid = worker.child.pid;

    const report = await statusJson(h.env);
    expect(report.workers).toMatchObject({
      ran: true,
      heartbeatPeriodMs: 15_000,
      maxAgeMs: 45_000,
      alive: [{ host: hostname(), pid, alive: true, version: expect.any(String) }],
    });
    expect(report.workers?.alive[0]?.lastSeen).toMatch(ISO_UTC);
    expect(Object.keys(report.queue ?? {}).sort()).toEqual(
      ['active', 'completed', 'delayed', 'failed', 'prioritized', 'waiting'].sort(),
    );
    // Every resource of both accounts has its schedulers, hence a next run.
    for (const account of report.accounts) {
      for (const r of account.resources.filter((r) => r.synced)) {
        expect(r.nextRun, `${account.name}/${r.resource}`).toMatchObject({
          at: expect.stringMatching(ISO_UTC),
          mode: expect.stringMatching(/^(incremental|full)$/),
        });
      }
    }
    const text = await run(['status', '-v'], h.env);
    expect(text.stdout).toContain(`workers: 1 alive: ${hostname()}:${pid} (seen `);
    expect(text.stdout).toMatch(/\nqueue: \d+ waiting, \d+ active, \d+ delayed, \d+ failed\n/);
    expect(text.stdout).toMatch(/next scheduled runs\naccount +resource +mode +next run \(UTC\)\n/);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/\nhiresync_workers_alive 1\n/);
    expect(metrics).toMatch(/\nhiresync_worker_heartbeat_age_seconds \d/);

    // Alive: the default max age finds it.
    const live = await run(['status', '--check', '--json'], h.env);
    expect(
      (JSON.parse(live.stdout) as StatusReport).check.problems.filter(
        (p) => p.kind === 'no_worker',
      ),
    ).toEqual([]);

    worker.child.kill('SIGTERM');
    expect(await worker.exit).toBe(0);

    // A clean stop removes it from the workers alive; the deployment remembers it.
    const after = await statusJson(h.env);
    expect(after.workers?.alive).toEqual([]);
    expect(after.workers?.lastSeen).toMatchObject({ host: hostname(), pid, alive: false });
    const check = await run(['status', '--check', '--max-age', '1ms'], h.env);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(
      new RegExp(
        `\\nno worker seen for \\S+ \\(last: ${hostname()}:${pid} at \\S+Z\\); start 'hiresync worker' or check its logs \\(status --check --max-age 1ms\\)\\n`,
      ),
    );
    const json = JSON.parse(
      (await run(['status', '--check', '--json', '--max-age', '1ms'], h.env)).stdout,
    );
    expect(json.check.problems).toContainEqual(
      expect.objectContaining({ account: null, resource: null, kind: 'no_worker' }),
    );
    expect((await run(['status'], h.env)).stdout).toContain(
      `workers: none alive; last seen ${hostname()}:${pid} at `,
    );
  }, 90_000);

  it('never judges a deployment that syncs from cron without a worker, and names a resource whose last success is older than --stale', async () => {
    const h = await accounts({ accounts: [] });
    const [outcome] = await h.sync(targetsOf(['default'], ['jobs']), 'full');
    expect(outcome?.ok).toBe(true);

    const check = await run(['status', '--check', '--max-age', '1ms'], h.env);
    expect(check).toMatchObject({ code: 0, stderr: '' });
    expect(check.stdout).toMatch(/^status check passed: /);
    const report = await statusJson(h.env);
    expect(report.workers).toMatchObject({ ran: false, alive: [], lastSeen: null });
    // No worker keeps schedules here: no next run.
    expect(report.accounts[0]?.resources.map((r) => r.nextRun)).toEqual(
      report.accounts[0]?.resources.map(() => null),
    );
    expect((await run(['status'], h.env)).stdout).toContain(
      'workers: none has run in this deployment (it syncs from cron, or not yet)',
    );

    const stale = await run(['status', '--check', '--stale', '1ms'], h.env);
    expect(stale.code).toBe(1);
    expect(stale.stdout).toMatch(
      /\ndefault\/jobs: last success \S+ ago \(\S+Z\), older than --stale 1ms; 'hiresync status --account default' shows its last run/,
    );
    // The resources never run are not stale: nothing has aged.
    expect(stale.stdout).not.toContain('default/job_posts');
    expect(await run(['status', '--check', '--stale', 'soon'], h.env)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--stale takes a duration such as 90s, 15m, 2h or 1d'),
    });
  }, 90_000);
});
