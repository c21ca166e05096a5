// A resource an account no longer syncs (dropped from its own --resources, or
// from HIRESYNC_RESOURCES) keeps its history in `status`, but its last run can
// never be fixed by a run again: `status --check`, the per-account summary and
// the console's problems leave it out, as the metrics (and so the alert
// rules) do.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import type { StatusReport } from '../../src/status/report-types.js';
import { type AccountsHarness, targetsOf } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { accounts } = cleanupAfterEach();

async function hiresync(h: AccountsHarness, argv: string[], extra: Record<string, string> = {}) {
  const io = captureIo();
  const code = await main(argv, { ...h.env, ...extra }, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

describe('status of resources an account no longer syncs', () => {
  it('status --check passes once the failed resource is dropped from the account’s --resources, and the summary counts only what it syncs, while the resource keeps its history', async () => {
    const h = await accounts({ accounts: ['alpha'], withoutDefault: true });
    h.sim.inject({ kind: 'malformed-body' }, 1, 'alpha');
    const outcomes = await h.sync(targetsOf(['alpha'], ['jobs']), 'full');
    expect(outcomes.map((o) => o.ok)).toEqual([false]);
    expect((await hiresync(h, ['status', '--check'])).code).toBe(1);

    expect(
      (await hiresync(h, ['accounts', 'update', 'alpha', '--resources', 'job_posts'])).code,
    ).toBe(0);
    const synced = await h.sync(targetsOf(['alpha'], ['job_posts']), 'full');
    expect(synced.map((o) => o.ok)).toEqual([true]);

    const check = await hiresync(h, ['status', '--check']);
    expect(check).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse((await hiresync(h, ['status', '--json'])).stdout) as StatusReport;
    const alpha = report.accounts.find((a) => a.name === 'alpha');
    expect(alpha?.summary).toMatchObject({ succeeded: 1, failed: 0 });
    expect(report.check).toEqual({ passed: true, problems: [] });
    // Its history stays readable, marked as no longer synced.
    const jobs = alpha?.resources.find((r) => r.resource === 'jobs');
    expect(jobs).toMatchObject({ state: 'failed', synced: false });
    expect(alpha?.resources.find((r) => r.resource === 'job_posts')).toMatchObject({
      state: 'succeeded',
      synced: true,
    });
  });

  it('a resource dropped from HIRESYNC_RESOURCES fails no check either', async () => {
    const h = await accounts({ accounts: ['alpha'], withoutDefault: true });
    h.sim.inject({ kind: 'malformed-body' }, 1, 'alpha');
    await h.sync(targetsOf(['alpha'], ['jobs']), 'full');
    expect((await hiresync(h, ['status', '--check'])).code).toBe(1);
    const check = await hiresync(h, ['status', '--check'], {
      HIRESYNC_RESOURCES: 'job_posts,tracking_links',
    });
    expect(check).toMatchObject({ code: 0, stderr: '' });
  });
});
