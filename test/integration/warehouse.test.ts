import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobs as jobsResource } from '../../src/resources/jobs.js';
import { trackingLinks } from '../../src/resources/tracking-links.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { migrateToLatest } from '../../src/warehouse/layout/migrate.js';
import { writePage } from '../../src/warehouse/pages/write-page.js';
import {
  createRun,
  finishRun,
  getRun,
  sweepDeletions,
} from '../../src/warehouse/runs/sync-runs.js';
import {
  adminQuery,
  createTestDatabase,
  databaseUrl,
  type TestDatabase,
} from '../support/databases.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
});
afterAll(async () => {
  await t?.drop();
});

const BOARD = { id: 3_000_000_001, company_name: 'Acme', url_token: 'acme' };
const REFERRER = { id: 4_000_000_002, name: 'Ada Lovelace', employee_id: 'E-1' };
const SOURCE = { id: 7, public_name: 'LinkedIn' };

let nextId = 5_000_000_000;
function link(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  nextId += 1;
  return {
    id: nextId,
    job_id: 2_147_483_648,
    job_post_id: 9_000_000_000,
    job_board: BOARD,
    token: `tok${nextId}`,
    related_post_id: 12,
    related_post_type: 'SocialMediaPost',
    credited_to: REFERRER,
    source: SOURCE,
    created_at: '2024-03-01T10:00:00.123456Z',
    updated_at: '2024-03-02T10:00:00.654321Z',
    ...overrides,
  };
}

async function write(
  records: unknown[],
  runId: string,
  pageNumber = 1,
  body = JSON.stringify(records),
) {
  return writePage(t.db, {
    account: 'default',
    resource: trackingLinks,
    runId,
    pageNumber,
    body,
    records,
  });
}

async function flat(id: unknown) {
  return t.db
    .withSchema('public')
    .selectFrom('tracking_links_flat')
    .selectAll()
    .where('id', '=', String(id))
    .executeTakeFirstOrThrow();
}

describe('migrations', () => {
  it('install the schema, and a second migration does no harm', async () => {
    expect((await migrateToLatest(t.db)).applied).toEqual([]);
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = 'public' order by 1`.execute(
      t.db,
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining([
        'job_boards',
        'job_posts',
        'jobs',
        'referrers',
        'rejected_records',
        'sources',
        'sync_runs',
        'tracking_links',
        'tracking_links_flat',
      ]),
    );
  });

  it('run safely from several processes at once on an empty database', async () => {
    const admin = inject('databaseUrl');
    const name = `${t.name}_fresh`;
    await adminQuery(admin, [`create database ${name}`]);
    const dbs = [1, 2, 3].map(() => createDatabase(databaseUrl(admin, name)));
    try {
      const outcomes = await Promise.all(dbs.map((db) => migrateToLatest(db)));
      // Every migration is applied exactly once, by one of the three.
      expect(outcomes.flatMap((o) => o.applied).sort()).toEqual([
        '0001_initial',
        '0002_reliability',
        '0003_drop_lookup_indexes',
        '0004_drop_reference_constraints',
        '0005_history',
        '0006_typed_views',
        '0007_typed_view_signals',
        '0008_api_clock',
        '0009_typed_view_repairs',
        '0010_reference_resources',
      ]);
    } finally {
      await Promise.all(dbs.map((db) => db.destroy()));
      await adminQuery(admin, [`drop database ${name} with (force)`]);
    }
  });

  it('comment every table and column for analysts', async () => {
    const missing = await sql<{ what: string }>`
      select c.relname || '.' || coalesce(a.attname, '') as what
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
      left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and c.relkind = 'r'
      where c.relkind in ('r', 'v') and c.relname not like 'kysely_%'
        and (a.attname is null and obj_description(c.oid, 'pg_class') is null
          or a.attname is not null and col_description(c.oid, a.attnum) is null)`.execute(t.db);
    expect(missing.rows).toEqual([]);
  });

  it('give the view exactly the contracted columns first, in order', async () => {
    const { rows } = await sql<{ column_name: string }>`
      select column_name from information_schema.columns
      where table_name = 'tracking_links_flat' order by ordinal_position`.execute(t.db);
    expect(rows.map((r) => r.column_name).slice(0, 17)).toEqual([
      'id',
      'token',
      'job_id',
      'job_post_id',
      'job_board_id',
      'job_board_company_name',
      'job_board_url_token',
      'related_post_id',
      'related_post_type',
      'credited_to_id',
      'credited_to_name',
      'credited_to_employee_id',
      'source_id',
      'source_public_name',
      'created_at',
      'updated_at',
      'deleted_at',
    ]);
  });
});

describe('writePage for tracking links', () => {
  it('normalises nested objects into their own tables and shows them joined in the view', async () => {
    const run = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const record = link();
    const result = await write([record], run);
    expect(result).toMatchObject({ written: 1, rejected: [] });
    const row = await flat(record.id);
    expect(row).toMatchObject({
      id: String(record.id),
      token: record.token,
      job_id: '2147483648',
      job_post_id: '9000000000',
      job_board_id: String(BOARD.id),
      job_board_company_name: 'Acme',
      job_board_url_token: 'acme',
      related_post_id: '12',
      related_post_type: 'SocialMediaPost',
      credited_to_id: String(REFERRER.id),
      credited_to_name: 'Ada Lovelace',
      credited_to_employee_id: 'E-1',
      source_id: '7',
      source_public_name: 'LinkedIn',
      deleted_at: null,
    });
    const board = await t.db
      .withSchema('public')
      .selectFrom('job_boards')
      .selectAll()
      .where('id', '=', String(BOARD.id))
      .executeTakeFirstOrThrow();
    expect(board).toMatchObject({ company_name: 'Acme', url_token: 'acme', raw: BOARD });
  });

  it('keeps ids beyond 2^53 and microsecond timestamps exactly as sent', async () => {
    const run = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const body = `[{"id": 9007199254740993, "token": "big", "job_id": 9223372036854775806,
      "created_at": "2024-03-01T10:00:00.123456Z", "updated_at": "2024-03-01T12:00:00.000001+02:00"}]`;
    await write(JSON.parse(body), run, 1, body);
    const row = await t.db
      .withSchema('public')
      .selectFrom('tracking_links')
      .select([
        'id',
        'job_id',
        sql<string>`raw->>'id'`.as('raw_id'),
        sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`.as(
          'created',
        ),
        sql<string>`to_char(updated_at at time zone 'UTC', 'HH24:MI:SS.US')`.as('updated'),
      ])
      .where('token', '=', 'big')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      id: '9007199254740993',
      job_id: '9223372036854775806',
      raw_id: '9007199254740993',
      created: '2024-03-01T10:00:00.123456',
      updated: '10:00:00.000001',
    });
  });

  it('stores nulls, and left-out keys as nulls, in every nullable field', async () => {
    const run = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const nulls = link({
      job_id: null,
      job_post_id: null,
      job_board: null,
      related_post_id: null,
      related_post_type: null,
      credited_to: null,
      source: null,
      created_at: null,
      updated_at: null,
      token: null,
    });
    nextId += 1;
    const bare = { id: nextId };
    expect(await write([nulls, bare], run)).toMatchObject({ written: 2, rejected: [] });
    for (const id of [nulls.id, bare.id]) {
      const row = await flat(id);
      const { id: _id, synced_at: _s, last_seen_run_id: _r, changed_at: _c, ...rest } = row;
      expect(Object.values(rest).every((v) => v === null)).toBe(true);
    }
  });

  it('keeps the name and employee id of a referrer sent without id on the link', async () => {
    const run = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const record = link({ credited_to: { id: null, name: 'Anonymous Friend', employee_id: null } });
    const noKey = link({ credited_to: { name: 'No Id Key', employee_id: 'X-9' } });
    await write([record, noKey], run);
    expect(await flat(record.id)).toMatchObject({
      credited_to_id: null,
      credited_to_name: 'Anonymous Friend',
      credited_to_employee_id: null,
    });
    expect(await flat(noKey.id)).toMatchObject({
      credited_to_id: null,
      credited_to_name: 'No Id Key',
      credited_to_employee_id: 'X-9',
    });
  });

  it('lets the newest values of a nested row win: a source renamed between pages', async () => {
    const run = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const source = { id: 501, public_name: 'Old name' };
    const first = link({ source });
    const second = link({ source: { id: 501, public_name: 'New name' } });
    await write([first], run, 1);
    await write([second], run, 2);
    expect((await flat(first.id)).source_public_name).toBe('New name');
    expect((await flat(second.id)).source_public_name).toBe('New name');
  });

  it('within one page, takes the nested values of the most recently updated link', async () => {
    const run = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const older = link({
      source: { id: 502, public_name: 'Stale' },
      updated_at: '2024-01-01T00:00:00Z',
    });
    const newer = link({
      source: { id: 502, public_name: 'Fresh' },
      updated_at: '2024-06-01T00:00:00Z',
    });
    await write([newer, older], run);
    expect((await flat(older.id)).source_public_name).toBe('Fresh');
  });

  it('fills the same id columns from the flat shape and shows the names already known', async () => {
    const run = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    nextId += 1;
    const record = {
      id: nextId,
      token: 'flat',
      job_board_id: BOARD.id,
      referrer_id: REFERRER.id,
      source_id: SOURCE.id,
      created_at: '2024-01-01T00:00:00Z',
      updated_at: '2024-01-01T00:00:00Z',
    };
    nextId += 1;
    const unknownIds = {
      id: nextId,
      token: 'flat-new',
      job_board_id: 3_100_000_000,
      referrer_id: 4_100_000_000,
      source_id: 999,
    };
    await write([record, unknownIds], run);
    expect(await flat(record.id)).toMatchObject({
      job_board_id: String(BOARD.id),
      job_board_company_name: 'Acme',
      credited_to_id: String(REFERRER.id),
      credited_to_name: 'Ada Lovelace',
      source_id: '7',
      source_public_name: 'LinkedIn',
    });
    expect(await flat(unknownIds.id)).toMatchObject({
      job_board_id: '3100000000',
      job_board_company_name: null,
      source_id: '999',
    });
    // A bare id never blanks names learnt from a nested object.
    expect(
      (
        await t.db
          .withSchema('public')
          .selectFrom('sources')
          .select('public_name')
          .where('id', '=', '7')
          .executeTakeFirstOrThrow()
      ).public_name,
    ).toBe('LinkedIn');
  });

  it('rejects records of the wrong types into rejected_records and writes the rest of the page', async () => {
    const run = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const good = link();
    const bad = [
      { id: '123', token: 'string id' },
      { ...link(), job_id: 'abc' },
      'not an object',
      { token: 'no id' },
      { ...link(), created_at: '2024-02-30T00:00:00Z' },
      { ...link(), credited_to: { id: 1.5, name: 'x' } },
    ];
    const result = await write([bad[0], good, ...bad.slice(1)], run);
    expect(result.written).toBe(1);
    expect(result.rejected.map((r) => r.index)).toEqual([0, 2, 3, 4, 5, 6]);
    const rows = await t.db
      .withSchema('public')
      .selectFrom('rejected_records')
      .selectAll()
      .where('run_id', '=', run)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.reason)).toEqual([
      'id has the wrong type: got the string "123"',
      'job_id has the wrong type: got the string "abc"',
      'record is the string "not an object", not an object',
      'id is missing',
      'created_at must be an ISO 8601 timestamp with a zone: got the string "2024-02-30T00:00:00Z"',
      'credited_to.id must be an integer within bigint range: got the number 1.5',
    ]);
    expect(rows.map((r) => r.raw)).toEqual(bad);
    expect(rows.every((r) => r.resource === 'tracking_links' && r.page === 1)).toBe(true);
    expect((await getRun(t.db, 'default', run))?.rejected).toBe('6');
  });

  it('rejects a record Postgres refuses though it passed validation, and writes the rest', async () => {
    const run = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const good = link();
    // JSON and JavaScript accept \u0000 in a string; Postgres jsonb refuses the whole body.
    const nul = link({ token: 'nul\u0000byte' });
    // Beyond bigint: JavaScript rounds it to 2^63, Postgres reads the digits.
    const body = `[${JSON.stringify(good)}, ${JSON.stringify(nul)}, {"id": 9223372036854775809, "token": "overflow"}]`;
    const result = await write(JSON.parse(body), run, 1, body);
    expect(result.written).toBe(1);
    expect(result.rejected).toEqual([
      { index: 1, reason: expect.stringContaining('Postgres refused it') },
      { index: 2, reason: expect.stringContaining('Postgres refused it') },
    ]);
    expect(await flat(good.id)).toMatchObject({ token: good.token });
    const rejected = await t.db
      .withSchema('public')
      .selectFrom('rejected_records')
      .select(['raw', 'reason'])
      .where('run_id', '=', run)
      .orderBy('id')
      .execute();
    expect(rejected).toHaveLength(2);
    expect(String(rejected[0]?.raw)).toContain('nul');
    expect(await getRun(t.db, 'default', run)).toMatchObject({
      pages: 1,
      records: '1',
      rejected: '2',
    });
  });

  it('re-applies the same page as a no-op in content, counting it once', async () => {
    const run = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const records = [link(), link({ credited_to: null }), { id: 'bad' }];
    await write(records, run, 1);
    const snapshot = async () =>
      t.db
        .withSchema('public')
        .selectFrom('tracking_links_flat')
        .selectAll()
        .where('last_seen_run_id', '=', run)
        .orderBy('id')
        .execute();
    const before = await snapshot();
    const again = await write(records, run, 1);
    expect(again.written).toBe(2);
    const after = await snapshot();
    expect(after.map(({ synced_at: _s, ...r }) => r)).toEqual(
      before.map(({ synced_at: _s, ...r }) => r),
    );
    expect(
      await t.db
        .withSchema('public')
        .selectFrom('rejected_records')
        .select('id')
        .where('run_id', '=', run)
        .execute(),
    ).toHaveLength(1);
    expect(await getRun(t.db, 'default', run)).toMatchObject({
      pages: 1,
      records: '2',
      rejected: '1',
    });
  });
});

describe('the deletion sweep', () => {
  it('soft-deletes rows a completed full run did not see, and clears deleted_at when they come back', async () => {
    const a = link();
    const b = link();
    const first = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    await write([a, b], first);
    const second = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    await write([a], second);
    // Other tests' links share this table: the guard is not under test here.
    expect(
      await sweepDeletions(t.db, 'default', second, {
        table: 'tracking_links',
        maxDeleteFraction: 1,
      }),
    ).toBeGreaterThanOrEqual(1);
    expect((await flat(b.id)).deleted_at).not.toBeNull();
    expect((await flat(a.id)).deleted_at).toBeNull();
    const third = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    await write([a, b], third);
    expect((await flat(b.id)).deleted_at).toBeNull();
  });

  it('never marks deletions for an incremental, filtered or failed run', async () => {
    const a = link();
    const seed = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    await write([a], seed);
    const incremental = await createRun(t.db, 'default', {
      resource: 'tracking_links',
      mode: 'incremental',
    });
    const filtered = await createRun(t.db, 'default', {
      resource: 'tracking_links',
      mode: 'full',
      filter: 'status=closed',
    });
    const failed = await createRun(t.db, 'default', { resource: 'tracking_links', mode: 'full' });
    await finishRun(t.db, 'default', failed, { outcome: 'failed', error: 'boom' });
    for (const run of [incremental, filtered, failed])
      expect(await sweepDeletions(t.db, 'default', run, { table: 'tracking_links' })).toBe(0);
    expect((await flat(a.id)).deleted_at).toBeNull();
  });
});

describe('writePage for jobs and job posts', () => {
  it('stores the record as sent in data, rejects bad ones, and sweeps', async () => {
    const run = await createRun(t.db, 'default', { resource: 'jobs', mode: 'full' });
    const jobs = [
      { id: 4_300_000_001, name: 'Engineer', extra: { nested: [1, 2] } },
      { id: 4_300_000_002, name: 'Chef' },
      { name: 'no id' },
    ];
    const result = await writePage(t.db, {
      account: 'default',
      resource: jobsResource,
      runId: run,
      pageNumber: 1,
      body: JSON.stringify(jobs),
      records: jobs,
    });
    expect(result).toMatchObject({ written: 2, maxId: '4300000002', minId: '4300000001' });
    const row = await t.db
      .withSchema('public')
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', '4300000001')
      .executeTakeFirstOrThrow();
    expect(row.data).toEqual(jobs[0]);
    const next = await createRun(t.db, 'default', { resource: 'jobs', mode: 'full' });
    await writePage(t.db, {
      account: 'default',
      resource: jobsResource,
      runId: next,
      pageNumber: 1,
      body: JSON.stringify([jobs[0]]),
      records: [jobs[0]],
    });
    expect(await sweepDeletions(t.db, 'default', next, { table: 'jobs' })).toBe(1);
    const gone = await t.db
      .withSchema('public')
      .selectFrom('jobs')
      .select('deleted_at')
      .where('id', '=', '4300000002')
      .executeTakeFirstOrThrow();
    expect(gone.deleted_at).not.toBeNull();
  });
});
