import { sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { runOnce } from '../../src/queue/run-once.js';
import {
  BUILT_IN_RESOURCES,
  catalogFor,
  catalogOf,
  RESOURCE_NAMES,
} from '../../src/resources/index.js';
import { defineJsonResource } from '../../src/resources/json-resource.js';
import { migrateSchemas } from '../../src/warehouse/setup/migrate-all.js';
import { closeSearchingDatabases, searchingDatabase } from '../support/searching-database.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

// The test's own SQL names the account's relations unqualified, as an analyst's session would.
afterAll(closeSearchingDatabases);

// A resource this test declares for itself: one small declaration...
const scorecards = defineJsonResource({
  name: 'scorecards',
  description: 'scorecards (declared by this test only)',
});
const catalog = catalogOf(...BUILT_IN_RESOURCES.values(), scorecards);

// ...plus its migration, as docs/layout.md shows it: its shared tables, in the
// shape of jobs' (each account's schema gets its views of them from migrate).
const CREATE_TABLE = sql`
  create table hiresync.data_scorecards (
    like hiresync.data_jobs including defaults including constraints,
    primary key (account, id)
  ) partition by hash (account);
  create table hiresync.data_scorecards_p0 partition of hiresync.data_scorecards
    for values with (modulus 1, remainder 0);
  create table hiresync.data_scorecards_history (
    like hiresync.data_jobs_history including defaults including constraints,
    primary key (account, id, valid_from)
  ) partition by hash (account);
  create table hiresync.data_scorecards_history_p0 partition of hiresync.data_scorecards_history
    for values with (modulus 1, remainder 0)`;

let h: SyncHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a resource stored as JSON, declared once', () => {
  it('is listed, stored as sent, counted and swept like jobs', async () => {
    const harness = await startSyncHarness({
      simulator: { dataset: { resources: catalog, counts: { scorecards: 1234 } } },
      env: { HIRESYNC_PER_PAGE: '100' },
    });
    h = harness;
    await CREATE_TABLE.execute(searchingDatabase(h.database.url));
    await migrateSchemas(searchingDatabase(h.database.url), ['public']);
    const config = loadConfig({ ...h.env, HIRESYNC_RESOURCES: 'scorecards' }, [...catalog.keys()]);
    expect(config.resources).toEqual(['scorecards']);
    const sync = async () => {
      const app = createApp(config, harness.log.logger, {
        resources: catalog,
        defaultMetrics: false,
      });
      try {
        return await runOnce(app, ['scorecards'], 'full');
      } finally {
        await app.close();
      }
    };

    const [first] = await sync();
    expect(first).toMatchObject({ ok: true, summary: { mode: 'full', pages: 13, records: 1234 } });
    const ds = h.sim.dataset;
    const served = [...ds.presentIndexes('scorecards')].map((i) => ds.record('scorecards', i));
    const { rows } = await sql<{ data: unknown }>`
      select data from scorecards where deleted_at is null order by id desc`.execute(
      searchingDatabase(h.database.url),
    );
    expect(rows.map((r) => r.data)).toEqual(served);
    expect(h.sim.stats.receivedTargets.some((t) => t.startsWith('/v3/scorecards?'))).toBe(true);

    ds.remove('scorecards', 5);
    const [second] = await sync();
    expect(second).toMatchObject({ ok: true, summary: { deleted: 1 } });
    const gone = await sql<{ id: string }>`
      select id::text from scorecards where deleted_at is not null`.execute(
      searchingDatabase(h.database.url),
    );
    expect(gone.rows.map((r) => r.id)).toEqual([String(ds.idOf('scorecards', 5))]);
  });

  it('is a list resource stored as sent, in tables made on demand, for a deployment that does not declare it', () => {
    const config = loadConfig(
      {
        HIRESYNC_BASE_URL: 'https://harvest.example.com',
        HIRESYNC_API_KEY: 'k',
        DATABASE_URL: 'postgres://u@db/x',
        REDIS_URL: 'redis://r',
        HIRESYNC_RESOURCES: 'scorecards',
      },
      RESOURCE_NAMES,
    );
    expect(config.resources).toEqual(['scorecards']);
    const declaration = catalogFor(config.resources).get('scorecards');
    expect(declaration).toMatchObject({
      table: 'scorecards_data',
      historyTable: 'scorecards_history',
      onDemand: true,
    });
    expect(declaration?.path(config.api)).toBe('/v3/scorecards');
  });
});
