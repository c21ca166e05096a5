import { sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { ANALYTICS_RESOURCES, declarationOf } from '../../src/resources/index.js';
import type { DeclaredColumnType } from '../../src/resources/resource.js';
import { Secret } from '../../src/secret.js';
import { Metrics } from '../../src/status/metrics.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import {
  MAX_TYPED_COLUMNS,
  refreshTypedView,
} from '../../src/warehouse/typed-views/refresh-typed-view.js';
import { type AccountsHarness, startAccountsHarness } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { closeSearchingDatabases, searchingDatabase } from '../support/searching-database.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

// The test's own SQL names the account's relations unqualified, as an analyst's session would.
afterAll(closeSearchingDatabases);

const harnesses: Array<SyncHarness | AccountsHarness> = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

type Db = SyncHarness['database']['db'];

/** Column name → type of a view, in column order. */
async function columnsOf(db: Db, view: string, schema = 'public'): Promise<[string, string][]> {
  const { rows } = await sql<{ name: string; type: string }>`
    select a.attname as name, format_type(a.atttypid, a.atttypmod) as type
    from pg_attribute a
    where a.attrelid = ${`${schema}.${view}`}::regclass and a.attnum > 0 and not a.attisdropped
    order by a.attnum`.execute(db);
  return rows.map((r) => [r.name, r.type]);
}

async function startApplications(): Promise<SyncHarness> {
  const t = await startSyncHarness({
    simulator: { dataset: { counts: { applications: 120, jobs: 60 } } },
    env: { HIRESYNC_PER_PAGE: '50', HIRESYNC_RESOURCES: 'jobs,applications' },
  });
  harnesses.push(t);
  return t;
}

/** How information_schema names each type a declaration may give a column. */
const PG_TYPE_NAMES: Record<DeclaredColumnType, string> = {
  bigint: 'bigint',
  numeric: 'numeric',
  boolean: 'boolean',
  timestamptz: 'timestamp with time zone',
  date: 'date',
  text: 'text',
  jsonb: 'jsonb',
};

describe('typed views', () => {
  it('give each top-level key a column typed from its values, after the first full run', async () => {
    const t = await startApplications();
    // Before any run: id and the row's state (a migrate given the
    // declarations adds jobs' declared keys, see typed-views-declared-columns).
    expect(await columnsOf(searchingDatabase(t.database.url), 'jobs_flat')).toEqual([
      ['id', 'bigint'],
      ['deleted_at', 'timestamp with time zone'],
      ['changed_at', 'timestamp with time zone'],
      ['synced_at', 'timestamp with time zone'],
    ]);
    await t.sync(['applications', 'jobs']);
    // A column per key the records carried, typed from their values, beside
    // the keys applications declares (null columns where the seed shape has none).
    const fromData: Array<[string, string]> = [
      ['applied_at', 'timestamp with time zone'],
      ['attachment_count', 'bigint'],
      ['candidate_id', 'bigint'],
      ['created_at', 'timestamp with time zone'],
      ['current_stage', 'jsonb'],
      ['expected_start_on', 'date'],
      ['external_ref', 'text'],
      ['jobs', 'jsonb'],
      ['last_activity_at', 'timestamp with time zone'],
      ['prospect', 'boolean'],
      ['rejected_at', 'timestamp with time zone'],
      ['rejection_reason', 'jsonb'],
      ['score', 'numeric'],
      ['source', 'jsonb'],
      ['status', 'text'],
      ['updated_at', 'timestamp with time zone'],
    ];
    const declared = Object.entries(declarationOf(ANALYTICS_RESOURCES, 'applications').columns).map(
      ([key, type]): [string, string] => [key, PG_TYPE_NAMES[type]],
    );
    const keyed = new Map([...declared, ...fromData]);
    expect(await columnsOf(searchingDatabase(t.database.url), 'applications_flat')).toEqual([
      ['id', 'bigint'],
      ...[...keyed].sort(([a], [b]) => (a < b ? -1 : 1)),
      ['deleted_at', 'timestamp with time zone'],
      ['changed_at', 'timestamp with time zone'],
      ['synced_at', 'timestamp with time zone'],
    ]);
    // jobs declares its keys: each has its column, sent or not.
    expect(
      (await columnsOf(searchingDatabase(t.database.url), 'jobs_flat')).map(([name]) => name),
    ).toEqual([
      'id',
      'closed_at',
      'confidential',
      'created_at',
      'department_id',
      'is_template',
      'name',
      'opened_at',
      'requisition_id',
      'status',
      'updated_at',
      'deleted_at',
      'changed_at',
      'synced_at',
    ]);
    // The values are the records' own, at the precision sent: a null where the
    // record holds a value differs (`is not distinct from`, never `=`, whose null
    // bool_and would pass over).
    const { rows } = await sql<{ same: boolean; differing: number; compared: number }>`
      select bool_and(same) as same, count(*) filter (where not same)::int as differing,
        count(*)::int as compared
      from (select
        f.score is not distinct from (a.data ->> 'score')::numeric
        and f.applied_at is not distinct from (a.data ->> 'applied_at')::timestamptz
        and f.expected_start_on is not distinct from (a.data ->> 'expected_start_on')::date
        and f.prospect is not distinct from (a.data -> 'prospect')::boolean
        and f.source is not distinct from a.data -> 'source'
        and f.external_ref is not distinct from a.data ->> 'external_ref' as same
      from applications_flat f join applications a using (id)) compared`.execute(
      searchingDatabase(t.database.url),
    );
    expect(rows[0]).toMatchObject({ differing: 0, compared: 120 });
    expect(rows[0]?.same).toBe(true);
    // Every column says which key it shows.
    const { rows: comments } = await sql<{ name: string; comment: string | null }>`
      select a.attname as name, col_description(a.attrelid, a.attnum) as comment
      from pg_attribute a where a.attrelid = 'applications_flat'::regclass and a.attnum > 0`.execute(
      searchingDatabase(t.database.url),
    );
    expect(comments.find((c) => c.name === 'score')?.comment).toBe(
      'Key "score" of the record as sent (data -> "score"), as numeric.',
    );
    expect(comments.every((c) => (c.comment ?? '') !== '')).toBe(true);
  });

  it('add a column for a key that appears later, at the next full run, and log it', async () => {
    const t = await startApplications();
    await t.sync(['applications']);
    expect(
      (await columnsOf(searchingDatabase(t.database.url), 'applications_flat')).map(([n]) => n),
    ).not.toContain('location');
    // Applications created from now on carry a location.
    t.sim.dataset.grow('applications', 10);
    await t.sync(['applications']);
    // An incremental run stores them, and leaves the view alone.
    expect(
      (await columnsOf(searchingDatabase(t.database.url), 'applications_flat')).map(([n]) => n),
    ).not.toContain('location');
    await t.sync(['applications'], 'full');
    expect(await columnsOf(searchingDatabase(t.database.url), 'applications_flat')).toContainEqual([
      'location',
      'jsonb',
    ]);
    const gained = t.log
      .lines()
      .map((line) => JSON.parse(line) as { msg?: string; added?: string[]; resource?: string })
      .filter((line) => line.msg === 'typed view gained columns');
    expect(gained.at(-1)).toMatchObject({ resource: 'applications', added: ['location'] });
  });

  it('never fail on a value they did not see when built, and widen the column at the next refresh', async () => {
    const t = await startApplications();
    await t.sync(['applications']);
    // Values the view was not built for, as a page would write them: a
    // decimal count, a date that is not one.
    await sql`update applications_data
      set data = data || '{"attachment_count": 2.5, "applied_at": "soon"}', changed_at = clock_timestamp()
      where id = (select min(id) from applications_data)`.execute(
      searchingDatabase(t.database.url),
    );
    const { rows } = await sql<{ attachment_count: string | null; applied_at: string | null }>`
      select attachment_count, applied_at from applications_flat
      where id = (select min(id) from applications_data)`.execute(
      searchingDatabase(t.database.url),
    );
    expect(rows).toEqual([{ attachment_count: null, applied_at: null }]);
    const change = await refreshTypedView(searchingDatabase(t.database.url), {
      account: 'default',
      view: 'applications_flat',
      table: 'applications_data',
    });
    expect(change).toEqual({
      added: [],
      retyped: ['applied_at: timestamptz → text', 'attachment_count: bigint → numeric'],
    });
    const { rows: after } = await sql<{ attachment_count: string; applied_at: string }>`
      select attachment_count::text, applied_at from applications_flat
      where id = (select min(id) from applications_data)`.execute(
      searchingDatabase(t.database.url),
    );
    expect(after).toEqual([{ attachment_count: '2.5', applied_at: 'soon' }]);
  });

  it('keep the column of a key that no longer appears, null', async () => {
    const t = await startApplications();
    await t.sync(['applications']);
    // The API stops sending the key (as pages would write the records).
    await sql`update applications_data set data = data - 'prospect', changed_at = clock_timestamp()`.execute(
      searchingDatabase(t.database.url),
    );
    expect(
      await refreshTypedView(searchingDatabase(t.database.url), {
        account: 'default',
        view: 'applications_flat',
        table: 'applications_data',
      }),
    ).toEqual({ added: [], retyped: [] });
    expect(await columnsOf(searchingDatabase(t.database.url), 'applications_flat')).toContainEqual([
      'prospect',
      'boolean',
    ]);
    const { rows } = await sql<{ n: string }>`
      select count(prospect) as n from applications_flat`.execute(
      searchingDatabase(t.database.url),
    );
    expect(rows[0]?.n).toBe('0');
  });

  it('give odd keys safe column names, and do nothing more when nothing changed', async () => {
    const t = await startApplications();
    await sql`insert into jobs (id, data) values
      (1, '{"id": 1, "Weird Key": 1, "deleted_at": "x", "2nd": true, "id ": null}')`.execute(
      searchingDatabase(t.database.url),
    );
    const target = { view: 'jobs_flat', table: 'jobs', account: 'default' };
    const db = searchingDatabase(t.database.url);
    expect(await refreshTypedView(db, target)).toEqual({
      added: ['2nd', 'Weird Key', 'deleted_at', 'id '],
      retyped: [],
    });
    expect(
      (await columnsOf(searchingDatabase(t.database.url), 'jobs_flat')).map(([n]) => n),
    ).toEqual([
      'id',
      'k_2nd__1',
      'weird_key__1',
      'deleted_at__1',
      'id__1',
      'deleted_at',
      'changed_at',
      'synced_at',
    ]);
    const { rows } = await sql`select * from jobs_flat`.execute(searchingDatabase(t.database.url));
    expect(rows).toEqual([
      {
        id: '1',
        k_2nd__1: true,
        weird_key__1: '1',
        deleted_at__1: 'x',
        id__1: null,
        deleted_at: null,
        changed_at: expect.any(Date),
        synced_at: expect.any(Date),
      },
    ]);
    expect(await refreshTypedView(db, target)).toEqual({ added: [], retyped: [] });
  });

  it('stop at MAX_TYPED_COLUMNS key columns, saying how many keys stay in data only', async () => {
    const t = await startApplications();
    const record = Object.fromEntries(
      Array.from({ length: MAX_TYPED_COLUMNS + 5 }, (_, i) => [
        `k${String(i).padStart(4, '0')}`,
        i,
      ]),
    );
    await sql`insert into jobs (id, data) values (1, ${JSON.stringify({ id: 1, ...record })}::jsonb)`.execute(
      searchingDatabase(t.database.url),
    );
    const change = await refreshTypedView(searchingDatabase(t.database.url), {
      account: 'default',
      view: 'jobs_flat',
      table: 'jobs',
    });
    expect(change.added).toHaveLength(MAX_TYPED_COLUMNS);
    expect(change.warning).toMatch(
      /has 1000 key columns, the most it gets: 5 more key\(s\) stay in jobs\.data only/,
    );
    // id, the keys' columns, deleted_at, changed_at and synced_at.
    expect(await columnsOf(searchingDatabase(t.database.url), 'jobs_flat')).toHaveLength(
      MAX_TYPED_COLUMNS + 4,
    );
  });

  it("keep an analyst's own view on them, appending a column for a key that appears", async () => {
    const t = await startApplications();
    await t.sync(['jobs']);
    await sql`create view my_report as select id, status from jobs_flat`.execute(
      searchingDatabase(t.database.url),
    );
    await sql`update jobs set data = data || '{"office": "Berlin"}', changed_at = clock_timestamp()`.execute(
      searchingDatabase(t.database.url),
    );
    const change = await refreshTypedView(searchingDatabase(t.database.url), {
      account: 'default',
      view: 'jobs_flat',
      table: 'jobs',
    });
    expect(change).toEqual({ added: ['office'], retyped: [] });
    expect(
      (await columnsOf(searchingDatabase(t.database.url), 'jobs_flat')).map(([n]) => n).slice(-2),
    ).toEqual(['synced_at', 'office']);
    const { rows } = await sql<{ n: string }>`select count(*) as n from my_report`.execute(
      searchingDatabase(t.database.url),
    );
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);
    // Once it is gone, the next change puts the columns back in key order.
    await sql`drop view my_report`.execute(searchingDatabase(t.database.url));
    await sql`update jobs set data = data || '{"floor": 3}', changed_at = clock_timestamp()`.execute(
      searchingDatabase(t.database.url),
    );
    await refreshTypedView(searchingDatabase(t.database.url), {
      account: 'default',
      view: 'jobs_flat',
      table: 'jobs',
    });
    expect(
      (await columnsOf(searchingDatabase(t.database.url), 'jobs_flat')).map(([n]) => n).at(-1),
    ).toBe('synced_at');
  });

  it('are unioned across accounts with every column any account has', async () => {
    const t = await startAccountsHarness({ accounts: ['alpha'] });
    harnesses.push(t);
    await t.sync([
      { account: 'default', resource: 'jobs' },
      { account: 'alpha', resource: 'jobs' },
    ]);
    // A key named like the union's own first column, and one only alpha has.
    await sql`update alpha.jobs set data = data || '{"office": "Berlin", "account": "x"}', changed_at = clock_timestamp()`.execute(
      searchingDatabase(t.database.url),
    );
    await refreshTypedView(searchingDatabase(t.database.url), {
      account: 'alpha',
      view: 'jobs_flat',
      table: 'jobs',
    });
    expect(
      (await columnsOf(searchingDatabase(t.database.url), 'jobs_flat', 'all_accounts')).map(
        ([n]) => n,
      ),
    ).toEqual([
      'account',
      'id',
      'account__1',
      'closed_at',
      'confidential',
      'created_at',
      'department_id',
      'is_template',
      'name',
      'office',
      'opened_at',
      'requisition_id',
      'status',
      'updated_at',
      'deleted_at',
      'changed_at',
      'synced_at',
    ]);
    const { rows } = await sql<{ account: string; offices: string; rows: string }>`
      select account, count(office) as offices, count(*) as rows
      from all_accounts.jobs_flat group by account order by account`.execute(
      searchingDatabase(t.database.url),
    );
    expect(rows.map((r) => [r.account, Number(r.offices) > 0, Number(r.rows) > 0])).toEqual([
      ['alpha', true, true],
      ['default', false, true],
    ]);
  });
});

const jobsFlat = { view: 'jobs_flat', table: 'jobs' };

describe('typed view column names', () => {
  it('give a plain key its own name, and a key that must change a suffixed one, the same in every account and every refresh', async () => {
    const t = await startAccountsHarness({ accounts: ['alpha'] });
    harnesses.push(t);
    const db = searchingDatabase(t.database.url);
    // alpha meets the changed keys first, alone.
    await sql`insert into alpha.jobs (id, data) values
      (1, '{"id": 1, "Name": "upper", "first-name": "dash", "account": "acc"}')`.execute(db);
    await refreshTypedView(db, { ...jobsFlat, account: 'alpha' });
    await sql`insert into jobs (id, data) values
      (1, '{"id": 1, "Name": "upper", "name": "lower", "first-name": "dash", "first_name": "under", "name__1": "odd"}')`.execute(
      db,
    );
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    // Later, alpha gets the plain keys too.
    await sql`insert into alpha.jobs (id, data) values
      (2, '{"id": 2, "name": "lower", "first_name": "under"}')`.execute(db);
    await refreshTypedView(db, { ...jobsFlat, account: 'alpha' });
    const expected = {
      name: 'lower',
      name__1: 'upper',
      first_name: 'under',
      first_name__1: 'dash',
    };
    const { rows: own } = await sql<Record<string, string>>`
      select name, name__1, first_name, first_name__1, name__1__1 from jobs_flat`.execute(db);
    expect(own).toEqual([{ ...expected, name__1__1: 'odd' }]);
    const { rows: alpha } = await sql<Record<string, string | null>>`
      select id, name, name__1, first_name, first_name__1, account__1 from alpha.jobs_flat order by id`.execute(
      db,
    );
    expect(alpha).toEqual([
      {
        id: '1',
        name: null,
        name__1: 'upper',
        first_name: null,
        first_name__1: 'dash',
        account__1: 'acc',
      },
      {
        id: '2',
        name: 'lower',
        name__1: null,
        first_name: 'under',
        first_name__1: null,
        account__1: null,
      },
    ]);
    // The union never puts two keys in one column.
    const { rows: union } = await sql<{ name: string | null; name__1: string | null }>`
      select distinct name, name__1 from all_accounts.jobs_flat
      where id in (1, 2) order by 1, 2`.execute(db);
    expect(union).toEqual([
      { name: 'lower', name__1: 'upper' },
      { name: 'lower', name__1: null },
      { name: null, name__1: 'upper' },
    ]);
  });

  it('rename a column named under the old rule at the next refresh, and say so', async () => {
    const t = await startApplications();
    const db = searchingDatabase(t.database.url);
    await sql`insert into jobs (id, data) values (1, '{"id": 1, "Name": "upper"}')`.execute(db);
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    // As the old rule left it: the changed key Name took the bare name.
    await sql`update typed_view_columns set column_name = 'name' where view = 'jobs_flat' and key = 'Name'`.execute(
      db,
    );
    await sql`drop view all_accounts.jobs_flat`.execute(db);
    await sql`drop view jobs_flat`.execute(db);
    await sql`create view jobs_flat as select id, data ->> 'Name' as name, deleted_at from jobs`.execute(
      db,
    );
    const change = await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    expect(change.renamed).toEqual(['Name: name → name__1']);
    expect((await columnsOf(db, 'jobs_flat')).map(([n]) => n)).toContain('name__1');
    expect((await columnsOf(db, 'jobs_flat')).map(([n]) => n)).not.toContain('name');
  });
});

describe('typed view timestamps', () => {
  it('read _at values without an offset as UTC, the same under any TimeZone and DateStyle', async () => {
    const t = await startApplications();
    const db = searchingDatabase(t.database.url);
    await sql`insert into jobs (id, data) values
      (1, '{"id": 1, "local_at": "2024-03-01T10:00:00", "day_at": "2024-03-01", "zulu_at": "2024-03-01T10:00:00Z", "spaced_at": "2024-03-01 10:00:00.123456"}')`.execute(
      db,
    );
    // Typed in a session of another zone and style than the readers'.
    const url = new URL(t.database.url);
    url.searchParams.set('options', '-c TimeZone=America/Los_Angeles -c DateStyle=SQL,DMY');
    const elsewhere = createDatabase(url.href, { max: 1 });
    try {
      await refreshTypedView(elsewhere, { ...jobsFlat, account: 'default' });
    } finally {
      await elsewhere.destroy();
    }
    const read = (zone: string, style: string) =>
      db.transaction().execute(async (trx) => {
        await sql`select set_config('timezone', ${zone}, true), set_config('datestyle', ${style}, true)`.execute(
          trx,
        );
        const { rows } = await sql<Record<string, string>>`
          select extract(epoch from local_at)::text as local_at, extract(epoch from day_at)::text as day_at,
                 extract(epoch from zulu_at)::text as zulu_at, extract(epoch from spaced_at)::text as spaced_at
          from jobs_flat where id = 1`.execute(trx);
        return rows[0];
      });
    const utc = await read('UTC', 'ISO, MDY');
    expect(await read('Asia/Tokyo', 'ISO, MDY')).toEqual(utc);
    expect(await read('Asia/Tokyo', 'SQL, DMY')).toEqual(utc);
    const epoch = (iso: string) => String(Date.parse(iso) / 1000);
    expect(utc).toEqual({
      local_at: `${epoch('2024-03-01T10:00:00Z')}.000000`,
      day_at: `${epoch('2024-03-01T00:00:00Z')}.000000`,
      zulu_at: `${epoch('2024-03-01T10:00:00Z')}.000000`,
      spaced_at: `${epoch('2024-03-01T10:00:00Z')}.123456`,
    });
    expect((await columnsOf(db, 'jobs_flat')).find(([n]) => n === 'local_at')?.[1]).toBe(
      'timestamp with time zone',
    );
  });
});

describe("typed views an analyst's view depends on", () => {
  it('add new columns at the end, and name the widening it blocks in status, the run and the metric', async () => {
    const t = await startApplications();
    const db = searchingDatabase(t.database.url);
    await t.sync(['jobs']);
    await sql`insert into jobs (id, data) values (1, '{"id": 1, "headcount": 1}')`.execute(db);
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    await sql`create view my_report as select id, headcount from jobs_flat`.execute(db);
    // A value the column cannot show, and a key the view lacks.
    await sql`insert into jobs (id, data) values (2, '{"id": 2, "headcount": 2.5, "office": "Berlin"}')`.execute(
      db,
    );
    const [run] = await t.sync(['jobs'], 'full');
    expect(run?.ok).toBe(true);
    // The new key's column is appended; the analyst's view is still there.
    const names = (await columnsOf(db, 'jobs_flat')).map(([n]) => n);
    expect(names.at(-1)).toBe('office');
    const { rows: office } = await sql<{ office: string | null }>`
      select office from jobs_flat where id = 2`.execute(db);
    expect(office).toEqual([{ office: 'Berlin' }]);
    expect((await sql`select * from my_report`.execute(db)).rows.length).toBeGreaterThan(0);
    // The run's row names the view, the column, the blocking object and the fix.
    const { rows: runs } = await sql<{ warnings: string | null }>`
      select warnings from sync_runs where resource = 'jobs' order by id desc limit 1`.execute(db);
    const warning = runs[0]?.warnings ?? '';
    expect(warning).toContain('public.jobs_flat');
    expect(warning).toContain('headcount: bigint → numeric');
    expect(warning).toContain('public.my_report');
    expect(warning).toContain('hiresync sync --full --resource jobs');
    // status says it too.
    const io = captureIo();
    expect(await main(['status'], t.env, io)).toBe(0);
    expect(io.out()).toContain('public.jobs_flat');
    expect(io.out()).toContain('headcount: bigint → numeric');
    expect(io.out()).toContain('public.my_report');
    // The metric, read from Postgres (as after a restart).
    const metrics = new Metrics({ defaultMetrics: false, db });
    expect(await metrics.registry.metrics()).toContain(
      'hiresync_typed_view_blocked{account="default",view="jobs_flat"} 1',
    );
    // Once the analyst's view is out of the way, the next full run widens the column.
    await sql`drop view my_report`.execute(db);
    await t.sync(['jobs'], 'full');
    expect((await columnsOf(db, 'jobs_flat')).find(([n]) => n === 'headcount')?.[1]).toBe(
      'numeric',
    );
    expect(await metrics.registry.metrics()).toContain(
      'hiresync_typed_view_blocked{account="default",view="jobs_flat"} 0',
    );
    const after = captureIo();
    expect(await main(['status'], t.env, after)).toBe(0);
    expect(after.out()).not.toContain('public.my_report');
  });
});

describe('all_accounts typed views', () => {
  it('take the widest common type of the accounts columns', async () => {
    const t = await startAccountsHarness({ accounts: ['alpha'] });
    harnesses.push(t);
    const db = searchingDatabase(t.database.url);
    await sql`insert into jobs (id, data) values (1, '{"id": 1, "score": 3}')`.execute(db);
    await sql`insert into alpha.jobs (id, data) values (1, '{"id": 1, "score": 2.5}')`.execute(db);
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    await refreshTypedView(db, { ...jobsFlat, account: 'alpha' });
    expect((await columnsOf(db, 'jobs_flat', 'all_accounts')).find(([n]) => n === 'score')).toEqual(
      ['score', 'numeric'],
    );
    const { rows } = await sql<{ account: string; score: string }>`
      select account, score::text from all_accounts.jobs_flat where id = 1 order by account`.execute(
      db,
    );
    expect(rows).toEqual([
      { account: 'alpha', score: '2.5' },
      { account: 'default', score: '3' },
    ]);
  });

  it("never make migrate, accounts add or a run fail, and keep the analyst's view on them", async () => {
    const t = await startAccountsHarness({ accounts: ['alpha'] });
    harnesses.push(t);
    const db = searchingDatabase(t.database.url);
    await t.sync([
      { account: 'default', resource: 'jobs' },
      { account: 'alpha', resource: 'jobs' },
    ]);
    await sql`create view public.my_union as select account, id, name from all_accounts.jobs_flat`.execute(
      db,
    );
    await sql`create view public.my_runs as select account, id from all_accounts.sync_runs`.execute(
      db,
    );
    const still = async () => {
      const { rows } = await sql<{ n: string }>`select count(*) as n from public.my_union`.execute(
        db,
      );
      return Number(rows[0]?.n);
    };
    // migrate
    await migrateAll(db);
    expect(await still()).toBeGreaterThan(0);
    // accounts add
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
    await migrateAll(db);
    expect(await still()).toBeGreaterThan(0);
    // A full run whose data brings a new key.
    await sql`insert into alpha.jobs (id, data) values (1, '{"id": 1, "office": "Berlin"}')`.execute(
      db,
    );
    const [run] = await t.sync([{ account: 'alpha', resource: 'jobs' }], 'full');
    expect(run?.ok).toBe(true);
    expect(await still()).toBeGreaterThan(0);
    expect((await columnsOf(db, 'jobs_flat', 'all_accounts')).map(([n]) => n).at(-1)).toBe(
      'office',
    );
    const { rows } = await sql<{ office: string }>`
      select office from all_accounts.jobs_flat where account = 'alpha' and id = 1`.execute(db);
    expect(rows).toEqual([{ office: 'Berlin' }]);
  });

  it('keep the old union and say why when a column must widen under an analyst view', async () => {
    const t = await startAccountsHarness({ accounts: ['alpha'] });
    harnesses.push(t);
    const db = searchingDatabase(t.database.url);
    await sql`insert into jobs (id, data) values (1, '{"id": 1, "score": 3}')`.execute(db);
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    await sql`create view public.my_scores as select account, score from all_accounts.jobs_flat`.execute(
      db,
    );
    await sql`insert into alpha.jobs (id, data) values (1, '{"id": 1, "score": 2.5}')`.execute(db);
    const change = await refreshTypedView(db, { ...jobsFlat, account: 'alpha' });
    expect(change.warning).toMatch(
      /all_accounts\.jobs_flat.*score: bigint → numeric.*public\.my_scores/,
    );
    // alpha's own view shows the value; the union keeps its type and its dependent.
    const { rows } = await sql<{ score: string }>`select score::text from alpha.jobs_flat`.execute(
      db,
    );
    expect(rows).toEqual([{ score: '2.5' }]);
    expect((await columnsOf(db, 'jobs_flat', 'all_accounts')).find(([n]) => n === 'score')).toEqual(
      ['score', 'bigint'],
    );
    const metrics = new Metrics({ defaultMetrics: false, db });
    expect(await metrics.registry.metrics()).toContain(
      'hiresync_typed_view_blocked{account="all_accounts",view="jobs_flat"} 1',
    );
  });
});
