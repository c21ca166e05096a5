// HIRESYNC_ERASE_DELETED_AFTER: the worker's daily erasure of the records
// deleted upstream longer ago than the setting, across every account and
// resource, history and rejected records included, each logged; unset, its
// BullMQ job scheduler is removed.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { erasableResourcesOf } from '../../src/commands/erasable-resources.js';
import {
  ERASE_QUEUE,
  ERASE_SCHEDULER,
  eraseDeletedOnce,
  startEraseSchedule,
} from '../../src/queue/erase-schedule.js';
import { ResourceLock } from '../../src/warehouse/runs/resource-lock.js';
import type { Database } from '../../src/warehouse/tables.js';
import { type AccountsHarness, targetsOf } from '../support/accounts-harness.js';
import { captureLogger } from '../support/capture-logger.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { defer, accounts, cli } = cleanupAfterEach();

const DAY_MS = 86_400_000;

/** Rows of `table` (a shared table, by its account view's name) of `account` with `id`. */
async function rowsOf(db: Kysely<Database>, table: string, account: string, id: number) {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from ${sql.table(`hiresync.data_${table}`)}
    where account = ${account} and id = ${id}`.execute(db);
  return rows[0]?.n ?? 0;
}

async function tracesOf(db: Kysely<Database>, account: string, id: number) {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from hiresync.data_rejected_records
    where account = ${account} and resource = 'jobs' and raw ->> 'id' = ${String(id)}`.execute(db);
  return {
    rows: await rowsOf(db, 'jobs', account, id),
    versions: await rowsOf(db, 'jobs_history', account, id),
    rejected: rows[0]?.n ?? 0,
  };
}

/**
 * default and acme synced in full, then jobs removed upstream and synced
 * again (soft-deleted, with a deletion version), their deletion moved back
 * by the given days; each deleted job also has a rejected record.
 */
async function deletedJobs(
  h: AccountsHarness,
  deletions: ReadonlyArray<{ account: string; index: number; daysAgo: number }>,
) {
  const both = targetsOf(['default', 'acme'], ['jobs']);
  await h.sync(both, 'full');
  const ids = deletions.map((d) => h.sim.datasetOf(d.account).remove('jobs', d.index));
  await h.sync(both, 'full');
  const db = h.database.db;
  for (const [i, { account, daysAgo }] of deletions.entries()) {
    const id = ids[i] as number;
    await sql`update hiresync.data_jobs set deleted_at = now() - ${daysAgo} * interval '1 day'
      where account = ${account} and id = ${id} and deleted_at is not null`.execute(db);
    await sql`insert into hiresync.data_rejected_records (account, resource, run_id, page, raw, record_key, reason)
      select ${account}, 'jobs', max(id), 1, ${JSON.stringify({ id, title: 'refused' })}::jsonb, ${`test:${id}`}, 'test'
      from hiresync.data_sync_runs where account = ${account}`.execute(db);
    expect(await tracesOf(db, account, id)).toEqual({ rows: 1, versions: 2, rejected: 1 });
  }
  return ids;
}

async function loggedErasures(db: Kysely<Database>) {
  const { rows } = await sql<{
    account: string;
    record_id: string;
    rows_erased: number;
    history_versions_erased: number;
    rejected_records_erased: number;
    origin: string;
    note: string;
  }>`select account, record_id::text, rows_erased, history_versions_erased,
      rejected_records_erased, origin, note from hiresync.erasures order by account, record_id`.execute(
    db,
  );
  return rows;
}

describe('the erasure of records deleted upstream (HIRESYNC_ERASE_DELETED_AFTER)', () => {
  it('erases, across accounts, only the records deleted longer ago than the setting, with their history and rejected records, logging each and a line per account and resource', async () => {
    const h = await accounts({ accounts: ['acme'] });
    const db = h.database.db;
    const [old, recent, acmeOld] = await deletedJobs(h, [
      { account: 'default', index: 5, daysAgo: 40 },
      { account: 'default', index: 6, daysAgo: 10 },
      { account: 'acme', index: 7, daysAgo: 31 },
    ]);
    const live = {
      default: await h.liveIds('default', 'jobs'),
      acme: await h.liveIds('acme', 'jobs'),
    };
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    defer(() => redis.disconnect());
    const prefix = h.env.HIRESYNC_REDIS_PREFIX as string;
    const log = captureLogger('info');
    const deps = {
      db,
      resourcesOf: ({ schema }: { schema: string }) => erasableResourcesOf(db, schema),
      logger: log.logger,
    };

    // The worker's schedule: its first job runs at once.
    const schedule = await startEraseSchedule(redis, prefix, { ...deps, afterMs: 30 * DAY_MS });
    defer(() => schedule.close());
    const logged = await waitFor(async () => {
      const rows = await loggedErasures(db);
      return rows.length === 2 && rows;
    });
    await waitFor(async () => log.text().includes('erasure of records deleted upstream done'));

    const note =
      /^deleted upstream before \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \(HIRESYNC_ERASE_DELETED_AFTER=30d\)$/;
    expect(logged).toEqual(
      [
        { account: 'acme', id: acmeOld },
        { account: 'default', id: old },
      ].map(({ account, id }) => ({
        account,
        record_id: String(id),
        rows_erased: 1,
        history_versions_erased: 2,
        rejected_records_erased: 1,
        origin: 'deleted_after',
        note: expect.stringMatching(note),
      })),
    );
    expect(await tracesOf(db, 'default', old as number)).toEqual({
      rows: 0,
      versions: 0,
      rejected: 0,
    });
    expect(await tracesOf(db, 'acme', acmeOld as number)).toEqual({
      rows: 0,
      versions: 0,
      rejected: 0,
    });
    // Deleted 10 days ago: kept, deletion version and all; live records untouched.
    expect(await tracesOf(db, 'default', recent as number)).toEqual({
      rows: 1,
      versions: 2,
      rejected: 1,
    });
    expect(await h.liveIds('default', 'jobs')).toEqual(live.default);
    expect(await h.liveIds('acme', 'jobs')).toEqual(live.acme);

    const lines = log
      .lines()
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'records deleted upstream erased');
    expect(lines).toEqual(
      ['default', 'acme'].map((account) =>
        expect.objectContaining({
          account,
          resource: 'jobs',
          records: 1,
          rows: 1,
          historyVersions: 2,
          rejectedRecords: 1,
          before: expect.any(String),
        }),
      ),
    );
    await schedule.close();

    // Turned off: the scheduler and its next job are removed.
    const queue = new Queue(ERASE_QUEUE, { connection: redis, prefix });
    defer(() => queue.close());
    expect((await queue.getJobSchedulers()).map((s) => s.key)).toEqual([ERASE_SCHEDULER]);
    await (await startEraseSchedule(redis, prefix, { ...deps, afterMs: undefined })).close();
    expect(await queue.getJobSchedulers()).toEqual([]);
    expect(await queue.getDelayedCount()).toBe(0);
  });

  it('leaves an (account, resource) a run holds past the wait to a retry of only that one, erasing the others', async () => {
    const h = await accounts({ accounts: ['acme'] });
    const db = h.database.db;
    const [old, acmeOld] = await deletedJobs(h, [
      { account: 'default', index: 5, daysAgo: 40 },
      { account: 'acme', index: 7, daysAgo: 40 },
    ]);
    const deps = {
      db,
      afterMs: 30 * DAY_MS,
      resourcesOf: ({ schema }: { schema: string }) => erasableResourcesOf(db, schema),
      logger: captureLogger('info').logger,
      waitMs: 200,
    };
    const run = await new ResourceLock(db).tryAcquire('acme:jobs');
    defer(() => run?.release());

    const first = await eraseDeletedOnce(deps);
    const short = first.filter((r) => r.problem);
    expect(short).toEqual([
      expect.objectContaining({
        account: 'acme',
        resource: 'jobs',
        records: 0,
        problem: {
          kind: 'busy',
          message: expect.stringContaining('a run of jobs of account acme holds its resource'),
        },
      }),
    ]);
    expect(await tracesOf(db, 'default', old as number)).toEqual({
      rows: 0,
      versions: 0,
      rejected: 0,
    });
    expect(await tracesOf(db, 'acme', acmeOld as number)).toEqual({
      rows: 1,
      versions: 2,
      rejected: 1,
    });

    await run?.release();
    const retry = await eraseDeletedOnce(deps, [{ account: 'acme', resource: 'jobs' }]);
    expect(retry).toEqual([
      {
        account: 'acme',
        resource: 'jobs',
        records: 1,
        rows: 1,
        historyVersions: 2,
        rejectedRecords: 1,
      },
    ]);
    expect(await tracesOf(db, 'acme', acmeOld as number)).toEqual({
      rows: 0,
      versions: 0,
      rejected: 0,
    });
  });

  it('the worker keeps the schedule while the setting is set, and removes it once unset', async () => {
    const h = await accounts({ accounts: ['acme'], env: { HIRESYNC_RESOURCES: 'jobs' } });
    const db = h.database.db;
    const [old] = await deletedJobs(h, [{ account: 'default', index: 5, daysAgo: 40 }]);
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    defer(() => redis.disconnect());
    const queue = new Queue(ERASE_QUEUE, {
      connection: redis,
      prefix: h.env.HIRESYNC_REDIS_PREFIX,
    });
    defer(() => queue.close());

    const on = cli(['worker'], { ...h.env, HIRESYNC_ERASE_DELETED_AFTER: '30d' });
    await waitFor(async () => (await rowsOf(db, 'jobs', 'default', old as number)) === 0, 30_000);
    await waitFor(
      async () => on.stdout().includes('erasure of records deleted upstream done'),
      30_000,
    );
    on.child.kill('SIGTERM');
    expect(await on.exit).toBe(0);
    expect(on.stdout()).toContain('"eraseDeletedAfter":"30d"');
    expect((await queue.getJobSchedulers()).map((s) => s.key)).toEqual([ERASE_SCHEDULER]);
    expect(await loggedErasures(db)).toEqual([
      expect.objectContaining({
        account: 'default',
        record_id: String(old),
        origin: 'deleted_after',
      }),
    ]);

    const off = cli(['worker'], h.env);
    await waitFor(async () => off.stdout().includes('"msg":"worker started"'), 30_000);
    off.child.kill('SIGTERM');
    expect(await off.exit).toBe(0);
    expect(off.stdout()).toContain(
      'the erasure of records deleted upstream is no longer scheduled',
    );
    expect(await queue.getJobSchedulers()).toEqual([]);
  });
});
