import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { registryOf } from '../../src/commands/account-options.js';
import { scheduleTargetsOf } from '../../src/commands/worker.js';
import type { ResourceName } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/types.js';
import { main } from '../../src/main.js';
import { runOnce } from '../../src/queue/run-once.js';
import type { SyncJob } from '../../src/queue/sync-job.js';
import { createSyncProcessor } from '../../src/queue/sync-processor.js';
import type { ScheduleTarget } from '../../src/queue/upsert-schedules.js';
import { checkConnections } from '../../src/status/preflight.js';
import type { Database } from '../../src/warehouse/tables.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { harness, accounts, defer } = cleanupAfterEach();

/** A no-op incremental run may send this many statements at most (issue 23; one fewer since issue 30: no `set search_path`). */
const MOST_STATEMENTS = 7;

/**
 * What `hiresync sync` of one resource may send for a no-op run (issue 35),
 * besides the checks the worker also makes, once, at its start (see
 * {@link workerStartStatements}).
 */
const MOST_CLI_STATEMENTS = 8;

/**
 * Records the text of every statement a pg client of this process sends
 * while `during` runs: installed before the app is made, so that it sees
 * every connection of its pool.
 */
function countStatements() {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  let sent: string[] | undefined;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: unknown })?.text;
    sent?.push(String(text).replace(/\s+/g, ' ').trim().slice(0, 90));
    return query.apply(this, args);
  };
  defer(() => {
    proto.query = query;
  });
  return {
    async during<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
      sent = [];
      try {
        const result = await work();
        return { result, statements: sent };
      } finally {
        sent = undefined;
      }
    },
  };
}

/** The tables a run of `resource` writes: its own, its history, and for tracking links the nested ones. */
function tablesOf(resource: ResourceName): string[] {
  const own = [resource, `${resource}_history`];
  if (resource !== 'tracking_links') return own;
  const nested = ['job_boards', 'referrers', 'sources'];
  return [...own, ...nested, ...nested.map((table) => `${table}_history`)];
}

/**
 * Every row version of the tables a run of `resource` writes: a row's xmin
 * changes with any update, however small (synced_at, last_seen_run_id).
 */
async function rowVersions(db: Kysely<Database>, resource: ResourceName, account = 'default') {
  const versions: Record<string, string[]> = {};
  for (const table of tablesOf(resource)) {
    // The row versions of the shared table behind the account's view (a view has no xmin).
    const { rows } = await sql<{ v: string }>`
      select concat_ws(':', id, xmin) as v from ${sql.id('hiresync', `data_${table}`)}
      where account = ${account} order by 1`.execute(db);
    versions[table] = rows.map((r) => r.v);
  }
  return versions;
}

/** The run's row in sync_runs. */
async function runRow(db: Kysely<Database>, runId: string) {
  return db
    .withSchema('public')
    .selectFrom('sync_runs')
    .select(['mode', 'pages', 'records', 'outcome', 'max_id', 'api_started_at'])
    .where('id', '=', runId)
    .executeTakeFirstOrThrow();
}

/** Runs `targets` to their end in `app` and returns the summaries. */
async function runAll(app: App, targets: readonly ScheduleTarget[]) {
  const outcomes = await runOnce(app, targets, 'auto');
  return outcomes.map((outcome) => {
    if (!outcome.ok) throw new Error(`${outcome.resource}: ${outcome.error}`);
    return outcome.summary;
  });
}

/**
 * A run as the worker's incremental schedule starts it (a job of origin
 * `schedule`), processed by the app's sync processor in this process.
 */
async function scheduledRun(app: App, target: ScheduleTarget) {
  const process = createSyncProcessor({
    accounts: app.contextOf,
    runLock: app.runLock,
    logger: app.logger,
    shutdown: app.shutdown.signal,
  });
  const job = {
    id: `scheduled-${target.account}-${target.resource}`,
    data: {
      account: target.account,
      resource: target.resource,
      requested: 'auto',
      origin: 'schedule',
    },
    attemptsMade: 0,
    opts: {},
  } as unknown as SyncJob;
  const result = await process(job);
  if ('skipped' in result) throw new Error(`${target.resource}: skipped, ${result.skipped}`);
  return [result];
}

describe('a no-op incremental run (the API has nothing new), as the schedule starts it', () => {
  for (const resource of ['jobs', 'tracking_links'] as const) {
    it(`of ${resource} sends at most ${MOST_STATEMENTS} statements and rewrites no row and no history row`, async () => {
      const t = await harness({
        simulator: { dataset: { counts: { [resource]: 300 } } },
        env: { HIRESYNC_PER_PAGE: '100' },
      });
      const counter = countStatements();
      const app = t.app();
      defer(() => app.close());
      const [full] = await runAll(app, [{ account: 'default', resource }]);
      expect(full?.mode).toBe('full');
      const before = await rowVersions(t.database.db, resource);

      const { result, statements } = await counter.during(() =>
        scheduledRun(app, { account: 'default', resource }),
      );

      const [noop] = result;
      expect(noop).toMatchObject({ mode: 'incremental', pages: 1, records: 0 });
      expect(statements.length, statements.join('\n')).toBeLessThanOrEqual(MOST_STATEMENTS);
      expect(await rowVersions(t.database.db, resource)).toEqual(before);
      // The run is recorded all the same: its page, the highest id it saw, the API's clock.
      const run = await runRow(t.database.db, noop?.runId as string);
      expect(run).toMatchObject({
        mode: 'incremental',
        pages: 1,
        records: '0',
        outcome: 'succeeded',
      });
      expect(run.max_id).toBe(String(t.sim.dataset.idOf(resource, 299)));
      expect(run.api_started_at).not.toBeNull();
    });
  }

  it(`of a registered account sends at most ${MOST_STATEMENTS} statements and rewrites no row`, async () => {
    const t = await accounts({
      accounts: ['acme'],
      records: 300,
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    const counter = countStatements();
    const app = t.app();
    defer(() => app.close());
    const targets = [
      { account: 'acme', resource: 'jobs' },
      { account: 'acme', resource: 'tracking_links' },
    ];
    await runAll(app, targets);
    for (const target of targets) {
      const before = await rowVersions(t.database.db, target.resource, 'acme');
      const { result, statements } = await counter.during(() => scheduledRun(app, target));
      expect(result[0]).toMatchObject({ mode: 'incremental', pages: 1, records: 0 });
      expect(statements.length, statements.join('\n')).toBeLessThanOrEqual(MOST_STATEMENTS);
      expect(await rowVersions(t.database.db, target.resource, 'acme')).toEqual(before);
    }
  });

  it('with the updated filter, leaves alone the records its window holds that are stored already', async () => {
    const t = await harness({
      simulator: { dataset: { counts: { jobs: 300 } } },
      env: {
        HIRESYNC_PER_PAGE: '100',
        HIRESYNC_UPDATED_FILTER: 'updated_at=gte|{since}',
        HIRESYNC_UPDATED_LOOKBACK: '10m',
      },
    });
    const counter = countStatements();
    const app = t.app();
    defer(() => app.close());
    await runAll(app, [{ account: 'default', resource: 'jobs' }]);
    // Three records change: the next run stores them, the one after finds them stored.
    for (const index of [10, 150, 290]) t.sim.dataset.touch('jobs', index);
    const [changed] = await runAll(app, [{ account: 'default', resource: 'jobs' }]);
    expect(changed).toMatchObject({ mode: 'incremental', records: 3 });
    const before = await rowVersions(t.database.db, 'jobs');

    const { result, statements } = await counter.during(() =>
      scheduledRun(app, { account: 'default', resource: 'jobs' }),
    );

    expect(result[0]).toMatchObject({ mode: 'incremental', pages: 1, records: 0 });
    expect(statements.length, statements.join('\n')).toBeLessThanOrEqual(MOST_STATEMENTS);
    expect(await rowVersions(t.database.db, 'jobs')).toEqual(before);
  });
});

type StatementCounter = ReturnType<typeof countStatements>;

/** `hiresync sync ARGS` in this process, as the bin runs it. */
async function syncCommand(env: Record<string, string>, ...args: string[]) {
  const io = captureIo();
  const code = await main(['sync', ...args], env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/**
 * The statements the worker sends too, once, when it starts (src/commands/worker.ts):
 * its connection checks, then the enabled accounts and their settings, which it
 * schedules. `sync` makes the same checks and reads before its runs.
 */
async function workerStartStatements(config: Config, app: App, counter: StatementCounter) {
  const { statements } = await counter.during(async () => {
    await checkConnections(app.db, app.redis, { prefix: config.redisPrefix, claimPrefix: true });
    await scheduleTargetsOf(app);
  });
  return statements;
}

/** `sent` less one statement of the same text for each of `also`. */
function besides(sent: readonly string[], also: readonly string[]): string[] {
  const left = [...also];
  return sent.filter((statement) => {
    const at = left.indexOf(statement);
    if (at < 0) return true;
    left.splice(at, 1);
    return false;
  });
}

/** The account's last run of `resource`, as sync_runs records it. */
async function lastRun(db: Kysely<Database>, account: string, resource: ResourceName) {
  const { rows } = await sql<{ mode: string; pages: number; records: string; outcome: string }>`
    select mode, pages, records, outcome from hiresync.data_sync_runs
    where account = ${account} and resource = ${resource} order by id desc limit 1`.execute(db);
  return rows[0];
}

describe('a no-op incremental run, as `hiresync sync` of one resource starts it', () => {
  const cases = [
    {
      account: 'default',
      resource: 'tracking_links',
      args: ['--account', 'default', '--resource', 'tracking_links'],
    },
    { account: 'acme', resource: 'jobs', args: ['--account', 'acme', '--resource', 'jobs'] },
    // Every enabled account, acme the only one (the environment's credentials left out).
    { account: 'acme', resource: 'jobs', args: ['--resource', 'jobs'], withoutDefault: true },
  ] as const;
  for (const { account, resource, args, ...only } of cases) {
    it(`of ${account}'s ${resource} (sync ${args.join(' ')}) sends at most ${MOST_CLI_STATEMENTS} statements besides the checks of the worker's start, and rewrites no row`, async () => {
      const t = await accounts({
        accounts: ['acme'],
        records: 300,
        withoutDefault: 'withoutDefault' in only,
        env: { HIRESYNC_PER_PAGE: '100' },
      });
      const counter = countStatements();
      const full = await syncCommand(t.env, ...args);
      expect(full.code, full.stderr).toBe(0);
      const before = await rowVersions(t.database.db, resource, account);
      const app = t.app({ registry: registryOf(t.config) });
      defer(() => app.close());
      const atStart = await workerStartStatements(t.config, app, counter);

      const { result, statements } = await counter.during(() => syncCommand(t.env, ...args));

      expect(result.code, result.stderr).toBe(0);
      // What is counted: every statement of the command but those of the worker's start.
      const run = besides(statements, atStart);
      expect(run.length, run.join('\n')).toBeLessThanOrEqual(MOST_CLI_STATEMENTS);
      expect(await rowVersions(t.database.db, resource, account)).toEqual(before);
      expect(await lastRun(t.database.db, account, resource)).toMatchObject({
        mode: 'incremental',
        pages: 1,
        records: '0',
        outcome: 'succeeded',
      });
    });
  }
});

describe('an incremental run whose page holds records that are not stored as they are', () => {
  it('writes those records (new, changed, or deleted since) and leaves the others of the page alone', async () => {
    const t = await harness({
      simulator: { dataset: { counts: { jobs: 300 } } },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    await t.sync(['jobs']);
    const ds = t.sim.dataset;
    const touched = ds.touch('jobs', 290);
    const added = ds.grow('jobs', 5);
    // A row of the first page that a sweep had marked deleted: the API lists it again.
    const undeleted = ds.idOf('jobs', 280);
    await t.database.db
      .withSchema('public')
      .updateTable('jobs')
      .set({ deleted_at: sql<string>`now()` })
      .where('id', '=', String(undeleted))
      .execute();
    const before = await rowVersions(t.database.db, 'jobs');

    const [outcome] = await t.sync(['jobs']);

    // The first page reaches ids already stored: the run stops there.
    expect(outcome).toMatchObject({
      ok: true,
      summary: { mode: 'incremental', pages: 1, records: 7 },
    });
    const after = await rowVersions(t.database.db, 'jobs');
    const rewritten = (table: string) => {
      const old = new Set(before[table]);
      return (after[table] ?? []).filter((v) => !old.has(v)).map((v) => Number(v.split(':')[0]));
    };
    const written = [touched, undeleted, ...added].sort((a, b) => a - b);
    expect(rewritten('jobs').sort((a, b) => a - b)).toEqual(written);
    // One version each: the change, the return from the deletion, the new records.
    expect(rewritten('jobs_history').sort((a, b) => a - b)).toEqual(
      [touched, touched, undeleted, undeleted, ...added].sort((a, b) => a - b),
    );
    expect(await t.liveIds('jobs')).toEqual(t.expectedIds('jobs'));
    const row = await t.database.db
      .withSchema('public')
      .selectFrom('jobs')
      .select('data')
      .where('id', '=', String(touched))
      .executeTakeFirstOrThrow();
    expect(row.data).toEqual(ds.record('jobs', 290));
  });

  it('writes a tracking link whose nested job board differs from its row, and the board with it', async () => {
    const t = await harness({
      simulator: { dataset: { counts: { tracking_links: 300 } } },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    await t.sync(['tracking_links']);
    const ds = t.sim.dataset;
    const firstPage = new Set(
      Array.from({ length: 100 }, (_, k) => String(ds.idOf('tracking_links', 299 - k))),
    );
    const links = await t.database.db
      .withSchema('public')
      .selectFrom('tracking_links')
      .select(['id', 'job_board_id'])
      .where('job_board_id', 'is not', null)
      .execute();
    const board = links.find((l) => firstPage.has(l.id))?.job_board_id as string;
    const { raw } = await t.database.db
      .withSchema('public')
      .selectFrom('job_boards')
      .select('raw')
      .where('id', '=', board)
      .executeTakeFirstOrThrow();
    await sql`update public.job_boards set company_name = 'stale',
      raw = raw || '{"company_name": "stale"}' where id = ${board}`.execute(t.database.db);
    const before = await rowVersions(t.database.db, 'tracking_links');

    const [outcome] = await t.sync(['tracking_links']);

    expect(outcome).toMatchObject({ ok: true, summary: { mode: 'incremental', pages: 1 } });
    const after = await rowVersions(t.database.db, 'tracking_links');
    const old = new Set(before.tracking_links);
    const rewritten = (after.tracking_links ?? [])
      .filter((v) => !old.has(v))
      .map((v) => v.split(':')[0] as string);
    // The links of the first page that carry the board, and only those.
    const carrying = links.filter((l) => firstPage.has(l.id) && l.job_board_id === board);
    expect(rewritten.sort()).toEqual(carrying.map((l) => l.id).sort());
    const restored = await t.database.db
      .withSchema('public')
      .selectFrom('job_boards')
      .select(['raw', 'company_name'])
      .where('id', '=', board)
      .executeTakeFirstOrThrow();
    expect(restored.raw).toEqual(raw);
    expect(restored.company_name).not.toBe('stale');
  });
});
