import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { Metrics } from '../../src/status/metrics.js';
import { ALL_ACCOUNTS_LOCK } from '../../src/warehouse/layout/migrate.js';
import { LOCK_SPACE } from '../../src/warehouse/lock-keys.js';
import { migrateAll, migrateSchema } from '../../src/warehouse/setup/migrate-all.js';
import { refreshTypedView } from '../../src/warehouse/typed-views/refresh-typed-view.js';
import { type AccountsHarness, startAccountsHarness } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { closeSearchingDatabases, searchingDatabase } from '../support/searching-database.js';

// The test's own SQL names the account's relations unqualified, as an analyst's session would.
afterAll(closeSearchingDatabases);

// The rule these tests hold hiresync to: a value an analyst reads through a
// typed view or an all_accounts union is the value the API sent, or visibly
// absent with the reason (hiresync.typed_view_blocks, which status and the
// metric read, and the run's sync_runs.warnings); never silently null.

const harnesses: AccountsHarness[] = [];
const clients: pg.Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.end().catch(() => undefined);
  for (const h of harnesses.splice(0)) await h.close();
});

const jobsFlat = { view: 'jobs_flat', table: 'jobs' };
type Db = AccountsHarness['database']['db'];

async function start(accounts: string[] = ['alpha']): Promise<AccountsHarness> {
  const t = await startAccountsHarness({ accounts });
  harnesses.push(t);
  return t;
}

/** A second session, as an analyst's tool or a migration would hold one. */
async function session(t: AccountsHarness): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: t.database.url });
  await client.connect();
  clients.push(client);
  return client;
}

/** The views blocked now, as `schema.view`, with their messages. */
async function blocked(db: Db): Promise<Array<{ view: string; message: string }>> {
  const { rows } = await sql<{ view: string; message: string }>`
    select schema || '.' || view as view, message from hiresync.typed_view_blocks
    where message is not null order by 1`.execute(db);
  return rows;
}

async function first<T>(db: Db, query: ReturnType<typeof sql<T>>): Promise<T | undefined> {
  return (await query.execute(db)).rows[0];
}

async function count(db: Db, relation: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from ${sql.raw(relation)}`.execute(
    db,
  );
  return Number(rows[0]?.n);
}

async function metricLines(db: Db): Promise<string[]> {
  const text = await new Metrics({ defaultMetrics: false, db }).registry.metrics();
  return text.split('\n').filter((l) => l.startsWith('hiresync_typed_view_blocked{'));
}

async function lastRunWarnings(db: Db, schema = 'public'): Promise<string> {
  const row = await first(
    db,
    sql<{ warnings: string | null }>`
      select warnings from ${sql.id(schema, 'sync_runs')} order by id desc limit 1`,
  );
  return row?.warnings ?? '';
}

/**
 * Puts public's jobs_flat and all_accounts.jobs_flat as hiresync built them
 * before the naming rule of issue 19: key `firstName` in column `firstname`.
 */
async function buildUnderOldRule(db: Db): Promise<void> {
  await sql`insert into jobs (id, data) values (1, '{"id": 1, "firstName": "Ada"}')`.execute(db);
  await refreshTypedView(db, { ...jobsFlat, account: 'default' });
  await sql`update typed_view_columns set column_name = 'firstname'
    where view = 'jobs_flat' and key = 'firstName'`.execute(db);
  await sql`drop view all_accounts.jobs_flat`.execute(db);
  await sql`drop view jobs_flat`.execute(db);
  await sql`create view jobs_flat as
    select id, data ->> 'firstName' as firstname, deleted_at from jobs`.execute(db);
  await sql`create view all_accounts.jobs_flat as
    select 'default'::text as account, id, firstname, deleted_at from public.jobs_flat`.execute(db);
}

describe('a column named under the earlier naming rule', () => {
  it("keeps its values under an analyst's view at every later refresh of the account's view", async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await buildUnderOldRule(db);
    await sql`create view my_people as select id, firstname from jobs_flat`.execute(db);
    const read = async () =>
      (await first(db, sql<{ firstname: string | null }>`select firstname from my_people`))
        ?.firstname;
    const renamed = await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    expect(renamed.renamed).toEqual(['firstName: firstname → firstname__1']);
    expect(await read()).toBe('Ada');
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    expect(await read()).toBe('Ada');
    await sql`update jobs set data = data || '{"office": "Berlin"}', changed_at = now()`.execute(
      db,
    );
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    expect(await read()).toBe('Ada');
    expect(
      await first(db, sql<{ firstname__1: string }>`select firstname__1 from jobs_flat`),
    ).toEqual({ firstname__1: 'Ada' });
    expect(await blocked(db)).toEqual([]);
  });

  it("keeps its values under an analyst's view on the union, through migrate and the account's renaming refreshes", async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await buildUnderOldRule(db);
    await sql`create view public.my_union as
      select account, firstname from all_accounts.jobs_flat`.execute(db);
    const read = async () =>
      (await first(db, sql<{ firstname: string | null }>`select firstname from public.my_union`))
        ?.firstname;
    await migrateAll(db);
    expect(await read()).toBe('Ada');
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    expect(await read()).toBe('Ada');
    const outcome = await migrateAll(db);
    expect(await read()).toBe('Ada');
    expect(outcome.warnings).toEqual([]);
    expect(await blocked(db)).toEqual([]);
  });

  it('that maps to no key any more is signalled, in the account view and the union, never a silent null', async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await sql`insert into jobs (id, data) values (1, '{"id": 1, "firstName": "Ada"}')`.execute(db);
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    // Views whose column `firstname` no record of hiresync's ties to a key.
    await sql`drop view all_accounts.jobs_flat`.execute(db);
    await sql`drop view jobs_flat`.execute(db);
    await sql`create view jobs_flat as
      select id, null::text as firstname, data ->> 'firstName' as firstname__1, deleted_at from jobs`.execute(
      db,
    );
    await sql`create view all_accounts.jobs_flat as
      select 'default'::text as account, id, null::text as firstname, deleted_at from public.jobs`.execute(
      db,
    );
    await sql`create view public.my_people as select id, firstname from jobs_flat`.execute(db);
    await sql`create view public.my_union as select account, firstname from all_accounts.jobs_flat`.execute(
      db,
    );
    await sql`update jobs set changed_at = now()`.execute(db);
    const change = await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    expect(change.warning).toContain('firstname');
    const outcome = await migrateAll(db);
    const views = await blocked(db);
    expect(views.map((b) => b.view)).toEqual(['all_accounts.jobs_flat', 'public.jobs_flat']);
    for (const { message } of views) {
      expect(message).toContain('firstname');
      expect(message).toContain('shows no key');
    }
    expect(outcome.warnings.join('\n')).toContain('all_accounts.jobs_flat');
    expect(await metricLines(db)).toEqual([
      'hiresync_typed_view_blocked{account="all_accounts",view="jobs_flat"} 1',
      'hiresync_typed_view_blocked{account="default",view="jobs_flat"} 1',
    ]);
  });
});

describe('a typed view refresh that cannot finish', () => {
  it("is signalled in the run, status and the metric when an analyst's open transaction holds its lock, and cleared by the next full run", async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await t.sync([{ account: 'default', resource: 'jobs' }], 'full');
    await sql`insert into jobs (id, data) values (100001, '{"id": 100001, "headcount": 1}')`.execute(
      db,
    );
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    await sql`update jobs set data = '{"id": 100001, "headcount": 1.5}', changed_at = now()
      where id = 100001`.execute(db);
    const analyst = await session(t);
    await analyst.query('begin');
    await analyst.query('select count(*) from jobs_flat');
    const [run] = await t.sync([{ account: 'default', resource: 'jobs' }], 'full');
    await analyst.query('rollback');
    expect(run?.ok).toBe(true);
    const warning = await lastRunWarnings(db);
    expect(warning).toContain('public.jobs_flat');
    expect(warning).toContain('could not be refreshed');
    expect(warning).toContain('hiresync sync --full --resource jobs');
    expect((await blocked(db)).map((b) => b.view)).toEqual(['public.jobs_flat']);
    const io = captureIo();
    expect(await main(['status'], t.env, io)).toBe(0);
    expect(io.out()).toContain('public.jobs_flat could not be refreshed');
    expect(await metricLines(db)).toContain(
      'hiresync_typed_view_blocked{account="default",view="jobs_flat"} 1',
    );
    // The lock is gone: the next full run refreshes the view and clears the signal.
    const [again] = await t.sync([{ account: 'default', resource: 'jobs' }], 'full');
    expect(again?.ok).toBe(true);
    expect(
      await first(
        db,
        sql<{ headcount: string }>`select headcount::text from jobs_flat where id = 100001`,
      ),
    ).toEqual({ headcount: '1.5' });
    expect(await blocked(db)).toEqual([]);
    expect(await metricLines(db)).toContain(
      'hiresync_typed_view_blocked{account="default",view="jobs_flat"} 0',
    );
  }, 90_000);

  it("still rebuilds the account's own view when a long query holds the union, signals the union, and rebuilds it at the next full run", async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await t.sync([{ account: 'default', resource: 'jobs' }], 'full');
    await sql`insert into jobs (id, data) values (100001, '{"id": 100001, "headcount": 1}')`.execute(
      db,
    );
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    await sql`update jobs set data = '{"id": 100001, "headcount": 1.5}', changed_at = now()
      where id = 100001`.execute(db);
    const analyst = await session(t);
    await analyst.query('begin');
    await analyst.query('select count(*) from all_accounts.jobs_flat');
    const [run] = await t.sync([{ account: 'default', resource: 'jobs' }], 'full');
    await analyst.query('rollback');
    expect(run?.ok).toBe(true);
    expect(
      await first(
        db,
        sql<{ headcount: string }>`select headcount::text from public.jobs_flat where id = 100001`,
      ),
    ).toEqual({ headcount: '1.5' });
    expect((await blocked(db)).map((b) => b.view)).toEqual(['all_accounts.jobs_flat']);
    expect(await lastRunWarnings(db)).toContain('all_accounts.jobs_flat could not be refreshed');
    const [again] = await t.sync([{ account: 'default', resource: 'jobs' }], 'full');
    expect(again?.ok).toBe(true);
    expect(
      await first(
        db,
        sql<{ headcount: string }>`
          select headcount::text from all_accounts.jobs_flat where account = 'default' and id = 100001`,
      ),
    ).toEqual({ headcount: '1.5' });
    expect(await blocked(db)).toEqual([]);
  }, 90_000);

  it('never waits on the union lock when the union already has its columns: first syncs of many accounts run in parallel', async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await sql`insert into alpha.jobs (id, data) values (1, '{"id": 1, "office": "Berlin"}')`.execute(
      db,
    );
    await sql`insert into jobs (id, data) values (2, '{"id": 2, "office": "Paris"}')`.execute(db);
    // The first account's refresh brings the column into the union.
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    const holder = await session(t);
    await holder.query('begin');
    // Someone holds the union's lock (a rebuild of the all_accounts views).
    await holder.query('select pg_advisory_xact_lock($1::int, $2::int)', [
      LOCK_SPACE,
      ALL_ACCOUNTS_LOCK,
    ]);
    const refresh = await refreshTypedView(db, { ...jobsFlat, account: 'alpha' }).then(
      () => 'refresh ok',
      (e: Error) => `refresh failed: ${e.message}`,
    );
    await holder.query('rollback');
    expect(refresh).toBe('refresh ok');
    expect(await first(db, sql<{ office: string }>`select office from alpha.jobs_flat`)).toEqual({
      office: 'Berlin',
    });
    const { rows } = await sql<{ account: string; office: string }>`
      select account, office from all_accounts.jobs_flat order by account`.execute(db);
    expect(rows).toEqual([
      { account: 'alpha', office: 'Berlin' },
      { account: 'default', office: 'Paris' },
    ]);
  }, 60_000);
});

describe("an analyst's SQL function", () => {
  it('on a union never makes migrate fail, and keeps working', async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await t.sync([{ account: 'alpha', resource: 'jobs' }]);
    await sql`create function public.job_count() returns bigint language sql
      begin atomic select count(*) from all_accounts.jobs; end`.execute(db);
    await migrateAll(db);
    expect(await first(db, sql<{ n: string }>`select public.job_count()::text as n`)).toEqual({
      n: String(await count(db, 'alpha.jobs')),
    });
  });

  it("on an account's typed view never makes its refresh fail, and keeps working", async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await sql`insert into jobs (id, data) values (1, '{"id": 1, "office": "Berlin"}')`.execute(db);
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    await sql`create function public.offices() returns bigint language sql
      begin atomic select count(office) from public.jobs_flat; end`.execute(db);
    await sql`update jobs set data = data || '{"floor": 3}', changed_at = now()`.execute(db);
    const change = await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    expect(change.added).toEqual(['floor']);
    expect(await first(db, sql<{ floor: string }>`select floor::text from jobs_flat`)).toEqual({
      floor: '3',
    });
    expect(await first(db, sql<{ n: string }>`select public.offices()::text as n`)).toEqual({
      n: '1',
    });
  });
});

describe('a release that changes a shared table', () => {
  it("leaves the unions an analyst's view depends on with every row, and the account's views with the new column", async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await t.sync([
      { account: 'default', resource: 'jobs' },
      { account: 'alpha', resource: 'jobs' },
    ]);
    await sql`create view public.my_union as select account, id, name from all_accounts.jobs_flat`.execute(
      db,
    );
    await sql`create view public.my_jobs as select account, id from all_accounts.jobs`.execute(db);
    const before = [await count(db, 'public.my_union'), await count(db, 'public.my_jobs')];
    expect(before[0]).toBeGreaterThan(0);
    // What a release's migration of the shared tables does, then migrate's views of alpha.
    await sql`alter table hiresync.data_jobs add column probe int`.execute(db);
    expect((await migrateSchema(db, 'alpha')).applied).toEqual(['shared storage views']);
    expect([await count(db, 'public.my_union'), await count(db, 'public.my_jobs')]).toEqual(before);
    expect(await count(db, 'alpha.jobs where probe is null')).toBe(await count(db, 'alpha.jobs'));
  });
});

describe('typed view timestamps', () => {
  it('built before the UTC reading read offset-less values as UTC right after migrate, under any TimeZone', async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await sql`insert into jobs (id, data) values (1, '{"id": 1, "local_at": "2024-03-01T10:00:00"}')`.execute(
      db,
    );
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    // As hiresync built it before try_timestamptz_utc.
    await sql`drop view all_accounts.jobs_flat`.execute(db);
    await sql`drop view jobs_flat`.execute(db);
    await sql`create view jobs_flat as
      select id, hiresync.try_timestamptz(data -> 'local_at') as local_at, deleted_at from jobs`.execute(
      db,
    );
    await migrateAll(db);
    for (const zone of ['UTC', 'Asia/Tokyo', 'America/New_York']) {
      const epoch = await db.transaction().execute(async (trx) => {
        await sql`select set_config('timezone', ${zone}, true)`.execute(trx);
        await sql`select set_config('datestyle', 'SQL, DMY', true)`.execute(trx);
        const { rows } = await sql<{ at: string }>`
          select extract(epoch from local_at)::bigint::text as at from public.jobs_flat`.execute(
          trx,
        );
        return rows[0]?.at;
      });
      expect([zone, epoch]).toEqual([zone, String(Date.UTC(2024, 2, 1, 10) / 1000)]);
    }
  });

  it('read a zone abbreviation as the same instant under any timezone_abbreviations', async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await sql`insert into jobs (id, data) values (1, '{"id": 1, "posted_at": "2024-01-01 10:00:00 EST", "seen_at": "2024-01-01 10:00:00 EST"}')`.execute(
      db,
    );
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    // seen_at as a view built before try_timestamptz_utc reads it.
    await sql`drop view all_accounts.jobs_flat`.execute(db);
    await sql`drop view jobs_flat`.execute(db);
    await sql`create view jobs_flat as
      select id, hiresync.try_timestamptz_utc(data -> 'posted_at') as posted_at,
        hiresync.try_timestamptz(data -> 'seen_at') as seen_at, deleted_at from jobs`.execute(db);
    for (const abbreviations of ['Default', 'Australia', 'India']) {
      const read = await db.transaction().execute(async (trx) => {
        await sql`select set_config('timezone_abbreviations', ${abbreviations}, true)`.execute(trx);
        const { rows } = await sql<{ posted: string; seen: string }>`
          select extract(epoch from posted_at)::bigint::text as posted,
            extract(epoch from seen_at)::bigint::text as seen from jobs_flat`.execute(trx);
        return rows[0];
      });
      // EST of the Default set: UTC-5.
      const instant = String(Date.UTC(2024, 0, 1, 15) / 1000);
      expect([abbreviations, read]).toEqual([abbreviations, { posted: instant, seen: instant }]);
    }
  });
});

describe('a union column kept at a wider type than it needs', () => {
  it('is not reported blocked: every value shows', async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await sql`insert into jobs (id, data) values (1, '{"id": 1, "score": 3}')`.execute(db);
    await sql`insert into alpha.jobs (id, data) values (1, '{"id": 1, "score": 2.5}')`.execute(db);
    await refreshTypedView(db, { ...jobsFlat, account: 'default' });
    await refreshTypedView(db, { ...jobsFlat, account: 'alpha' });
    // The union as hiresync built it for bigint and numeric before: text.
    await sql`drop view all_accounts.jobs_flat`.execute(db);
    await sql`create view all_accounts.jobs_flat as
      select 'default'::text as account, id, data ->> 'score' as score, deleted_at from public.jobs
      union all select 'alpha'::text, id, data ->> 'score', deleted_at from alpha.jobs`.execute(db);
    await sql`create view public.my_scores as select account, score from all_accounts.jobs_flat`.execute(
      db,
    );
    const outcome = await migrateAll(db);
    const { rows } = await sql<{ account: string; score: string | null }>`
      select account, score from public.my_scores order by account`.execute(db);
    expect(rows).toEqual([
      { account: 'alpha', score: '2.5' },
      { account: 'default', score: '3' },
    ]);
    expect(outcome.warnings).toEqual([]);
    expect(await blocked(db)).toEqual([]);
    expect(await metricLines(db)).not.toContain(
      'hiresync_typed_view_blocked{account="all_accounts",view="jobs_flat"} 1',
    );
  });
});

describe('the typed view signal of a removed account', () => {
  it('leaves status and the metric once the account is removed without --drop-data', async () => {
    const t = await start();
    const db = searchingDatabase(t.database.url);
    await sql`insert into alpha.jobs (id, data) values (1, '{"id": 1, "headcount": 1}')`.execute(
      db,
    );
    await refreshTypedView(db, { ...jobsFlat, account: 'alpha' });
    await sql`create view alpha.my_report as select id, headcount from alpha.jobs_flat`.execute(db);
    await sql`update alpha.jobs set data = '{"id": 1, "headcount": 1.5}', changed_at = now()`.execute(
      db,
    );
    await refreshTypedView(db, { ...jobsFlat, account: 'alpha' });
    expect(await metricLines(db)).toContain(
      'hiresync_typed_view_blocked{account="alpha",view="jobs_flat"} 1',
    );
    expect(await main(['accounts', 'remove', 'alpha'], t.env, captureIo())).toBe(0);
    expect((await metricLines(db)).filter((l) => l.includes('account="alpha"'))).toEqual([]);
  });
});
