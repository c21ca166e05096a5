import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { runKey } from '../../src/account-name.js';
import { scheduleTargetsOf } from '../../src/commands/worker.js';
import { main } from '../../src/main.js';
import { ScheduleKeeper } from '../../src/queue/schedule-keeper.js';
import { upsertSchedules } from '../../src/queue/upsert-schedules.js';
import type { AccountsHarness } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';

const { defer, accounts } = cleanupAfterEach();

/** `hiresync ARGV` in process with the harness's environment (plus `extra`), `input` on standard input. */
async function hiresync(
  h: AccountsHarness,
  argv: string[],
  input = '',
  extra: Record<string, string> = {},
) {
  const io = captureIo(input);
  const code = await main(argv, { ...h.env, ...extra }, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/** The rows of the table the CLI printed (after its header and rule), split into cells. */
function tableRows(stdout: string): string[][] {
  const table = stdout.trimEnd().split('\n\n')[0] ?? '';
  return table
    .split('\n')
    .slice(2)
    .map((line) => line.split(/\s{2,}/));
}

/** The schemas holding a list resource's table `NAME_data`. */
async function schemasWith(h: AccountsHarness, name: string): Promise<string[]> {
  const { rows } = await sql<{ schema: string }>`
    select table_schema as schema from information_schema.tables
    where table_name = ${`${name}_data`} order by 1`.execute(h.database.db);
  return rows.map((r) => r.schema);
}

/** An account's row version: what a run in flight compares. */
async function versionOf(h: AccountsHarness, name: string): Promise<string> {
  const { rows } = await sql<{ version: string }>`
    select version::text from hiresync.accounts where name = ${name}`.execute(h.database.db);
  return rows[0]?.version ?? '';
}

/** A list resource at a path of its own (HIRESYNC_RESOURCE_PATHS), not in HIRESYNC_RESOURCES. */
const OPENINGS = { HIRESYNC_RESOURCE_PATHS: 'openings=/v3/offers' };

describe('per-account settings', () => {
  it("accounts add and update store an account's own resources, interval and cron, list shows them, and default puts the deployment's back, leaving its version alone", async () => {
    const h = await accounts({
      accounts: ['beta'],
      unregistered: ['alpha'],
      env: { ...OPENINGS, HIRESYNC_RESOURCES: 'jobs,job_posts' },
    });
    const added = await hiresync(
      h,
      [
        'accounts',
        'add',
        'alpha',
        '--client-id',
        'alpha-client',
        '--resources',
        'jobs,openings',
        '--incremental-every',
        '5m',
        '--full-cron',
        '0 4 * * 0',
      ],
      'alpha-secret\n',
    );
    expect(added, added.stderr).toMatchObject({ code: 0 });
    // Its own list resource has its tables in its schema only.
    expect(await schemasWith(h, 'openings')).toEqual(['alpha']);
    const listed = async () =>
      tableRows((await hiresync(h, ['accounts', 'list'])).stdout).map((row) => [
        row[0],
        ...row.slice(5),
      ]);
    expect(await listed()).toEqual([
      ['default', '-', '-', '-'],
      ['alpha', 'jobs,openings', '5m', '0 4 * * 0'],
      ['beta', '-', '-', '-'],
    ]);

    const version = await versionOf(h, 'alpha');
    // Settings alone need no secret on standard input, no Redis and no secret key.
    const { HIRESYNC_SECRET_KEY: _, REDIS_URL: __, ...bare } = h.env;
    const io = captureIo('not-a-secret\n');
    const updated = await main(
      [
        'accounts',
        'update',
        'alpha',
        '--incremental-every',
        'default',
        '--full-cron',
        '30 2 * * *',
      ],
      bare,
      io,
    );
    expect({ code: updated, stderr: io.err() }).toEqual({ code: 0, stderr: '' });
    expect(io.out()).toBe(
      `updated account alpha: resources jobs,openings, incremental every -, full cron 30 2 * * * ("-": the deployment's); running workers follow within a minute, its runs in flight finish as they are\n`,
    );
    expect(await listed()).toEqual([
      ['default', '-', '-', '-'],
      ['alpha', 'jobs,openings', '-', '30 2 * * *'],
      ['beta', '-', '-', '-'],
    ]);
    expect(
      (await hiresync(h, ['accounts', 'update', 'beta', '--resources', 'job_boards'])).code,
    ).toBe(0);
    expect(
      (await hiresync(h, ['accounts', 'update', 'alpha', '--resources', 'default'])).code,
    ).toBe(0);
    expect(await listed()).toEqual([
      ['default', '-', '-', '-'],
      ['alpha', '-', '-', '30 2 * * *'],
      ['beta', 'job_boards', '-', '-'],
    ]);
    // No run in flight stops for a settings change: the account's version is as it was.
    expect(await versionOf(h, 'alpha')).toBe(version);
    // The tables stay with their data; migrate makes no copy of them elsewhere.
    expect((await hiresync(h, ['migrate'])).code).toBe(0);
    expect(await schemasWith(h, 'openings')).toEqual(['alpha']);

    expect(await hiresync(h, ['accounts', 'update', 'ghost', '--resources', 'jobs'])).toMatchObject(
      {
        code: 1,
        stderr: expect.stringContaining('no account ghost is registered'),
      },
    );
    // Removing the account removes its settings with it.
    expect((await hiresync(h, ['accounts', 'remove', 'beta'])).code).toBe(0);
    const { rows } = await sql<{ account: string }>`
      select account from hiresync.account_settings order by account`.execute(h.database.db);
    expect(rows.map((r) => r.account)).toEqual(['alpha']);
  });

  it("sync runs each account's own resources, and a resource only one account names gets its tables in that account's schema only", async () => {
    const h = await accounts({
      accounts: ['alpha', 'beta'],
      withoutDefault: true,
      records: 12,
      env: { ...OPENINGS, HIRESYNC_RESOURCES: 'jobs', HIRESYNC_PER_PAGE: '50' },
    });
    expect(
      (await hiresync(h, ['accounts', 'update', 'alpha', '--resources', 'jobs,openings'])).code,
    ).toBe(0);
    const sync = await runCli(['sync'], h.env);
    expect(sync.code, sync.stderr).toBe(0);
    expect(
      tableRows(sync.stdout).map(([account, resource, mode]) => [account, resource, mode]),
    ).toEqual([
      ['alpha', 'jobs', 'full'],
      ['alpha', 'openings', 'full'],
      ['beta', 'jobs', 'full'],
    ]);
    expect(await schemasWith(h, 'openings')).toEqual(['alpha']);
    // Read at its own path, from alpha's data.
    const served = [...h.sim.datasetOf('alpha').presentIndexes('offers')].length;
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from alpha.openings where deleted_at is null`.execute(h.database.db);
    expect(Number(rows[0]?.n)).toBe(served);
    expect(served).toBeGreaterThan(0);
    expect(h.sim.stats.receivedTargets.some((t) => t.startsWith('/v3/offers'))).toBe(true);

    // status shows each account's own resources.
    const status = await runCli(['status'], h.env);
    const byAccount = (account: string) =>
      tableRows(status.stdout)
        .filter(([a]) => a === account)
        .map(([, resource]) => resource);
    expect(byAccount('alpha')).toEqual(['jobs', 'openings']);
    expect(byAccount('beta')).toContain('jobs');
    expect(byAccount('beta')).not.toContain('openings');

    // --resource of a resource only alpha names runs it for alpha alone; a typo is refused.
    const one = await runCli(['sync', '--resource', 'openings'], h.env);
    expect(one.code, one.stderr).toBe(0);
    expect(tableRows(one.stdout).map(([account, resource]) => [account, resource])).toEqual([
      ['alpha', 'openings'],
    ]);
    // Named for an account whose settings do not name it: refused, saying which accounts
    // do, not asking for the path HIRESYNC_RESOURCE_PATHS already gives it.
    const notBeta = await runCli(['sync', '--account', 'beta', '--resource', 'openings'], h.env);
    expect(notBeta.code, notBeta.stderr).toBe(2);
    expect(notBeta.stderr).toContain(
      '--resource openings is a list resource HIRESYNC_RESOURCES does not name: it runs only for the accounts whose --resources name it (alpha), and no account to sync (beta) does',
    );
    expect(notBeta.stderr).not.toContain('give it a path');
    const typo = await runCli(['sync', '--resource', 'opening'], h.env);
    expect(typo).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--resource opening is not a configured resource'),
    });
  }, 60_000);

  it("a list resource only one account names is stored in shared storage; accounts remove --drop-data drops that account's schema and rows, whatever all_accounts shows of it", async () => {
    const h = await accounts({
      accounts: ['alpha', 'beta'],
      withoutDefault: true,
      records: 12,
      env: { ...OPENINGS, HIRESYNC_RESOURCES: 'jobs', HIRESYNC_PER_PAGE: '50' },
    });
    expect(
      (await hiresync(h, ['accounts', 'update', 'alpha', '--resources', 'jobs,openings'])).code,
    ).toBe(0);
    // Its first run is full: it fills alpha.openings_flat.
    const sync = await runCli(['sync', '--resource', 'openings'], h.env);
    expect(sync.code, sync.stderr).toBe(0);
    const views = async () => {
      const { rows } = await sql<{ view: string }>`
        select table_schema || '.' || table_name as view from information_schema.views
        where table_name in ('openings', 'openings_flat') and table_schema <> 'all_accounts'
        order by 1`.execute(h.database.db);
      return rows.map((r) => r.view);
    };
    expect(await views()).toEqual(['alpha.openings', 'alpha.openings_flat']);
    const stored = async () => {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from hiresync.data_openings_data where account = 'alpha'`.execute(
        h.database.db,
      );
      return rows[0]?.n;
    };
    expect(await stored()).toBeGreaterThan(0);
    // The typed view's union reads the shared table: it does not hold alpha's schema back.
    const { rows: union } = await sql<{ n: number }>`
      select count(*)::int as n from all_accounts.openings_flat where account = 'alpha'`.execute(
      h.database.db,
    );
    expect(union[0]?.n).toBe(await stored());

    const removed = await hiresync(h, ['accounts', 'remove', 'alpha', '--drop-data', '--yes']);
    expect(removed, removed.stderr).toMatchObject({ code: 0 });
    expect(await views()).toEqual([]);
    expect(await stored()).toBe(0);
  }, 60_000);

  it("a running worker's schedule keeper follows a change of an account's resources, interval and cron within its period, replacing the changed schedulers", async () => {
    const h = await accounts({
      accounts: ['alpha', 'beta'],
      withoutDefault: true,
      env: { HIRESYNC_RESOURCES: 'jobs,job_posts' },
    });
    const app = h.app();
    defer(() => app.close());
    const keeper = new ScheduleKeeper({
      queue: app.queue,
      config: h.config,
      targets: () => scheduleTargetsOf(app),
      logger: h.log.logger,
      intervalMs: 100,
    });
    defer(() => keeper.stop());
    const schedules = async () =>
      Object.fromEntries(
        (await app.queue.getJobSchedulers())
          .map((s) => [s.key, s.every ?? s.pattern] as const)
          .sort(([a], [b]) => String(a).localeCompare(String(b))),
      );
    const of = (account: string, resources: string[], every: number, cron: string) =>
      Object.fromEntries(
        resources.flatMap((resource) => [
          [`full:${runKey(account, resource)}`, cron],
          [`incremental:${runKey(account, resource)}`, every],
        ]),
      );
    await keeper.upsertAll();
    keeper.start(app.queueRedis);
    const deployment = 15 * 60_000;
    expect(await schedules()).toEqual({
      ...of('alpha', ['jobs', 'job_posts'], deployment, '0 3 * * *'),
      ...of('beta', ['jobs', 'job_posts'], deployment, '0 3 * * *'),
    });

    const change = await hiresync(h, [
      'accounts',
      'update',
      'alpha',
      '--resources',
      'jobs,tracking_links',
      '--incremental-every',
      '5m',
      '--full-cron',
      '0 4 * * 0',
    ]);
    expect(change.code, change.stderr).toBe(0);
    const wanted = {
      ...of('alpha', ['jobs', 'tracking_links'], 300_000, '0 4 * * 0'),
      ...of('beta', ['jobs', 'job_posts'], deployment, '0 3 * * *'),
    };
    await waitFor(
      async () => JSON.stringify(await schedules()) === JSON.stringify(sortKeys(wanted)),
      10_000,
    );
    // The replaced scheduler's next run follows the new interval, not the old one.
    const next = (await app.queue.getJobScheduler(`incremental:${runKey('alpha', 'jobs')}`))?.next;
    expect(next).toBeLessThanOrEqual(Date.now() + 300_000);
    expect(h.log.text()).toContain('"msg":"job schedulers updated"');
    // Once followed, nothing is replaced again: the schedulers hold what is wanted.
    expect(
      (await upsertSchedules(app.queue, h.config, await scheduleTargetsOf(app))).replaced,
    ).toEqual([]);

    expect(
      (await hiresync(h, ['accounts', 'update', 'alpha', '--incremental-every', 'default'])).code,
    ).toBe(0);
    await waitFor(
      async () => (await schedules())[`incremental:${runKey('alpha', 'jobs')}`] === deployment,
      10_000,
    );
  });
});

/** `record` with its keys sorted, as {@link schedules} lists them. */
function sortKeys(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
