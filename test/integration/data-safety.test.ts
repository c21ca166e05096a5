import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { DeletionGuardError } from '../../src/errors.js';
import { deletePrefix } from '../../src/queue/redis.js';
import { runOnce } from '../../src/queue/run-once.js';
import { BUILT_IN_RESOURCES, RESOURCE_NAMES } from '../../src/resources/index.js';
import { jobs } from '../../src/resources/jobs.js';
import { defineListResource } from '../../src/resources/json-resource.js';
import { trackingLinks } from '../../src/resources/tracking-links.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { ResourceLock, ResourceLockLostError } from '../../src/warehouse/runs/resource-lock.js';
import { KyselyRunStore } from '../../src/warehouse/runs/run-store.js';
import {
  createRun,
  finishRun,
  getRun,
  sweepDeletions,
} from '../../src/warehouse/runs/sync-runs.js';
import { startSyncHarness } from '../support/sync-harness.js';
import { useEmptyWarehouse } from '../support/warehouse-fixture.js';

// Every test starts from empty tables: sweeps and guards count a whole table.
const fx = useEmptyWarehouse();

let nextId = 6_000_000_000;
function link(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  nextId += 1;
  return {
    id: nextId,
    token: `tok${nextId}`,
    credited_to: { id: 70, name: 'Ada', employee_id: null },
    source: { id: 80, public_name: 'LinkedIn' },
    job_board: { id: 90, company_name: 'Acme', url_token: 'acme' },
    created_at: '2024-03-01T10:00:00Z',
    updated_at: '2024-03-02T10:00:00Z',
    ...overrides,
  };
}

function writeLinks(records: unknown[], runId: string, pageNumber = 1, body?: string) {
  return fx.writeBody(trackingLinks, body ?? JSON.stringify(records), runId, pageNumber);
}

function writeJobs(body: string, runId: string, pageNumber = 1) {
  return fx.writeBody(jobs, body, runId, pageNumber);
}

const deletedIds = (table: 'tracking_links' | 'jobs') => fx.deletedIds(table);

const fullRun = () => createRun(fx.db, 'default', { resource: 'tracking_links', mode: 'full' });

describe('the deletion sweep against overlapping runs', () => {
  it('never marks a row that another run wrote after the sweeping run began', async () => {
    const links = [link(), link(), link(), link()];
    const seed = await fullRun();
    await writeLinks(links, seed);
    await finishRun(fx.db, 'default', seed, { outcome: 'succeeded' });
    // Run A starts; run B (another deployment, another Redis) starts and
    // writes everything; A has seen only the first link when it sweeps.
    const a = await fullRun();
    const b = await fullRun();
    await writeLinks(links, b);
    await writeLinks([links[0]], a);
    expect(
      await sweepDeletions(fx.db, 'default', a, { table: 'tracking_links', maxDeleteFraction: 1 }),
    ).toBe(0);
    expect(await deletedIds('tracking_links')).toEqual([]);
  });

  it('still marks the rows nobody wrote since the run began', async () => {
    const links = [link(), link(), link()];
    const seed = await fullRun();
    await writeLinks(links, seed);
    const next = await fullRun();
    await writeLinks(links.slice(0, 2), next);
    expect(await sweepDeletions(fx.db, 'default', next, { table: 'tracking_links' })).toBe(1);
    expect(await deletedIds('tracking_links')).toEqual([String(links[2]?.id)]);
  });
});

describe('the deletion guard', () => {
  it('marks nothing and fails with the way to confirm when a full run would delete more than the fraction', async () => {
    const links = Array.from({ length: 10 }, () => link());
    const seed = await fullRun();
    await writeLinks(links, seed);
    const empty = await fullRun();
    await writeLinks([], empty); // one `200 []`
    const error = await sweepDeletions(fx.db, 'default', empty, {
      table: 'tracking_links',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeletionGuardError);
    expect((error as Error).message).toMatch(/10 of 10 live rows/);
    expect((error as Error).message).toMatch(/HIRESYNC_MAX_DELETE_FRACTION=0\.5/);
    expect((error as Error).message).toMatch(/--allow-mass-delete/);
    expect(await deletedIds('tracking_links')).toEqual([]);
  });

  it('lets a confirmed run mark them, and lets a run under the fraction through', async () => {
    const links = Array.from({ length: 10 }, () => link());
    const seed = await fullRun();
    await writeLinks(links, seed);
    const half = await fullRun();
    await writeLinks(links.slice(0, 5), half);
    expect(await sweepDeletions(fx.db, 'default', half, { table: 'tracking_links' })).toBe(5);
    const confirmed = await fullRun();
    await writeLinks([], confirmed);
    expect(
      await sweepDeletions(fx.db, 'default', confirmed, {
        table: 'tracking_links',
        allowMassDelete: true,
      }),
    ).toBe(5);
    expect(await deletedIds('tracking_links')).toHaveLength(10);
  });

  it('honours the configured fraction through the run store', async () => {
    const links = Array.from({ length: 4 }, () => link());
    const seed = await fullRun();
    await writeLinks(links, seed);
    const next = await fullRun();
    await writeLinks(links.slice(0, 1), next);
    const strict = new KyselyRunStore(fx.db, {
      resources: BUILT_IN_RESOURCES,
      maxDeleteFraction: 0.25,
    });
    await expect(strict.sweepDeletions('tracking_links', next)).rejects.toBeInstanceOf(
      DeletionGuardError,
    );
    const loose = new KyselyRunStore(fx.db, {
      resources: BUILT_IN_RESOURCES,
      maxDeleteFraction: 0.75,
    });
    expect(await loose.sweepDeletions('tracking_links', next)).toBe(3);
  });
});

describe("the deletion guard's hint", () => {
  async function guardMessage(resource: 'jobs' | 'tracking_links', account: string) {
    // The account's own rows: the store binds its account in every statement.
    const store = new KyselyRunStore(fx.db, { resources: BUILT_IN_RESOURCES, account });
    const records =
      resource === 'jobs' ? [{ id: 1 }, { id: 2 }, { id: 3 }] : [link(), link(), link()];
    const body = JSON.stringify(records);
    const seedRun = await store.createRun({ resource, mode: 'full' });
    const url = 'https://api.example/v3/list';
    await store.writePage(resource, seedRun, { number: 1, url, nextUrl: undefined, body, records });
    await store.completeRun(resource, seedRun);
    const empty = await store.createRun({ resource, mode: 'full' });
    const error = await store.sweepDeletions(resource, empty).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeletionGuardError);
    return (error as Error).message;
  }

  it("names --account of the run's account and no other resource's path variable", async () => {
    const message = await guardMessage('jobs', 'acme');
    expect(message).toContain('the full run of jobs of account acme would soft-delete 3 of 3');
    expect(message).toContain(
      "'hiresync sync --full --account acme --resource jobs --allow-mass-delete'",
    );
    // Jobs are read at a fixed path: no path variable is named.
    expect(message).not.toMatch(/HIRESYNC_TRACKING_LINKS_PATH|HIRESYNC_RESOURCE_PATHS/);
    expect(message).toContain('HIRESYNC_RECORDS_KEY');
  });

  it("names --account default for the environment's account, and the tracking links path variable for tracking links", async () => {
    const message = await guardMessage('tracking_links', 'default');
    expect(message).toContain(
      "'hiresync sync --full --account default --resource tracking_links --allow-mass-delete'",
    );
    expect(message).toContain('HIRESYNC_TRACKING_LINKS_PATH');
  });

  it('names HIRESYNC_RESOURCE_PATHS for a list resource', () => {
    const declaration = defineListResource('applications');
    const message = new DeletionGuardError('applications', 4, 5, 0.5, {
      account: 'acme',
      pathVariable: declaration.pathVariable,
    }).message;
    expect(message).toContain('--account acme --resource applications');
    expect(message).toContain('HIRESYNC_RESOURCE_PATHS');
    expect(message).not.toContain('HIRESYNC_TRACKING_LINKS_PATH');
  });
});

describe('a record the API still returns but hiresync rejects', () => {
  it('is not soft-deleted by the sweep, and its new version is kept in rejected_records', async () => {
    const good = link();
    const later = link();
    const seed = await fullRun();
    await writeLinks([good, later], seed);
    const next = await fullRun();
    const result = await writeLinks([good, { ...later, updated_at: '2024-05-01T10:00:00' }], next);
    expect(result.rejected).toHaveLength(1);
    expect(await sweepDeletions(fx.db, 'default', next, { table: 'tracking_links' })).toBe(0);
    expect(await deletedIds('tracking_links')).toEqual([]);
    const rejected = await fx.db
      .withSchema('public')
      .selectFrom('rejected_records')
      .select('raw')
      .execute();
    expect(rejected.map((r) => (r.raw as { id: number }).id)).toEqual([later.id]);
  });
});

describe('newest nested values win across pages', () => {
  it('keeps the name from the most recently updated link when an older link comes on a later page', async () => {
    const run = await fullRun();
    await writeLinks(
      [link({ updated_at: '2025-06-01T00:00:00Z', credited_to: { id: 71, name: 'New name' } })],
      run,
      1,
    );
    await writeLinks(
      [link({ updated_at: '2020-01-01T00:00:00Z', credited_to: { id: 71, name: 'Old name' } })],
      run,
      2,
    );
    const referrer = await fx.db
      .withSchema('public')
      .selectFrom('referrers')
      .selectAll()
      .where('id', '=', '71')
      .executeTakeFirstOrThrow();
    expect(referrer.name).toBe('New name');
    // A newer link still renames it, and the same name on a newer link moves the mark on.
    await writeLinks(
      [link({ updated_at: '2026-01-01T00:00:00Z', credited_to: { id: 71, name: 'New name' } })],
      run,
      3,
    );
    await writeLinks(
      [link({ updated_at: '2025-09-01T00:00:00Z', credited_to: { id: 71, name: 'Mid name' } })],
      run,
      4,
    );
    const after = await fx.db
      .withSchema('public')
      .selectFrom('referrers')
      .select(['name', 'source_updated_at'])
      .where('id', '=', '71')
      .executeTakeFirstOrThrow();
    expect(after.name).toBe('New name');
    expect(after.source_updated_at).toMatch(/^2026-01-01/);
  });
});

describe('a page holding one record Postgres cannot take', () => {
  // Built as text: these values do not survive JSON.parse and JSON.stringify.
  const NUL_BODY = `[
    {"id": 9007199254740993, "token": "first", "created_at": "2024-01-01T00:00:00.123456Z"},
    {"id": 9007199254740992, "token": "second"},
    {"id": 9007199254740995, "token": "bad\\u0000token"}
  ]`;

  it('writes the others with their exact ids, never collapsing two records into one row', async () => {
    const run = await fullRun();
    const result = await writeLinks([], run, 1, NUL_BODY);
    expect(result.written).toBe(2);
    expect(result.rejected.map((r) => r.index)).toEqual([2]);
    const rows = await fx.db
      .withSchema('public')
      .selectFrom('tracking_links')
      .select(['id', 'token', 'created_at'])
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.id, r.token])).toEqual([
      ['9007199254740992', 'second'],
      ['9007199254740993', 'first'],
    ]);
    expect(rows[1]?.created_at).toMatch(/\.123456/);
  });

  it('keeps the refused record in rejected_records with its exact text', async () => {
    const run = await fullRun();
    await writeLinks([], run, 1, NUL_BODY);
    const [row] = await fx.db
      .withSchema('public')
      .selectFrom('rejected_records')
      .select(['raw', 'reason'])
      .execute();
    expect(row?.raw).toBe('{"id": 9007199254740995, "token": "bad\\u0000token"}');
    expect(row?.reason).toMatch(/Postgres refused it/);
  });

  it('keeps digits and decimals of jobs exactly as sent', async () => {
    const run = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
    await writeJobs(
      `[{"id": 9007199254740993, "budget": 12345678901234567890, "ratio": 1.0},
        {"id": 2, "title": "lone \\ud800 surrogate"},
        {"id": 3, "title": "nul \\u0000"}]`,
      run,
    );
    const { rows } = await sql<{ id: string; data: string }>`
      select id::text, data::text from public.jobs order by id`.execute(fx.db);
    expect(rows).toEqual([
      {
        id: '9007199254740993',
        data: '{"id": 9007199254740993, "ratio": 1.0, "budget": 12345678901234567890}',
      },
    ]);
    expect(
      await fx.db.withSchema('public').selectFrom('rejected_records').select('id').execute(),
    ).toHaveLength(2);
  });

  it('rejects a record nested 20,000 levels deep and writes the rest of the page', async () => {
    const deep = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
    const run = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
    const result = await writeJobs(`[{"id": 1}, {"id": 2, "deep": ${deep}}, {"id": 3}]`, run);
    expect(result.written).toBe(2);
    expect(result.rejected.map((r) => r.index)).toEqual([1]);
    const [row] = await fx.db
      .withSchema('public')
      .selectFrom('rejected_records')
      .select(['raw', 'reason'])
      .execute();
    expect(typeof row?.raw).toBe('string');
    expect(String(row?.raw).length).toBeGreaterThan(40_000);
  });
});

describe('run counts', () => {
  it('count a record met on two pages once', async () => {
    const [a, b, c] = [link(), link(), link()];
    const run = await fullRun();
    await writeLinks([a, b], run, 1);
    await writeLinks([b, c], run, 2);
    await finishRun(fx.db, 'default', run, { outcome: 'succeeded' }, BUILT_IN_RESOURCES);
    expect((await getRun(fx.db, 'default', run))?.records).toBe('3');
  });
});

describe('the Postgres resource lock', () => {
  it('lets one process at a time hold a resource, across pools, and frees it on release', async () => {
    const other = createDatabase(fx.url);
    try {
      const first = new ResourceLock(fx.db);
      const second = new ResourceLock(other);
      const release = await first.tryAcquire('tracking_links');
      expect(release).toBeDefined();
      expect(await second.tryAcquire('tracking_links')).toBeUndefined();
      const jobs = await second.tryAcquire('jobs');
      expect(jobs).toBeDefined();
      await jobs?.release();
      await release?.release();
      const again = await second.tryAcquire('tracking_links');
      expect(again).toBeDefined();
      await again?.release();
    } finally {
      await other.destroy();
    }
  });

  it('refuses to sweep once the lock connection is gone', async () => {
    const lock = new ResourceLock(fx.db);
    const release = await lock.tryAcquire('tracking_links');
    const store = new KyselyRunStore(fx.db, { resources: BUILT_IN_RESOURCES, resourceLock: lock });
    const seed = await fullRun();
    await writeLinks([link(), link()], seed);
    const run = await fullRun();
    await writeLinks([], run);
    await sql`select pg_terminate_backend(pid) from pg_locks
      where locktype = 'advisory' and pid <> pg_backend_pid()
        and database = (select oid from pg_database where datname = current_database())`.execute(
      fx.db,
    );
    // pg_terminate_backend only signals: wait until the backend and its lock are gone.
    for (;;) {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_locks where locktype = 'advisory'
          and database = (select oid from pg_database where datname = current_database())`.execute(
        fx.db,
      );
      if (rows[0]?.n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await expect(
      store.sweepDeletions('tracking_links', run, { allowMassDelete: true }),
    ).rejects.toBeInstanceOf(ResourceLockLostError);
    expect(await deletedIds('tracking_links')).toEqual([]);
    await release?.release();
  });
});

describe('two deployments on different Redis prefixes', () => {
  it('never overlap full runs of one resource, and soft-delete no live row', async () => {
    const h = await startSyncHarness({
      simulator: { dataset: { counts: { tracking_links: 3000 } }, latencyMs: 15 },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    const other = loadConfig(
      {
        ...h.env,
        HIRESYNC_REDIS_PREFIX: `${h.env.HIRESYNC_REDIS_PREFIX}-b`,
      },
      RESOURCE_NAMES,
    );
    const apps = [h.app(), createApp(other, h.log.logger, { defaultMetrics: false })];
    try {
      await h.sync(['tracking_links'], 'full');
      const outcomes = await Promise.all(
        apps.map((app) => runOnce(app, ['tracking_links'], 'full')),
      );
      expect(outcomes.flat().map((o) => o.ok)).toEqual([true, true]);
      expect(await h.liveIds('tracking_links')).toEqual(h.expectedIds('tracking_links'));
      const runs = await h.database.db
        .withSchema('public')
        .selectFrom('sync_runs')
        .select(['started_at', 'finished_at', 'deleted'])
        .where('resource', '=', 'tracking_links')
        .orderBy('id')
        .execute();
      expect(runs.map((r) => r.deleted)).toEqual(['0', '0', '0']);
      // The second deployment's run began only after the first one's ended.
      const [, first, second] = runs;
      expect(Date.parse(String(second?.started_at))).toBeGreaterThanOrEqual(
        Date.parse(String(first?.finished_at)) - 1,
      );
    } finally {
      for (const app of apps) await app.close();
      await deletePrefix(apps[1]?.redis as Redis, other.redisPrefix).catch(() => {});
      await h.close();
    }
  });
});
