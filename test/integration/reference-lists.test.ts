import { promises as fs } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { FileMigrationProvider, Migrator } from 'kysely/migration';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { ResourceName } from '../../src/config/load-config.js';
import { MIGRATIONS_FOLDER, migrateToLatest } from '../../src/warehouse/layout/migrate.js';
import { closeSearchingDatabases, searchingDatabase } from '../support/searching-database.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

const LISTS: ResourceName[] = ['job_boards', 'sources', 'referrers'];

let h: SyncHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(flatTrackingLinks: boolean) {
  h = await startSyncHarness({
    simulator: { dataset: { counts: { tracking_links: 300 }, flatTrackingLinks } },
    env: { HIRESYNC_PER_PAGE: '50' },
  });
  return h;
}

async function syncOk(t: SyncHarness, resources: ResourceName[]) {
  const outcomes = await t.sync(resources, 'full');
  expect(outcomes.map((o) => [o.resource, o.ok])).toEqual(resources.map((r) => [r, true]));
}

/** The view's rows whose link names an id but whose name is missing, by column. */
async function missingNames(t: SyncHarness) {
  const { rows } = await sql<{ boards: string; sources: string; referrers: string }>`
    select count(*) filter (where job_board_id is not null and job_board_company_name is null) as boards,
      count(*) filter (where source_id is not null and source_public_name is null) as sources,
      count(*) filter (where credited_to_id is not null and credited_to_name is null) as referrers
    from public.tracking_links_flat`.execute(t.database.db);
  return rows[0];
}

/** The list's record of the id, as the simulator serves it now. */
function listRecord(t: SyncHarness, resource: string, id: string) {
  const ds = t.sim.dataset;
  return ds.record(resource, (Number(id) - ds.idOf(resource, 0)) / 7) as Record<string, unknown>;
}

async function viewRow(
  t: SyncHarness,
  where: 'job_board_id' | 'source_id' | 'credited_to_id',
  id: string,
) {
  return t.database.db
    .withSchema('public')
    .selectFrom('tracking_links_flat')
    .selectAll()
    .where(where, '=', id)
    .orderBy('id')
    .executeTakeFirstOrThrow();
}

describe('names from the reference lists', () => {
  it('fills every name of flat tracking links from job_boards, sources and referrers, and a later flat run blanks none', async () => {
    const t = await start(true);
    await syncOk(t, ['tracking_links', ...LISTS]);
    expect(await missingNames(t)).toEqual({ boards: '0', sources: '0', referrers: '0' });
    const link = await t.database.db
      .withSchema('public')
      .selectFrom('tracking_links_flat')
      .selectAll()
      .where('job_board_id', 'is not', null)
      .where('source_id', 'is not', null)
      .where('credited_to_id', 'is not', null)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const raw = (
      await t.database.db
        .withSchema('public')
        .selectFrom('tracking_links')
        .select('raw')
        .where('id', '=', link.id)
        .executeTakeFirstOrThrow()
    ).raw as Record<string, unknown>;
    // The flat link carries ids only; credited_to_id is its referrer_id.
    expect(raw.job_board).toBeUndefined();
    expect(link.credited_to_id).toBe(String(raw.referrer_id));
    const board = listRecord(t, 'job_boards', link.job_board_id as string);
    expect([link.job_board_company_name, link.job_board_url_token]).toEqual([
      board.company_name,
      board.url_token,
    ]);
    expect(link.source_public_name).toBe(listRecord(t, 'sources', link.source_id as string).name);
    expect(link.credited_to_name).toBe(
      listRecord(t, 'referrers', link.credited_to_id as string).name,
    );
    // The record as sent is kept, v3 keys and all.
    const source = await t.database.db
      .withSchema('public')
      .selectFrom('sources')
      .select('raw')
      .where('id', '=', link.source_id as string)
      .executeTakeFirstOrThrow();
    expect(source.raw).toEqual(listRecord(t, 'sources', link.source_id as string));

    await syncOk(t, ['tracking_links']);
    expect(await missingNames(t)).toEqual({ boards: '0', sources: '0', referrers: '0' });
  });

  it('gives links that arrive before their boards their names once the lists are synced', async () => {
    const t = await start(true);
    await syncOk(t, ['tracking_links']);
    const before = await missingNames(t);
    expect(Number(before?.boards)).toBeGreaterThan(0);
    expect(Number(before?.sources)).toBeGreaterThan(0);
    expect(Number(before?.referrers)).toBeGreaterThan(0);
    await syncOk(t, LISTS);
    expect(await missingNames(t)).toEqual({ boards: '0', sources: '0', referrers: '0' });
  });

  it('shows a renamed source by its new name after the next sources run', async () => {
    const t = await start(true);
    await syncOk(t, ['tracking_links', ...LISTS]);
    const { source_id } = await t.database.db
      .withSchema('public')
      .selectFrom('tracking_links')
      .select('source_id')
      .where('source_id', 'is not', null)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const ds = t.sim.dataset;
    const index = (Number(source_id) - ds.idOf('sources', 0)) / 7;
    const oldName = (await viewRow(t, 'source_id', source_id as string)).source_public_name;
    ds.touch('sources', index);
    const newName = (ds.record('sources', index) as { name: string }).name;
    expect(newName).not.toBe(oldName);
    await syncOk(t, ['sources']);
    expect((await viewRow(t, 'source_id', source_id as string)).source_public_name).toBe(newName);
  });

  it("keeps a deleted board's name in the view, and the board list's full run soft-deletes its row", async () => {
    const t = await start(true);
    await syncOk(t, ['tracking_links', ...LISTS]);
    const { job_board_id } = await t.database.db
      .withSchema('public')
      .selectFrom('tracking_links')
      .select('job_board_id')
      .where('job_board_id', 'is not', null)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const ds = t.sim.dataset;
    const name = listRecord(t, 'job_boards', job_board_id as string).company_name;
    ds.remove('job_boards', (Number(job_board_id) - ds.idOf('job_boards', 0)) / 7);
    await syncOk(t, ['job_boards']);
    const rows = await t.database.db
      .withSchema('public')
      .selectFrom('job_boards')
      .select(['id', 'deleted_at', 'company_name'])
      .where('deleted_at', 'is not', null)
      .execute();
    expect(rows.map((r) => [r.id, r.company_name])).toEqual([[job_board_id, name]]);
    expect((await viewRow(t, 'job_board_id', job_board_id as string)).job_board_company_name).toBe(
      name,
    );
    // Its history records the deletion as a version of its own.
    const versions = await t.database.db
      .withSchema('public')
      .selectFrom('job_boards_history')
      .select(['deleted', 'valid_to'])
      .where('id', '=', job_board_id as string)
      .orderBy('valid_from')
      .execute();
    expect(versions.map((v) => [v.deleted, v.valid_to === null])).toEqual([
      [false, false],
      [true, true],
    ]);
  });

  it('still fills names from the nested objects of seed-shape links, and the newest copy served wins either way', async () => {
    const t = await start(false);
    await syncOk(t, ['tracking_links']);
    expect(await missingNames(t)).toEqual({ boards: '0', sources: '0', referrers: '0' });
    const link = await t.database.db
      .withSchema('public')
      .selectFrom('tracking_links')
      .select(['credited_to_id', 'raw'])
      .where('credited_to_id', 'is not', null)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const referrerId = link.credited_to_id as string;
    const nested = (link.raw as { credited_to: Record<string, unknown> }).credited_to;
    const row = () =>
      t.database.db
        .withSchema('public')
        .selectFrom('referrers')
        .select(['name', 'employee_id', 'raw', 'deleted_at'])
        .where('id', '=', referrerId)
        .executeTakeFirstOrThrow();
    expect(await row()).toMatchObject({ name: nested.name, raw: nested });

    // The list's record comes later: it wins; the employee_id it lacks stays.
    await syncOk(t, ['referrers']);
    expect(await row()).toMatchObject({
      name: nested.name,
      employee_id: nested.employee_id,
      raw: listRecord(t, 'referrers', referrerId),
    });

    // A rename, served by the links first: the nested copy, written later, wins.
    const ds = t.sim.dataset;
    ds.touch('referrers', (Number(referrerId) - ds.idOf('referrers', 0)) / 7);
    const renamed = listRecord(t, 'referrers', referrerId).name;
    await syncOk(t, ['tracking_links']);
    expect(await row()).toMatchObject({ name: renamed, raw: { ...nested, name: renamed } });
    expect((await viewRow(t, 'credited_to_id', referrerId)).credited_to_name).toBe(renamed);
  });

  it('records a version of each reference row that changed, whichever way it came', async () => {
    const t = await start(true);
    await syncOk(t, ['tracking_links', ...LISTS]);
    const ds = t.sim.dataset;
    const id = String(ds.idOf('sources', 3));
    ds.touch('sources', 3);
    await syncOk(t, ['sources']);
    await syncOk(t, ['sources']);
    const versions = await t.database.db
      .withSchema('public')
      .selectFrom('sources_history')
      .select(['raw', 'valid_from', 'valid_to', 'deleted'])
      .where('id', '=', id)
      .orderBy('valid_from')
      .execute();
    expect(versions).toHaveLength(2);
    expect(versions[0]?.valid_to).toEqual(versions[1]?.valid_from);
    expect(versions[1]).toMatchObject({
      valid_to: null,
      deleted: false,
      raw: ds.record('sources', 3),
    });
    // Every live row with a record has exactly one open version, equal to it.
    for (const table of ['job_boards', 'sources', 'referrers'] as const) {
      const { rows } = await sql<{ n: string }>`
        select count(*) as n from ${sql.id('public', table)} t
        where t.raw is not null and not exists (
          select 1 from ${sql.id('public', `${table}_history`)} h
          where h.id = t.id and h.valid_to is null and h.raw = t.raw)`.execute(t.database.db);
      expect(rows[0]?.n).toBe('0');
    }
  });
});

describe('migrate', () => {
  it('upgrades a database of the previous release with job boards, sources and referrers, keeping their rows', async () => {
    const t = await start(false);
    const schema = 'before_reference_lists';
    await sql`create schema ${sql.id(schema)}`.execute(t.database.db);
    // The earlier layout's migrations name their tables unqualified (see migrate.ts).
    const db = searchingDatabase(t.database.url, schema);
    onTestFinished(closeSearchingDatabases);
    const migrator = new Migrator({
      db,
      provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_FOLDER }),
      migrationTableSchema: schema,
    });
    const { error } = await migrator.migrateTo('0009_typed_view_repairs');
    expect(error).toBeUndefined();
    await sql`insert into job_boards (id, company_name, url_token, raw) values
      (1, 'Acme', 'acme', '{"id":1,"company_name":"Acme","url_token":"acme"}'), (2, null, null, null)`.execute(
      db,
    );
    await sql`insert into sources (id, public_name, raw) values (5, 'LinkedIn', '{"id":5,"public_name":"LinkedIn"}')`.execute(
      db,
    );
    await sql`insert into referrers (id, name, employee_id, raw) values (7, 'Ada', 'E-7', '{"id":7,"name":"Ada"}')`.execute(
      db,
    );

    const outcome = await migrateToLatest(t.database.db, { schema });
    expect(outcome.applied).toEqual(['0010_reference_resources']);
    const { rows } = await sql<Record<string, unknown>>`
      select id, company_name, url_token, deleted_at, last_seen_run_id, changed_at is not null as has_changed_at
      from job_boards order by id`.execute(db);
    expect(rows).toEqual([
      {
        id: '1',
        company_name: 'Acme',
        url_token: 'acme',
        deleted_at: null,
        last_seen_run_id: null,
        has_changed_at: true,
      },
      {
        id: '2',
        company_name: null,
        url_token: null,
        deleted_at: null,
        last_seen_run_id: null,
        has_changed_at: true,
      },
    ]);
    const names = await sql<{ public_name: string; name: string; employee_id: string }>`
      select s.public_name, r.name, r.employee_id from sources s, referrers r`.execute(db);
    expect(names.rows).toEqual([{ public_name: 'LinkedIn', name: 'Ada', employee_id: 'E-7' }]);
    const versions = await sql<{ table: string; id: string }>`
      select 'job_boards' as table, id from job_boards_history
      union all select 'sources', id from sources_history
      union all select 'referrers', id from referrers_history order by 1, 2`.execute(db);
    expect(versions.rows).toEqual([
      { table: 'job_boards', id: '1' },
      { table: 'referrers', id: '7' },
      { table: 'sources', id: '5' },
    ]);
  });
});
