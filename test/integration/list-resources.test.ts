import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { schemaOf } from '../../src/account-name.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { ConfigError } from '../../src/errors.js';
import { main } from '../../src/main.js';
import { listResourceOf, RESOURCE_NAMES } from '../../src/resources/index.js';
import { Secret } from '../../src/secret.js';
import type { Dataset } from '../../src/simulator/dataset.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { ensureListResources, migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { type AccountsHarness, startAccountsHarness } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

const harnesses: Array<SyncHarness | AccountsHarness> = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

/**
 * What the simulator serves of a list, by id (text): the records hiresync
 * should store (an analytics list, such as applications, checks its fields).
 */
function served(ds: Dataset, resource: string): Map<string, unknown> {
  const declaration = listResourceOf(resource);
  const out = new Map<string, unknown>();
  for (const i of ds.presentIndexes(resource)) {
    const record = ds.record(resource, i);
    if (declaration.validate(record) === undefined) out.set(String(ds.idOf(resource, i)), record);
  }
  return out;
}

async function stored(
  db: SyncHarness['database']['db'],
  view: string,
  schema = 'public',
): Promise<Map<string, unknown>> {
  const { rows } = await sql<{ id: string; data: unknown }>`
    select id, data from ${sql.id(schema, view)} where deleted_at is null`.execute(db);
  return new Map(rows.map((r) => [r.id, r.data]));
}

describe('list resources named in HIRESYNC_RESOURCES', () => {
  it('are stored as sent, read through a view of their name, counted, swept and versioned', async () => {
    const t = await startSyncHarness({
      simulator: {
        dataset: { counts: { applications: 130, candidates: 40 }, malformedEvery: 25 },
      },
      env: { HIRESYNC_PER_PAGE: '50', HIRESYNC_RESOURCES: 'jobs,applications,candidates' },
    });
    harnesses.push(t);
    const ds = t.sim.dataset;
    const outcomes = await t.sync(['applications', 'candidates']);
    expect(outcomes).toMatchObject([
      { ok: true, summary: { mode: 'full', records: served(ds, 'applications').size } },
      { ok: true, summary: { mode: 'full', records: served(ds, 'candidates').size } },
    ]);
    expect(await stored(t.database.db, 'applications')).toEqual(served(ds, 'applications'));
    expect(await stored(t.database.db, 'candidates')).toEqual(served(ds, 'candidates'));
    // The malformed records (no integer id) are kept in rejected_records, never dropped.
    const { rows: rejected } = await sql<{ n: string }>`
      select count(*) as n from public.rejected_records where resource = 'applications'`.execute(
      t.database.db,
    );
    expect(Number(rejected[0]?.n)).toBe(130 - served(ds, 'applications').size);
    expect(Number(rejected[0]?.n)).toBeGreaterThan(0);

    // An update, a deletion and a new record: caught by the next full run, with history.
    const touched = ds.touch('applications', 2);
    const removed = ds.remove('applications', 3);
    ds.grow('applications', 5);
    const [full] = await t.sync(['applications'], 'full');
    expect(full).toMatchObject({ ok: true, summary: { mode: 'full', deleted: 1 } });
    expect(await stored(t.database.db, 'applications')).toEqual(served(ds, 'applications'));
    const { rows: versions } = await sql<{ id: string; deleted: boolean; open: boolean }>`
      select id, deleted, valid_to is null as open from public.applications_history
      where id in (${touched}, ${removed}) order by id, valid_from`.execute(t.database.db);
    expect(versions).toEqual(
      [
        { id: String(touched), deleted: false, open: false },
        { id: String(touched), deleted: false, open: true },
        { id: String(removed), deleted: false, open: false },
        { id: String(removed), deleted: true, open: true },
      ].sort((a, b) => Number(a.id) - Number(b.id)),
    );

    // Incremental: the newest records only.
    ds.grow('applications', 3);
    const [incremental] = await t.sync(['applications']);
    expect(incremental).toMatchObject({ ok: true, summary: { mode: 'incremental' } });
    expect(await stored(t.database.db, 'applications')).toEqual(served(ds, 'applications'));

    // Every table and view is commented; status lists the resource.
    const { rows: comments } = await sql<{ relation: string; comment: string | null }>`
      select c.relname as relation, obj_description(c.oid, 'pg_class') as comment
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relname like 'applications%' and c.relkind in ('r', 'v')
      order by 1`.execute(t.database.db);
    expect(comments.map((c) => c.relation)).toEqual(
      expect.arrayContaining(['applications', 'applications_data', 'applications_history']),
    );
    expect(comments.every((c) => (c.comment ?? '') !== '')).toBe(true);
    const io = captureIo();
    expect(await main(['status'], t.env, io)).toBe(0);
    expect(io.out()).toMatch(/applications\s+incremental/);
  });

  it('reads a list from the path HIRESYNC_RESOURCE_PATHS gives, under a name of its own', async () => {
    const t = await startSyncHarness({
      simulator: { dataset: { counts: { departments: 30 } } },
      env: {
        HIRESYNC_RESOURCES: 'teams',
        HIRESYNC_RESOURCE_PATHS: 'teams=/v3/departments',
      },
    });
    harnesses.push(t);
    const [outcome] = await t.sync(['teams']);

    expect(outcome).toMatchObject({ ok: true, summary: { records: 30 } });
    expect(await stored(t.database.db, 'teams')).toEqual(served(t.sim.dataset, 'departments'));
  });

  it('are kept per account, each in its own schema, and unioned in all_accounts', async () => {
    const t = await startAccountsHarness({
      accounts: ['alpha'],
      env: { HIRESYNC_RESOURCES: 'jobs,offers' },
    });
    harnesses.push(t);
    const outcomes = await t.sync([
      { account: 'default', resource: 'offers' },
      { account: 'alpha', resource: 'offers' },
    ]);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    for (const account of ['default', 'alpha']) {
      expect(await stored(t.database.db, 'offers', schemaOf(account))).toEqual(
        served(t.sim.datasetOf(account), 'offers'),
      );
    }
    const { rows } = await sql<{ account: string; n: string }>`
      select account, count(*) as n from all_accounts.offers group by account order by account`.execute(
      t.database.db,
    );
    expect(rows).toEqual([
      { account: 'alpha', n: String(served(t.sim.datasetOf('alpha'), 'offers').size) },
      { account: 'default', n: String(served(t.sim.datasetOf('default'), 'offers').size) },
    ]);
    const history = await sql<{ n: string }>`
      select count(*) as n from all_accounts.offers_history`.execute(t.database.db);
    expect(Number(history.rows[0]?.n)).toBe(rows.reduce((sum, r) => sum + Number(r.n), 0));

    // An account added later gets the list's tables when its schema is migrated.
    await t.store.add({
      name: 'beta',
      baseUrl: t.sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: t.sim.authUrl,
        clientId: 'beta-client',
        clientSecret: new Secret('beta-secret'),
      },
    });
    const { listResourceTables } = await migrateAll(t.database.db);
    expect(listResourceTables).toEqual(['beta.offers']);
  });

  it('migrate makes the tables of the lists HIRESYNC_RESOURCES names, in every schema, once', async () => {
    const t = await startAccountsHarness({ accounts: ['alpha'] });
    harnesses.push(t);
    const env = { DATABASE_URL: t.database.url, HIRESYNC_RESOURCES: 'jobs,candidates' };
    const first = captureIo();
    expect(await main(['migrate'], env, first)).toBe(0);
    expect(first.out()).toContain('list resource tables made: public.candidates, alpha.candidates');
    const second = captureIo();
    // Made once; HIRESYNC_RESOURCES no longer naming it keeps them (and migrate still knows them).
    expect(await main(['migrate'], { DATABASE_URL: t.database.url }, second)).toBe(0);
    expect(second.out()).not.toContain('list resource tables made');
    const { rows } = await sql<{ view: string | null }>`
      select to_regclass('alpha.candidates')::text as view`.execute(t.database.db);
    expect(rows[0]?.view).toBe('alpha.candidates');
    const { rows: union } = await sql<{ view: string | null }>`
      select to_regclass('all_accounts.candidates')::text as view`.execute(t.database.db);
    expect(union[0]?.view).toBe('all_accounts.candidates');
  });

  it('are made once when several processes make them at the same time', async () => {
    const t = await startAccountsHarness({ accounts: ['alpha', 'beta'] });
    harnesses.push(t);
    const pools = [0, 1, 2].map(() => createDatabase(t.database.url, { max: 1 }));
    try {
      const made = await Promise.all(pools.map((db) => ensureListResources(db, ['offers'])));
      expect(made.flat().sort()).toEqual(['alpha.offers', 'beta.offers', 'public.offers']);
    } finally {
      await Promise.all(pools.map((db) => db.destroy()));
    }
    const { rows } = await sql<{ view: string | null }>`
      select to_regclass('all_accounts.offers_history')::text as view`.execute(t.database.db);
    expect(rows[0]?.view).toBe('all_accounts.offers_history');
  });

  it("refuses names that would collide with hiresync's own tables, before connecting", () => {
    const base = {
      HIRESYNC_BASE_URL: 'http://127.0.0.1:1',
      HIRESYNC_AUTH_URL: 'http://127.0.0.1:1',
      HIRESYNC_CLIENT_ID: 'c',
      HIRESYNC_CLIENT_SECRET: 's',
      DATABASE_URL: 'postgres://127.0.0.1/x',
      REDIS_URL: 'redis://127.0.0.1',
    };
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig({ ...base, ...env }, RESOURCE_NAMES);
        return [];
      } catch (error) {
        return (error as ConfigError).problems.map((p) => `${p.variable}: ${p.message}`);
      }
    };
    expect(problems({ HIRESYNC_RESOURCES: 'sync_runs' })).toEqual([
      expect.stringMatching(
        /^HIRESYNC_RESOURCES: sync_runs is the name of one of hiresync's own tables; name it otherwise and give its path in HIRESYNC_RESOURCE_PATHS \(e\.g\. api_sync_runs=\/v3\/sync_runs\)/,
      ),
    ]);
    // sources, job_boards and referrers are resources of their own.
    expect(problems({ HIRESYNC_RESOURCES: 'sources,job_boards,referrers' })).toEqual([]);
    expect(problems({ HIRESYNC_RESOURCES: 'jobs_history' })[0]).toMatch(/ends in _history/);
    expect(problems({ HIRESYNC_RESOURCES: 'Bad-Name' })[0]).toMatch(/is not a resource name/);
    // A path of a resource HIRESYNC_RESOURCES does not list serves the accounts that list it.
    expect(problems({ HIRESYNC_RESOURCE_PATHS: 'offers=/v3/offers' })).toEqual([]);
    expect(problems({ HIRESYNC_RESOURCE_PATHS: 'sync_runs=/v3/offers' })[0]).toMatch(
      /sync_runs is the name of one of hiresync's own tables/,
    );
    expect(problems({ HIRESYNC_RESOURCE_PATHS: 'jobs=/v3/x' })[0]).toMatch(/built-in resource/);
    expect(
      problems({ HIRESYNC_RESOURCES: 'jobs,offers', HIRESYNC_RESOURCE_PATHS: 'offers' })[0],
    ).toMatch(/name=\/path pairs/);
    expect(
      problems({
        HIRESYNC_RESOURCES: 'jobs, api_sources',
        HIRESYNC_RESOURCE_PATHS: 'api_sources=/v3/sources',
      }),
    ).toEqual([]);
  });
});
