// `status`, `accounts list` and the series a /metrics scrape reads from
// Postgres cost a constant number of statements and Redis commands whatever
// the number of accounts (issue 23: thousands of accounts), and above 50
// accounts `status` and `accounts list` print an overview first and the
// lines on request. Statements and commands are counted, never timed.
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runKey } from '../../src/account-name.js';
import { main } from '../../src/main.js';
import { readAccountSeries } from '../../src/status/account-series.js';
import { readStatusReport, reportAccounts } from '../../src/status/report.js';
import type { StatusReport } from '../../src/status/report-types.js';
import { type AccountsHarness, startAccountsHarness } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';

/** 55 registered accounts and default: above the overview's 50. */
const NAMES = Array.from({ length: 55 }, (_, i) => `acct${String(i + 1).padStart(2, '0')}`);
const RESOURCES = ['jobs', 'job_posts', 'tracking_links', 'job_boards', 'sources', 'referrers'];

let h: AccountsHarness;
let redis: Redis;

/**
 * Runs of every account and built-in resource, written as runs write them:
 * an older success, then the newest run. The n-th account of `accounts`
 * failed its jobs when n is a multiple of 5 (acct05, acct10, …), and has a
 * job_posts run in flight when n is a multiple of 7 (acct07, …; a checkpoint
 * is pending for acct07's).
 */
async function seedRuns(accounts: readonly string[]): Promise<void> {
  await sql`
    insert into hiresync.data_sync_runs (account, resource, mode, started_at, finished_at, pages, records, outcome, error)
    select a.account, r.resource, 'full', now() - interval '2 hours' + k * interval '1 hour' + a.n * interval '1 second',
      case when k = 1 and r.resource = 'job_posts' and a.n % 7 = 0 then null
        else now() - interval '2 hours' + k * interval '1 hour' + a.n * interval '1 second' + interval '5 seconds' end,
      2, 40,
      case when k = 1 and r.resource = 'jobs' and a.n % 5 = 0 then 'failed'
        when k = 1 and r.resource = 'job_posts' and a.n % 7 = 0 then 'running' else 'succeeded' end,
      case when k = 1 and r.resource = 'jobs' and a.n % 5 = 0 then '500 from /v3/jobs: try again later' end
    from unnest(${accounts}::text[]) with ordinality a(account, n),
      unnest(${RESOURCES}::text[]) r(resource), generate_series(0, 1) k
    order by a.n, r.resource, k`.execute(h.database.db);
  await redis.set(
    `${h.env.HIRESYNC_REDIS_PREFIX}:checkpoint:${runKey('acct07', 'job_posts')}`,
    JSON.stringify({
      resource: 'job_posts',
      runId: '1',
      mode: 'full',
      nextUrl: 'https://example.test/v3/job_posts?page=3',
      pagesDone: 2,
      updatedAt: '2026-05-01T12:00:00.000Z',
      walk: 0,
    }),
  );
}

/** The counts of {@link costOf} under way. */
const counting = new Set<{ statements: number }>();

// Counted by a wrapper of pg's Client.prototype.query installed before any
// connection is made, for good: src/warehouse/database.ts wraps a
// connection's query with the one it finds when it first hands it out, so a
// wrapper installed for a while would miss the connections made before it.
// A new connection sends no statement of its own (its session defaults are
// startup options): how many connections a pool opens depends on timing, not
// on the accounts, and changes no count.
const clientPrototype = pg.Client.prototype as unknown as {
  query: (...args: unknown[]) => unknown;
};
const clientQuery = clientPrototype.query;
clientPrototype.query = function (this: unknown, ...args: unknown[]) {
  for (const c of counting) c.statements += 1;
  return clientQuery.apply(this, args);
};

/** The statements node-postgres sends and the commands `redis` sends while `work` runs. */
async function costOf(
  work: () => Promise<unknown>,
): Promise<{ statements: number; commands: number }> {
  const cost = { statements: 0, commands: 0 };
  const send = redis.sendCommand;
  counting.add(cost);
  redis.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    cost.commands += 1;
    return send.apply(redis, args);
  };
  try {
    await work();
  } finally {
    counting.delete(cost);
    redis.sendCommand = send;
  }
  return cost;
}

async function hiresync(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, h.env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

beforeAll(async () => {
  h = await startAccountsHarness({ accounts: NAMES });
  redis = new Redis(inject('redisUrl'));
  await seedRuns([...NAMES, 'default']);
}, 180_000);

afterAll(async () => {
  clientPrototype.query = clientQuery;
  redis?.disconnect();
  await h?.close();
});

describe('status, accounts list and the metrics series at many accounts', () => {
  it('read 56 accounts in as many statements and Redis commands as 4', async () => {
    const prefix = h.env.HIRESYNC_REDIS_PREFIX ?? '';
    const registered = await h.store.list();
    const all = reportAccounts(registered, { authMode: 'client_credentials', configured: true });
    const report = (accounts: typeof all) =>
      readStatusReport(h.database.db, redis, prefix, accounts, {
        updatedLookbackMs: 300_000,
        resources: RESOURCES,
      });
    await report(all);
    const few = await costOf(() => report(all.slice(0, 4)));
    const many = await costOf(() => report(all));
    expect(many).toEqual(few);
    expect(few.statements).toBeGreaterThan(0);
    expect(few.statements).toBeLessThanOrEqual(16);
    expect(few.commands).toBeGreaterThan(0);
    // The checkpoints and run locks (2 MGETs); the workers (TIME, ZREVRANGE, and an
    // MGET once one has run); the run queue through BullMQ (its version check,
    // getJobCounts, the schedulers' range, then one HGETALL per scheduler: none
    // here, no worker keeps schedules), and the newest jobs of each of four
    // states, for the failed attempts retried from their checkpoints (one range
    // each, their jobs' hashes then: none here).
    expect(few.commands).toBeLessThanOrEqual(11);
    // What it read is there: the run in flight, its checkpoint, the failure.
    const full = await report(all);
    expect(full.accounts).toHaveLength(56);
    const acct07 = full.accounts.find((a) => a.name === 'acct07');
    expect(acct07?.resources.find((r) => r.resource === 'job_posts')).toMatchObject({
      state: 'running',
      checkpoint: { runId: '1', pagesDone: 2 },
      lastFinished: { outcome: 'succeeded' },
    });
    expect(full.check.problems.filter((p) => p.kind === 'failed')).toHaveLength(11);

    const series = () => readAccountSeries(h.database.db);
    await series();
    const seriesOfMany = await costOf(series);
    expect((await series())?.lastRuns).toHaveLength(56 * RESOURCES.length);
    const others = NAMES.slice(3);
    await sql`update hiresync.accounts set state = 'disabled' where name = any(${others}::text[])`.execute(
      h.database.db,
    );
    try {
      const seriesOfFew = await costOf(series);
      expect((await series())?.lastRuns).toHaveLength(4 * RESOURCES.length);
      expect(seriesOfMany).toEqual(seriesOfFew);
      expect(seriesOfFew.statements).toBeGreaterThan(0);
    } finally {
      await sql`update hiresync.accounts set state = 'enabled' where name = any(${others}::text[])`.execute(
        h.database.db,
      );
    }
  });

  it('status and accounts list cost as many statements for 256 accounts as for 56', async () => {
    const commands = () =>
      costOf(async () => {
        expect((await hiresync(['status'])).code).toBe(0);
        expect((await hiresync(['accounts', 'list'])).code).toBe(0);
      });
    await commands();
    const of56 = await commands();
    // 200 more registrations, as rows (what the commands read of an account), with runs.
    const bulk = Array.from({ length: 200 }, (_, i) => `bulk${i + 1}`);
    await sql`
      insert into hiresync.accounts (name, auth_mode, base_url, auth_url, client_id, secret, state)
      select b.name, a.auth_mode, a.base_url, a.auth_url, a.client_id, a.secret, a.state
      from hiresync.accounts a, unnest(${bulk}::text[]) b(name) where a.name = 'acct01'`.execute(
      h.database.db,
    );
    try {
      await seedRuns(bulk);
      const of256 = await commands();
      expect(of256.statements).toBe(of56.statements);
      expect(of256.statements).toBeGreaterThan(0);
      expect(of256.statements).toBeLessThanOrEqual(40);
      expect((await hiresync(['status', '--json'])).stdout).toContain('"bulk200"');
    } finally {
      await sql`delete from hiresync.data_sync_runs where account = any(${bulk}::text[])`.execute(
        h.database.db,
      );
      await sql`delete from hiresync.accounts where name = any(${bulk}::text[])`.execute(
        h.database.db,
      );
    }
  });
});

describe('summaries first, detail on request, above 50 accounts', () => {
  it('status prints an overview of the 56 accounts instead of a line per account and resource', async () => {
    const { code, stdout } = await hiresync(['status']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^56 accounts: 56 enabled$/m);
    expect(stdout).toMatch(/^resources they sync: 317 ok, 8 running, 11 failed$/m);
    expect(stdout).toMatch(/^failing resources \(accounts\): jobs 11 failed$/m);
    expect(stdout).toMatch(/^accounts that need action: 11 /m);
    expect(stdout).toMatch(/^acct05\s+enabled\s+failed: jobs$/m);
    expect(stdout).toMatch(/^stalest: the 10 accounts/m);
    expect(stdout).not.toMatch(/^account\s+resource\s+last run/m);
    expect(stdout.split('\n').length).toBeLessThan(60);
  });

  it('status prints each resource of the named accounts with --account, and of every account with -v', async () => {
    const named = await hiresync(['status', '--account', 'acct05,acct07']);
    expect(named.code).toBe(0);
    expect(named.stdout).toMatch(/^account\s+resource\s+last run/);
    expect(named.stdout).toMatch(
      /^acct05\s+jobs\s+full\s+.*\sfailed\s.*500 from \/v3\/jobs: try again later$/m,
    );
    expect(named.stdout).toMatch(
      /^acct07\s+job_posts\s+full\s+.*\srunning\s.*yes: run 1, 2 pages done/m,
    );
    const rows = (text: string) => text.split('\n').filter((l) => /^(acct\d\d|default)\s/.test(l));
    expect(rows(named.stdout)).toHaveLength(2 * RESOURCES.length);
    const every = await hiresync(['status', '-v']);
    expect(rows(every.stdout)).toHaveLength(56 * RESOURCES.length);
    const summary = await hiresync(['status', '--summary']);
    expect(rows(summary.stdout)).toHaveLength(56);
  });

  it('status --json keeps every account and resource, and adds the overview', async () => {
    const report = JSON.parse((await hiresync(['status', '--json'])).stdout) as StatusReport;
    expect(report.accounts).toHaveLength(56);
    expect(report.accounts.every((a) => a.resources.length === RESOURCES.length)).toBe(true);
    expect(report.overview).toMatchObject({
      accounts: 56,
      accountStates: { enabled: 56 },
      failingResources: [{ resource: 'jobs', failed: 11, notPermitted: 0 }],
    });
    expect(report.overview.needingAction).toHaveLength(11);
  });

  it('accounts list prints an overview, every row with --all, and every account with --json', async () => {
    const overview = await hiresync(['accounts', 'list']);
    expect(overview.code).toBe(0);
    expect(overview.stdout).toMatch(/^56 accounts: 56 enabled$/m);
    expect(overview.stdout).toMatch(/^auth modes: 56 client_credentials$/m);
    expect(overview.stdout).toMatch(/^accounts that need action: none$/m);
    expect(overview.stdout).toContain("'hiresync accounts list --all'");
    const rows = (text: string) => text.split('\n').filter((l) => /^(acct\d\d|default)\s/.test(l));
    expect(rows(overview.stdout)).toHaveLength(10);
    const all = await hiresync(['accounts', 'list', '--all']);
    expect(rows(all.stdout)).toHaveLength(56);
    expect(all.stdout).toMatch(
      /^acct01\s+client_credentials\s+acct01\s+enabled\s+\d{4}-\d\d-\d\d \d\d:/m,
    );
    const json = JSON.parse((await hiresync(['accounts', 'list', '--json'])).stdout) as {
      accounts: Array<{ name: string; lastSuccess: string | null }>;
    };
    expect(json.accounts).toHaveLength(56);
    expect(json.accounts.every((a) => a.lastSuccess !== null)).toBe(true);
  });
});
