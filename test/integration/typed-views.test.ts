import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { schemaOf } from '../../src/accounts/account.js';
import { inSchema } from '../../src/warehouse/database.js';
import { MAX_TYPED_COLUMNS, refreshTypedView } from '../../src/warehouse/typed-view.js';
import { type AccountsHarness, startAccountsHarness } from '../support/accounts-harness.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

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

describe('typed views', () => {
  it('give each top-level key a column typed from its values, after the first full run', async () => {
    const t = await startApplications();
    expect(await columnsOf(t.database.db, 'jobs_flat')).toEqual([
      ['id', 'bigint'],
      ['deleted_at', 'timestamp with time zone'],
    ]);
    await t.sync(['applications', 'jobs']);
    expect(await columnsOf(t.database.db, 'applications_flat')).toEqual([
      ['id', 'bigint'],
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
      ['deleted_at', 'timestamp with time zone'],
    ]);
    expect((await columnsOf(t.database.db, 'jobs_flat')).map(([name]) => name)).toEqual([
      'id',
      'created_at',
      'name',
      'requisition_id',
      'status',
      'updated_at',
      'deleted_at',
    ]);
    // The values are the records' own, at the precision sent.
    const { rows } = await sql<{ same: boolean }>`
      select bool_and(
        f.score is not distinct from (a.data ->> 'score')::numeric
        and f.applied_at = (a.data ->> 'applied_at')::timestamptz
        and f.expected_start_on is not distinct from (a.data ->> 'expected_start_on')::date
        and f.prospect = (a.data -> 'prospect')::boolean
        and f.source is not distinct from a.data -> 'source'
        and f.external_ref is not distinct from a.data ->> 'external_ref') as same
      from applications_flat f join applications a using (id)`.execute(t.database.db);
    expect(rows[0]?.same).toBe(true);
    // Every column says which key it shows.
    const { rows: comments } = await sql<{ name: string; comment: string | null }>`
      select a.attname as name, col_description(a.attrelid, a.attnum) as comment
      from pg_attribute a where a.attrelid = 'applications_flat'::regclass and a.attnum > 0`.execute(
      t.database.db,
    );
    expect(comments.find((c) => c.name === 'score')?.comment).toBe(
      'Key "score" of the record as sent (data -> "score"), as numeric.',
    );
    expect(comments.every((c) => (c.comment ?? '') !== '')).toBe(true);
  });

  it('add a column for a key that appears later, at the next full run, and log it', async () => {
    const t = await startApplications();
    await t.sync(['applications']);
    expect((await columnsOf(t.database.db, 'applications_flat')).map(([n]) => n)).not.toContain(
      'location',
    );
    // Applications created from now on carry a location.
    t.sim.dataset.grow('applications', 10);
    await t.sync(['applications']);
    // An incremental run stores them, and leaves the view alone.
    expect((await columnsOf(t.database.db, 'applications_flat')).map(([n]) => n)).not.toContain(
      'location',
    );
    await t.sync(['applications'], 'full');
    expect(await columnsOf(t.database.db, 'applications_flat')).toContainEqual([
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
      where id = (select min(id) from applications_data)`.execute(t.database.db);
    const { rows } = await sql<{ attachment_count: string | null; applied_at: string | null }>`
      select attachment_count, applied_at from applications_flat
      where id = (select min(id) from applications_data)`.execute(t.database.db);
    expect(rows).toEqual([{ attachment_count: null, applied_at: null }]);
    const change = await refreshTypedView(inSchema(t.database.db, 'public'), {
      view: 'applications_flat',
      table: 'applications_data',
    });
    expect(change).toEqual({
      added: [],
      retyped: ['applied_at: timestamptz → text', 'attachment_count: bigint → numeric'],
    });
    const { rows: after } = await sql<{ attachment_count: string; applied_at: string }>`
      select attachment_count::text, applied_at from applications_flat
      where id = (select min(id) from applications_data)`.execute(t.database.db);
    expect(after).toEqual([{ attachment_count: '2.5', applied_at: 'soon' }]);
  });

  it('keep the column of a key that no longer appears, null', async () => {
    const t = await startApplications();
    await t.sync(['applications']);
    // The API stops sending the key (as pages would write the records).
    await sql`update applications_data set data = data - 'prospect', changed_at = clock_timestamp()`.execute(
      t.database.db,
    );
    expect(
      await refreshTypedView(inSchema(t.database.db, 'public'), {
        view: 'applications_flat',
        table: 'applications_data',
      }),
    ).toEqual({ added: [], retyped: [] });
    expect(await columnsOf(t.database.db, 'applications_flat')).toContainEqual([
      'prospect',
      'boolean',
    ]);
    const { rows } = await sql<{ n: string }>`
      select count(prospect) as n from applications_flat`.execute(t.database.db);
    expect(rows[0]?.n).toBe('0');
  });

  it('give odd keys safe column names, and do nothing more when nothing changed', async () => {
    const t = await startApplications();
    await sql`insert into jobs (id, data) values
      (1, '{"id": 1, "Weird Key": 1, "deleted_at": "x", "2nd": true, "id ": null}')`.execute(
      t.database.db,
    );
    const target = { view: 'jobs_flat', table: 'jobs' };
    const db = inSchema(t.database.db, 'public');
    expect(await refreshTypedView(db, target)).toEqual({
      added: ['2nd', 'Weird Key', 'deleted_at', 'id '],
      retyped: [],
    });
    expect((await columnsOf(t.database.db, 'jobs_flat')).map(([n]) => n)).toEqual([
      'id',
      'k_2nd',
      'weird_key',
      'deleted_at_2',
      'id_2',
      'deleted_at',
    ]);
    const { rows } = await sql`select * from jobs_flat`.execute(t.database.db);
    expect(rows).toEqual([
      { id: '1', k_2nd: true, weird_key: '1', deleted_at_2: 'x', id_2: null, deleted_at: null },
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
      t.database.db,
    );
    const change = await refreshTypedView(inSchema(t.database.db, 'public'), {
      view: 'jobs_flat',
      table: 'jobs',
    });
    expect(change.added).toHaveLength(MAX_TYPED_COLUMNS);
    expect(change.warning).toMatch(
      /has 1000 key columns, the most it gets: 5 more key\(s\) stay in jobs\.data only/,
    );
    expect(await columnsOf(t.database.db, 'jobs_flat')).toHaveLength(MAX_TYPED_COLUMNS + 2);
  });

  it("leave the view as it is, with a warning saying what to do, when an analyst's own view depends on it", async () => {
    const t = await startApplications();
    await t.sync(['jobs']);
    await sql`create view my_report as select id, status from jobs_flat`.execute(t.database.db);
    await sql`update jobs set data = data || '{"office": "Berlin"}', changed_at = clock_timestamp()`.execute(
      t.database.db,
    );
    const change = await refreshTypedView(inSchema(t.database.db, 'public'), {
      view: 'jobs_flat',
      table: 'jobs',
    });
    expect(change.added).toEqual([]);
    expect(change.warning).toMatch(
      /^typed view public\.jobs_flat not rebuilt \(new keys: office; widened: none\): public\.my_report depends on it; drop it/,
    );
    expect((await columnsOf(t.database.db, 'jobs_flat')).map(([n]) => n)).not.toContain('office');
    // Dropped, the next refresh catches up with what it skipped.
    await sql`drop view my_report`.execute(t.database.db);
    expect(
      (
        await refreshTypedView(inSchema(t.database.db, 'public'), {
          view: 'jobs_flat',
          table: 'jobs',
        })
      ).added,
    ).toEqual(['office']);
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
      t.database.db,
    );
    await refreshTypedView(inSchema(t.database.db, schemaOf('alpha')), {
      view: 'jobs_flat',
      table: 'jobs',
    });
    expect((await columnsOf(t.database.db, 'jobs_flat', 'all_accounts')).map(([n]) => n)).toEqual([
      'account',
      'id',
      'account_2',
      'created_at',
      'name',
      'office',
      'requisition_id',
      'status',
      'updated_at',
      'deleted_at',
    ]);
    const { rows } = await sql<{ account: string; offices: string; rows: string }>`
      select account, count(office) as offices, count(*) as rows
      from all_accounts.jobs_flat group by account order by account`.execute(t.database.db);
    expect(rows.map((r) => [r.account, Number(r.offices) > 0, Number(r.rows) > 0])).toEqual([
      ['alpha', true, true],
      ['default', false, true],
    ]);
  });
});
