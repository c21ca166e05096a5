// Output machines and dashboards can read (issue 22, item 6): `status --json`
// and `accounts list --json` print one JSON document of the same facts as
// their tables (timestamps ISO 8601 UTC); `status --check` exits 1 when an
// account that is not disabled has a failed last run, a resource not
// permitted or needs re-authorizing; `status` in a terminal shows one line
// per account, and each resource with --account or -v.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { CommandIo } from '../../src/commands/command.js';
import { main } from '../../src/main.js';
import { enqueueRun } from '../../src/queue/sync-job.js';
import type { StatusReport } from '../../src/status/report-types.js';
import type { SyncRun } from '../../src/warehouse/tables.js';
import { type AccountsHarness, targetsOf } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer, accounts, partner } = cleanupAfterEach();

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** Runs `hiresync ARGV` in this process; `terminal` makes its stdout a terminal. */
async function run(argv: string[], env: Record<string, string>, terminal = false) {
  const io = captureIo();
  const ioOf: CommandIo = terminal ? { ...io, stdout: { ...io.stdout, isTTY: true } } : io;
  const code = await main(argv, env, ioOf);
  return { code, stdout: io.out(), stderr: io.err() };
}

async function statusJson(env: Record<string, string>, ...args: string[]): Promise<StatusReport> {
  const { code, stdout, stderr } = await run(['status', '--json', ...args], env);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(stdout) as StatusReport;
}

function accountIn(report: StatusReport, name: string) {
  const account = report.accounts.find((a) => a.name === name);
  if (!account) throw new Error(`no account ${name} in the report`);
  return account;
}

function resourceIn(report: StatusReport, name: string, resource: string) {
  const found = accountIn(report, name).resources.find((r) => r.resource === resource);
  if (!found) throw new Error(`no resource ${name}/${resource} in the report`);
  return found;
}

async function lastRunRow(h: AccountsHarness, account: string, resource: string) {
  const { rows } = await sql<SyncRun>`
    select * from hiresync.data_sync_runs where account = ${account} and resource = ${resource}
    order by id desc limit 1`.execute(h.database.db);
  const row = rows[0];
  if (!row) throw new Error(`no run of ${account}/${resource}`);
  return row;
}

describe('status --json and status --check', () => {
  it('report a succeeded, a failed and a not-permitted account as they stand, and --check exits 1 naming them until they are disabled', async () => {
    const h = await accounts({ accounts: ['alpha', 'beta', 'gamma'] });
    h.sim.inject({ kind: 'malformed-body' }, 1, 'beta');
    h.sim.setForbidden('gamma');
    const outcomes = await h.sync(targetsOf(['alpha', 'beta', 'gamma'], ['jobs']), 'full');
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, false]);

    const report = await statusJson(h.env);
    expect(ISO_UTC.test(report.generatedAt)).toBe(true);
    expect(report.accounts.map((a) => a.name)).toEqual(
      expect.arrayContaining(['alpha', 'beta', 'gamma']),
    );

    // alpha: its run as sync_runs holds it, timestamps ISO 8601 UTC.
    const alphaRun = await lastRunRow(h, 'alpha', 'jobs');
    const alpha = accountIn(report, 'alpha');
    expect(alpha).toMatchObject({
      authMode: 'client_credentials',
      state: 'enabled',
      reauthorization: null,
      credentialsRefused: null,
      problem: null,
    });
    const alphaJobs = resourceIn(report, 'alpha', 'jobs');
    expect(alphaJobs).toMatchObject({
      state: 'succeeded',
      lastRun: {
        id: alphaRun.id,
        mode: 'full',
        pages: alphaRun.pages,
        records: h.expectedIds('alpha', 'jobs').length,
        outcome: 'succeeded',
        error: null,
      },
      lastSuccess: { id: alphaRun.id },
      inFlight: null,
      checkpoint: null,
      error: null,
    });
    for (const at of [
      alphaJobs.lastRun?.startedAt,
      alphaJobs.lastRun?.finishedAt,
      alpha.lastSuccess,
    ]) {
      expect(at).toMatch(ISO_UTC);
    }
    expect(Date.parse(alphaJobs.lastRun?.startedAt ?? '')).toBe(
      Date.parse(alphaRun.started_at.replace(' ', 'T').replace(/\+00$/, 'Z')),
    );
    expect(alpha.lastSuccess).toBe(alphaJobs.lastRun?.finishedAt);
    expect(resourceIn(report, 'alpha', 'job_posts')).toMatchObject({
      state: 'never_run',
      lastRun: null,
    });

    // beta: the failed run with its error.
    const betaJobs = resourceIn(report, 'beta', 'jobs');
    expect(betaJobs).toMatchObject({
      state: 'failed',
      lastRun: { id: (await lastRunRow(h, 'beta', 'jobs')).id, outcome: 'failed' },
      lastSuccess: null,
      notPermitted: null,
    });
    expect(betaJobs.error).toBeTruthy();
    expect(betaJobs.lastRun?.error).toBe(betaJobs.error);

    // gamma: not permitted, with the scope to ask for and what to do.
    expect(resourceIn(report, 'gamma', 'jobs')).toMatchObject({
      state: 'not_permitted',
      notPermitted: { scope: 'harvest:jobs:list' },
      error: expect.stringMatching(/^403 from \/v3\/jobs/),
      action: expect.stringMatching(/^ask for scope harvest:jobs:list/),
    });
    expect(accountIn(report, 'gamma').summary).toMatchObject({ notPermitted: 1, succeeded: 0 });

    expect(report.check.passed).toBe(false);
    expect(report.check.problems.map((p) => [p.account, p.resource, p.kind])).toEqual([
      ['beta', 'jobs', 'failed'],
      ['gamma', 'jobs', 'not_permitted'],
    ]);

    // --check: exit 1, each problem on its own line; with --json, the document.
    const check = await run(['status', '--check'], h.env);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/^status check failed: 2 problems$/m);
    expect(check.stdout).toMatch(
      new RegExp(`^beta/jobs: last run ${betaJobs.lastRun?.id} failed: `, 'm'),
    );
    expect(check.stdout).toMatch(/^gamma\/jobs: not permitted: ask for scope harvest:jobs:list/m);
    const checkJson = await run(['status', '--check', '--json'], h.env);
    expect(checkJson.code).toBe(1);
    expect((JSON.parse(checkJson.stdout) as StatusReport).check.passed).toBe(false);
    // Asked of alpha alone, the check passes.
    expect(await run(['status', '--check', '--account', 'alpha'], h.env)).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^status check passed: 1 account, /),
    });

    // Disabled accounts are not checked.
    await h.store.setState('beta', 'disabled');
    await h.store.setState('gamma', 'disabled');
    const passed = await run(['status', '--check'], h.env);
    expect(passed).toMatchObject({ code: 0, stderr: '' });
    expect(passed.stdout).toMatch(/^status check passed: /);
    expect(accountIn(await statusJson(h.env), 'beta').state).toBe('disabled');
  });

  it('shows a run in flight with its progress and pending checkpoint: active while its process holds it, interrupted once that process stops', async () => {
    const h = await accounts({ accounts: ['alpha', 'beta'], records: 100 });
    // Pages 1 and 2 answer at once; page 3 keeps the run waiting.
    h.sim.inject({ kind: 'delay', ms: 0 }, 2, 'alpha');
    h.sim.inject({ kind: 'delay', ms: 20_000 }, 1, 'alpha');
    let reached: () => void = () => undefined;
    const secondPage = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const app = h.app({
      onProgress: (p) => {
        if (p.account === 'alpha' && p.pages === 2) reached();
      },
    });
    let closed = false;
    defer(async () => {
      if (!closed) await app.close();
    });
    app.startWorker();
    await enqueueRun(
      app.queue,
      { account: 'alpha', resource: 'jobs', requested: 'full', origin: 'cli' },
      h.config,
    );
    await secondPage;

    const runId = (await lastRunRow(h, 'alpha', 'jobs')).id;
    const during = resourceIn(await statusJson(h.env, '--account', 'alpha'), 'alpha', 'jobs');
    expect(during).toMatchObject({
      state: 'running',
      lastRun: { id: runId, outcome: 'running', finishedAt: null },
      inFlight: { runId, mode: 'full', pages: 2, active: true },
      checkpoint: { runId, mode: 'full', pagesDone: 2 },
    });
    expect(during.inFlight?.startedAt).toMatch(ISO_UTC);
    expect(during.checkpoint?.savedAt).toMatch(ISO_UTC);
    // A run in flight is not a failure.
    expect((await run(['status', '--check'], h.env)).code).toBe(0);
    // In a terminal, alpha's line says so.
    const terminal = await run(['status'], h.env, true);
    expect(terminal.stdout).toMatch(
      new RegExp(
        `^alpha\\s+enabled\\s+1 running, \\d+ never run\\s+-\\s+jobs: run ${runId}, 2 pages$`,
        'm',
      ),
    );

    // The worker stops (its run is interrupted after the page in hand): the run
    // stays in flight, waiting to resume from its checkpoint, held by nobody.
    closed = true;
    await app.close();
    const after = resourceIn(await statusJson(h.env, '--account', 'alpha'), 'alpha', 'jobs');
    expect(after).toMatchObject({
      state: 'running',
      inFlight: { runId, pages: 2, active: false },
      checkpoint: { runId, pagesDone: 2 },
    });
    expect((await run(['status'], h.env, true)).stdout).toMatch(
      new RegExp(`^alpha\\s.*jobs: run ${runId}, 2 pages, interrupted$`, 'm'),
    );
    // The per-resource table names the checkpoint, as it always has.
    expect((await run(['status', '--account', 'alpha'], h.env)).stdout).toMatch(
      new RegExp(`^alpha\\s+jobs\\s+full\\s.*\\brunning\\s.*yes: run ${runId}, 2 pages done`, 'm'),
    );
  }, 60_000);

  it('--check keeps failing while the next run of a failed resource is in flight, and passes once a run succeeds', async () => {
    const h = await accounts({ accounts: ['alpha'] });
    h.sim.inject({ kind: 'malformed-body' }, 1, 'alpha');
    expect((await h.sync(targetsOf(['alpha'], ['jobs']), 'full')).map((o) => o.ok)).toEqual([
      false,
    ]);
    const failed = await lastRunRow(h, 'alpha', 'jobs');
    // The next run started (or was interrupted: no process holds it).
    const { rows: inserted } = await sql<{ id: string }>`
      insert into hiresync.data_sync_runs (account, resource, mode, outcome)
      values ('alpha', 'jobs', 'full', 'running') returning id`.execute(h.database.db);
    const next = { id: inserted[0]?.id };
    const jobs = resourceIn(await statusJson(h.env, '--account', 'alpha'), 'alpha', 'jobs');
    expect(jobs).toMatchObject({
      state: 'running',
      lastRun: { id: next.id, outcome: 'running' },
      lastFinished: { id: failed.id, outcome: 'failed' },
    });
    const check = await run(['status', '--check'], h.env);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`alpha/jobs: last run ${failed.id} failed: `);
    expect(check.stdout).toContain(`(run ${next.id} in flight)`);

    await sql`delete from hiresync.data_sync_runs
      where account = 'alpha' and id = ${next.id}::bigint`.execute(h.database.db);
    expect((await h.sync(targetsOf(['alpha'], ['jobs']), 'full')).map((o) => o.ok)).toEqual([true]);
    expect((await run(['status', '--check'], h.env)).code).toBe(0);
  });

  it("prints the same ISO 8601 UTC timestamps whatever the Postgres session's TimeZone and DateStyle", async () => {
    const h = await accounts({ accounts: ['alpha'] });
    expect((await h.sync(targetsOf(['alpha'], ['jobs']), 'full')).map((o) => o.ok)).toEqual([true]);
    const utc = await statusJson(h.env, '--account', 'alpha');
    const url = new URL(h.env.DATABASE_URL ?? '');
    url.searchParams.set('options', '-c TimeZone=America/St_Johns -c DateStyle=SQL,DMY');
    const elsewhere = { ...h.env, DATABASE_URL: url.href };
    const other = await statusJson(elsewhere, '--account', 'alpha');
    const jobs = resourceIn(other, 'alpha', 'jobs');
    expect(jobs.lastRun?.finishedAt).toMatch(ISO_UTC);
    expect(Date.parse(jobs.lastRun?.finishedAt ?? '')).toBe(
      Date.parse(resourceIn(utc, 'alpha', 'jobs').lastRun?.finishedAt ?? ''),
    );
    expect(accountIn(other, 'alpha').lastSuccess).toMatch(ISO_UTC);
    const list = await run(['accounts', 'list', '--json'], elsewhere);
    expect(list.code, list.stderr).toBe(0);
    const listed = (
      JSON.parse(list.stdout) as { accounts: Array<{ name: string; lastSuccess: string }> }
    ).accounts.find((a) => a.name === 'alpha');
    expect(Date.parse(listed?.lastSuccess ?? '')).toBe(
      Date.parse(accountIn(utc, 'alpha').lastSuccess ?? ''),
    );
  });

  it('says why a partner account needs re-authorizing and what to do, in status --json, accounts list --json and --check', async () => {
    const { sim, store, env, provider } = await partner();
    const refreshing = await provider();
    sim.revokeAuthorization('acme');
    await refreshing.getToken().catch(() => undefined);
    expect((await store.get('acme'))?.state).toBe('needs_reauthorization');

    const acme = accountIn(await statusJson(env), 'acme');
    expect(acme).toMatchObject({
      authMode: 'partner',
      state: 'needs_reauthorization',
      reauthorization: {
        reason: expect.stringContaining('authorization revoked'),
        action:
          "send the customer's administrator a connect link ('hiresync accounts invite acme'), or run 'hiresync accounts authorize acme' where their browser can reach this host (its data is kept)",
      },
    });
    expect(acme.resources.every((r) => r.action === acme.reauthorization?.action)).toBe(true);

    const check = await run(['status', '--check'], env);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(
      /^acme: needs re-authorizing: .*authorization revoked.*; send the customer's administrator a connect link \('hiresync accounts invite acme'\)/m,
    );

    const list = await run(['accounts', 'list', '--json'], env);
    expect(list.code).toBe(0);
    const listed = (JSON.parse(list.stdout) as { accounts: Array<Record<string, unknown>> })
      .accounts;
    expect(listed.find((a) => a.name === 'acme')).toEqual({
      name: 'acme',
      authMode: 'partner',
      schema: 'acme',
      state: 'needs_reauthorization',
      lastSuccess: null,
      reauthorization: acme.reauthorization,
      credentialsRefused: null,
      settings: { resources: null, incrementalEvery: null, fullCron: null },
    });
  });
});

describe('hiresync status in a terminal', () => {
  it('shows one line per account, and each resource with --account, -v, or when the output is not a terminal', async () => {
    const h = await accounts({ accounts: ['alpha', 'beta'] });
    expect(await h.sync(targetsOf(['alpha'], ['jobs']), 'full')).toMatchObject([{ ok: true }]);
    const resourceLines = /^(default|alpha|beta)\s+(jobs|job_posts|tracking_links)\s/gm;

    const compact = await run(['status'], h.env, true);
    expect(compact).toMatchObject({ code: 0, stderr: '' });
    const lines = compact.stdout.split('\n');
    expect(lines[0]).toMatch(/^account\s+state\s+resources\s+last success \(UTC\)\s+in flight$/);
    expect(compact.stdout).toMatch(
      /^alpha\s+enabled\s+1 ok, \d+ never run\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+-$/m,
    );
    expect(compact.stdout).toMatch(/^beta\s+enabled\s+\d+ never run\s+-\s+-$/m);
    expect(compact.stdout.match(resourceLines)).toBeNull();
    expect(compact.stdout).toContain("'hiresync status --account NAME'");

    const named = await run(['status', '--account', 'alpha'], h.env, true);
    expect(named.stdout).toMatch(/^alpha\s+jobs\s+full\s.*\bsucceeded\b/m);
    expect(named.stdout).not.toMatch(/^beta\s/m);

    for (const verbose of ['-v', '--verbose']) {
      const detail = await run(['status', verbose], h.env, true);
      expect(detail.stdout).toMatch(/^alpha\s+jobs\s+full\s.*\bsucceeded\b/m);
      expect(detail.stdout).toMatch(/^beta\s+jobs\s+never run\b/m);
    }

    // A pipe or a file gets the per-resource table, as scripts always had it;
    // --summary asks for the short one there.
    const piped = await run(['status'], h.env);
    expect(piped.stdout).toMatch(/^alpha\s+jobs\s+full\s.*\bsucceeded\b/m);
    const summary = await run(['status', '--summary'], h.env);
    expect(summary.stdout).toMatch(/^alpha\s+enabled\s+1 ok/m);
    expect(summary.stdout.match(resourceLines)).toBeNull();

    expect(await run(['status', '-v', '--summary'], h.env)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('-v/--verbose or --summary, not both'),
    });
  });
});

describe('accounts list --json', () => {
  it('prints the facts of the table as one JSON document, timestamps ISO 8601 UTC', async () => {
    const h = await accounts({ accounts: ['alpha', 'beta'] });
    expect(await h.sync(targetsOf(['alpha'], ['jobs']), 'full')).toMatchObject([{ ok: true }]);
    const table = await run(['accounts', 'list'], h.env);
    const json = await run(['accounts', 'list', '--json'], h.env);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    const { accounts: listed } = JSON.parse(json.stdout) as {
      accounts: Array<{ name: string; lastSuccess: string | null }>;
    };
    expect(listed).toEqual([
      {
        name: 'default',
        authMode: 'client_credentials',
        schema: 'public',
        state: 'enabled',
        lastSuccess: null,
        reauthorization: null,
        credentialsRefused: null,
        settings: { resources: null, incrementalEvery: null, fullCron: null },
      },
      {
        name: 'alpha',
        authMode: 'client_credentials',
        schema: 'alpha',
        state: 'enabled',
        lastSuccess: expect.stringMatching(ISO_UTC),
        reauthorization: null,
        credentialsRefused: null,
        settings: { resources: null, incrementalEvery: null, fullCron: null },
      },
      {
        name: 'beta',
        authMode: 'client_credentials',
        schema: 'beta',
        state: 'enabled',
        lastSuccess: null,
        reauthorization: null,
        credentialsRefused: null,
        settings: { resources: null, incrementalEvery: null, fullCron: null },
      },
    ]);
    // The same last success as the table (then its settings: the deployment's) and as status --json.
    const alphaSuccess = listed[1]?.lastSuccess ?? '';
    expect(table.stdout).toMatch(
      new RegExp(
        `^alpha\\s+client_credentials\\s+alpha\\s+enabled\\s+${alphaSuccess.replace('T', ' ').replace('Z', '+00').replace(/[.+]/g, '\\$&')}\\s+-\\s+-\\s+-$`,
        'm',
      ),
    );
    expect(accountIn(await statusJson(h.env), 'alpha').lastSuccess).toBe(alphaSuccess);
  });
});
