import { sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { runOnce } from '../../src/queue/run-once.js';
import { BUILT_IN_RESOURCES, catalogOf, typedViewDeclarations } from '../../src/resources/index.js';
import { defineJsonResource } from '../../src/resources/json-resource.js';
import type { ResourceName } from '../../src/sync/ports.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { refreshTypedView } from '../../src/warehouse/typed-views/refresh-typed-view.js';
import { closeSearchingDatabases, searchingDatabase } from '../support/searching-database.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

// The test's own SQL names the account's relations unqualified, as an analyst's session would.
afterAll(closeSearchingDatabases);

// A list resource declared by this test, as the analytics resources are: its
// typed view fixes some keys, one of them a key the simulator never sends,
// one (version) at a type the data alone would not give it.
const DECLARED = {
  application_id: 'bigint',
  job_id: 'bigint',
  opening_id: 'bigint',
  resolved_at: 'timestamptz',
  status: 'text',
  version: 'text',
} as const;
const offers = defineJsonResource({
  name: 'offers',
  description: 'offers (declared by this test only)',
  table: 'offers_data',
  pathVariable: 'HIRESYNC_RESOURCE_PATHS',
  onDemand: true,
  columns: DECLARED,
});
const catalog = catalogOf(...BUILT_IN_RESOURCES.values(), offers);

const harnesses: SyncHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

type Db = SyncHarness['database']['db'];

/** Column name → type of a relation, in column order. */
async function columnsOf(db: Db, relation: string): Promise<Record<string, string>> {
  const { rows } = await sql<{ name: string; type: string }>`
    select a.attname as name, format_type(a.atttypid, a.atttypmod) as type
    from pg_attribute a
    where a.attrelid = ${relation}::regclass and a.attnum > 0 and not a.attisdropped
    order by a.attnum`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.name, r.type]));
}

async function start(malformedEvery = 0): Promise<{ t: SyncHarness; db: Db; sync: typeof run }> {
  const t = await startSyncHarness({
    simulator: {
      dataset: {
        counts: { offers: 60, applications: 60, jobs: 30, job_posts: 30 },
        malformedEvery,
      },
    },
    env: { HIRESYNC_PER_PAGE: '25', HIRESYNC_RESOURCES: 'jobs,job_posts,offers' },
  });
  harnesses.push(t);
  const config = loadConfig(t.env, [...catalog.keys()]);
  const db = searchingDatabase(t.database.url);
  await migrateAll(t.database.db, undefined, {
    listResources: ['offers'],
    typedViews: typedViewDeclarations(catalog),
  });
  const run = async (resources: ResourceName[], mode: 'full' | 'auto' = 'full') => {
    const app = createApp(config, t.log.logger, { resources: catalog, defaultMetrics: false });
    try {
      return await runOnce(app, resources, mode);
    } finally {
      await app.close();
    }
  };
  return { t, db, sync: run };
}
const run = async (_r: ResourceName[], _m?: 'full' | 'auto') => [] as unknown[];

const TS = 'timestamp with time zone';

describe('declared typed columns', () => {
  it('are columns of their declared type from the view’s making, before any run, and stay so through every refresh', async () => {
    const { t, db, sync } = await start();
    // Made by migrate: the declared keys, typed, though no record is stored yet.
    expect(await columnsOf(db, 'offers_flat')).toEqual({
      id: 'bigint',
      application_id: 'bigint',
      job_id: 'bigint',
      opening_id: 'bigint',
      resolved_at: TS,
      status: 'text',
      version: 'text',
      deleted_at: TS,
      changed_at: TS,
      synced_at: TS,
    });
    const { rows: notes } = await sql<{ comment: string }>`
      select col_description('offers_flat'::regclass, attnum) as comment from pg_attribute
      where attrelid = 'offers_flat'::regclass and attname = 'opening_id'`.execute(db);
    expect(notes[0]?.comment).toMatch(/^Key "opening_id" .*, as bigint\. Declared by the resource/);
    expect(await columnsOf(db, 'all_accounts.offers_flat')).toMatchObject({
      account: 'text',
      application_id: 'bigint',
      opening_id: 'bigint',
      version: 'text',
    });

    const [outcome] = await sync(['offers']);
    expect(outcome).toMatchObject({ ok: true });
    const columns = await columnsOf(db, 'offers_flat');
    // Declared keys keep their types (version is a whole number in every
    // record, opening_id never sent); the others follow the data.
    expect(columns).toMatchObject({
      application_id: 'bigint',
      opening_id: 'bigint',
      version: 'text',
      candidate_id: 'bigint',
      sent_on: 'date',
    });
    const { rows } = await sql<{ same: boolean; compared: number }>`
      select bool_and(f.application_id is not distinct from (o.data ->> 'application_id')::bigint
          and f.version is not distinct from o.data ->> 'version'
          and f.opening_id is null
          and f.changed_at = o.changed_at and f.synced_at = o.synced_at) as same,
        count(*)::int as compared
      from offers_flat f join offers o using (id)`.execute(db);
    expect(rows[0]).toEqual({ same: true, compared: 60 });

    // A value its declared column cannot read (stored before a declaration,
    // or hashed) reads null, never an error, and never widens the column;
    // the refresh says so.
    await sql`update offers_data set data = data || '{"application_id": "abc"}',
        changed_at = clock_timestamp() where id = (select min(id) from offers_data)`.execute(db);
    const change = await refreshTypedView(t.database.db, {
      account: 'default',
      view: 'offers_flat',
      table: 'offers_data',
      columns: DECLARED,
    });
    expect(change.retyped).toEqual([]);
    expect(change.warning).toMatch(/declared key\(s\) application_id do not read/);
    expect((await columnsOf(db, 'offers_flat')).application_id).toBe('bigint');
    const { rows: read } = await sql<{ application_id: string | null }>`
      select application_id from offers_flat where id = (select min(id) from offers_data)`.execute(
      db,
    );
    expect(read).toEqual([{ application_id: null }]);
    expect((await columnsOf(db, 'all_accounts.offers_flat')).application_id).toBe('bigint');
  });

  it('give the built-in jobs_flat and job_posts_flat their keys at migrate, and keep a refresh from narrowing any', async () => {
    const { db, sync } = await start();
    expect(await columnsOf(db, 'job_posts_flat')).toMatchObject({
      job_id: 'bigint',
      job_board_id: 'bigint',
      live: 'boolean',
    });
    expect(await columnsOf(db, 'jobs_flat')).toMatchObject({
      name: 'text',
      status: 'text',
      department_id: 'bigint',
      opened_at: TS,
    });
    await sync(['jobs', 'job_posts']);
    expect(await columnsOf(db, 'jobs_flat')).toMatchObject({
      created_at: TS,
      name: 'text',
      requisition_id: 'text',
      status: 'text',
      updated_at: TS,
      department_id: 'bigint',
      changed_at: TS,
      synced_at: TS,
    });
  });

  it('leave no column that only a malformed record carried: such a record is rejected, not stored', async () => {
    const { t, db, sync } = await start(5);
    const outcomes = await sync(['job_posts', 'offers']);
    expect(outcomes.every((o) => (o as { ok: boolean }).ok)).toBe(true);
    // The simulator's malformed records carry `token` and `job_id: "abc"`,
    // which both resources declare a bigint.
    for (const view of ['job_posts_flat', 'offers_flat']) {
      const columns = await columnsOf(db, view);
      expect(columns.token, view).toBeUndefined();
      expect(columns.job_id, view).toBe('bigint');
    }
    // Each is in rejected_records with its reason, as the tracking links' are.
    const { rows } = await sql<{ resource: string; n: number }>`
      select resource, count(*)::int as n from rejected_records group by resource order by 1`.execute(
      db,
    );
    const ds = t.sim.dataset;
    const malformed = (resource: 'job_posts' | 'offers') =>
      [...ds.presentIndexes(resource)].filter((i) => ds.isMalformed(i)).length;
    expect(rows).toEqual([
      { resource: 'job_posts', n: malformed('job_posts') },
      { resource: 'offers', n: malformed('offers') },
    ]);
    const { rows: reasons } = await sql<{ reason: string }>`
      select distinct reason from rejected_records where reason like 'job_id%'`.execute(db);
    expect(reasons).toEqual([
      { reason: 'job_id is not a bigint as its declared column says: got the string "abc"' },
    ]);
  });
});
