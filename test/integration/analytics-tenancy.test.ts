// The analytics schemas as isolation boundaries (../shared/interface.md,
// "Tenancy" and "Analytics"): a role granted one account reads its analytics
// views and calls its pipeline_as_of, and never has another account's row in
// hand, however it queries; migrate keeps them without widening any grant;
// they go with the account's data.
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ANALYTICS_VIEWS } from '../../src/warehouse/analytics/analytics-views.js';
import { grantAccount } from '../../src/warehouse/layout/account-grants.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { runAccounts } from '../support/accounts-cli.js';
import { storeJanuaryHistory, storeRecruitingWorld } from '../support/analytics-fixture.js';
import { leakyReader, relationsOf, testRole } from '../support/leaky-reader.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer, accounts } = cleanupAfterEach();

/** globex and default with the same world, so every view of each has the other's rows beside it. */
async function twoWorlds() {
  const h = await accounts({ accounts: ['globex'], records: 1 });
  for (const account of ['default', 'globex']) {
    await storeRecruitingWorld(h.database.db, account);
    await storeJanuaryHistory(h.database.db, account);
  }
  return h;
}

/** What `role` gets from each query: its rows as text, or the error. */
async function queryAs(url: string, role: string, queries: readonly string[]) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`set role ${role}`);
    const out: string[] = [];
    for (const query of queries) {
      try {
        out.push(`${(await client.query(query)).rowCount} rows`);
      } catch (error) {
        out.push((error as Error).message.replace(/ for (table|view|schema|function) .*/, ''));
      }
    }
    return out;
  } finally {
    await client.end();
  }
}

describe('an analytics schema as an isolation boundary', () => {
  it("a role granted one account never has another account's row in hand through its analytics views, whatever functions, planner settings or EXPLAIN it uses", async () => {
    const h = await twoWorlds();
    const db = h.database.db;
    const { rows: plain } = await sql<{ view: string }>`
      select n.nspname || '.' || c.relname as view from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      where n.nspname in ('analytics', 'globex_analytics', 'all_accounts') and c.relkind = 'v'
        and c.relname = any(${ANALYTICS_VIEWS.map((v) => v.name)}::text[])
        and not coalesce('security_barrier=true' = any(c.reloptions), false)`.execute(db);
    expect(plain, 'analytics views that are not security barriers').toEqual([]);
    const { role, drop } = await testRole(db);
    defer(drop);
    await grantAccount(db, 'globex', role);
    const reader = await leakyReader(h.database.url, role);
    defer(() => reader.close());
    const relations = await relationsOf(db, 'globex_analytics');
    expect(relations.map((r) => r.relation).sort()).toEqual(
      ANALYTICS_VIEWS.map((v) => v.name).sort(),
    );
    for (const { relation, columns: all } of relations) {
      // time_in_stage's days of a current row run to now(): another value at each statement.
      const columns = all.filter((c) => c !== 'days');
      for (const shape of [columns, columns.slice(0, 1)]) {
        const attempt = await reader.attempt('globex_analytics', relation, shape);
        expect(attempt.readable.size, `${relation} (${shape.join(', ')})`).toBeGreaterThan(0);
        const foreign = [...attempt.seen].filter((row) => !attempt.readable.has(row));
        expect
          .soft(foreign, `globex_analytics.${relation} (${shape.join(', ')}): rows seen`)
          .toEqual([]);
        expect.soft(attempt.explain, `${relation}: EXPLAIN`).not.toContain("'default'");
      }
    }
  });

  it("pipeline_as_of answers a granted role for its account alone; another account's function and the unions are refused", async () => {
    const h = await twoWorlds();
    const db = h.database.db;
    const { role, drop } = await testRole(db);
    defer(drop);
    await grantAccount(db, 'globex', role);
    const client = new pg.Client({ connectionString: h.database.url });
    await client.connect();
    defer(() => client.end());
    await client.query(`set role ${role}`);
    await client.query('create temp table seen (r text)');
    await client.query(`create function pg_temp.leak(r anyelement) returns boolean language plpgsql
      cost 0.0000001 as $$ begin insert into pg_temp.seen values (r::text); return true; end $$`);
    const call = `select * from globex_analytics.pipeline_as_of('2026-01-20T00:00:00Z') t
      where pg_temp.leak(row(t.stage_id, t.entered, t.still_there))`;
    await client.query('set enable_indexscan = off; set enable_hashjoin = off');
    const { rows } = await client.query(call);
    await client.query(`explain (analyze, verbose) ${call}`);
    const seen = await client.query<{ r: string }>('select r from pg_temp.seen');
    // globex's two stages, seen by the function and no row of default's.
    expect(rows.map((r) => r.stage_id).sort()).toEqual(['101', '102']);
    expect(new Set(seen.rows.map((r) => r.r))).toEqual(new Set(['(101,2,1)', '(102,1,0)']));
    expect(
      await queryAs(h.database.url, role, [
        'select * from analytics.pipeline_as_of(now())',
        'select * from all_accounts.pipeline_as_of(now())',
        'select * from all_accounts.source_of_hire',
        'select * from analytics.source_of_hire',
        'select * from hiresync.data_applications_data',
      ]),
    ).toEqual(Array(5).fill('permission denied'));
    // Nobody else may call it: not PUBLIC, as Postgres gives a new function.
    const { rows: acl } = await sql<{ grantees: string[] }>`
      select array_agg(coalesce(r.rolname, 'public') order by 1)::text[] as grantees
      from pg_proc p cross join aclexplode(p.proacl) x left join pg_roles r on r.oid = x.grantee
      where p.oid = 'globex_analytics.pipeline_as_of(timestamptz)'::regprocedure and x.grantee <> p.proowner`.execute(
      db,
    );
    expect(acl[0]?.grantees).toEqual([role]);
  });
});

describe('migrate and the analytics schemas', () => {
  it('does nothing when they are up to date; a changed definition is applied in place, grants kept, none widened', async () => {
    const h = await accounts({ accounts: ['globex'], records: 1 });
    const db = h.database.db;
    expect((await migrateAll(db)).analyticsSchemas).toEqual([]);
    const granted = await testRole(db, 'granted');
    const byHand = await testRole(db, 'byhand');
    const never = await testRole(db, 'never');
    for (const r of [granted, byHand, never]) defer(r.drop);
    await grantAccount(db, 'globex', granted.role);
    // A release whose time_to_fill had other columns, granted by hand to a role.
    await sql`drop view globex_analytics.time_to_fill`.execute(db);
    await sql`create view globex_analytics.time_to_fill as select 1 as opening_id`.execute(db);
    await sql
      .raw(
        `grant usage on schema globex_analytics to ${byHand.role}; grant select on globex_analytics.time_to_fill to ${byHand.role}`,
      )
      .execute(db);
    await sql`comment on schema globex_analytics is 'hiresync analytics schema of account globex: definitions of an earlier release'`.execute(
      db,
    );
    const outcome = await migrateAll(db);
    expect(outcome.analyticsSchemas).toEqual(['globex_analytics']);
    expect((await migrateAll(db)).analyticsSchemas).toEqual([]);
    const { rows } = await sql<{ n: string }>`
      select count(*)::text as n from pg_attribute
      where attrelid = 'globex_analytics.time_to_fill'::regclass and attnum > 0`.execute(db);
    expect(rows[0]?.n).toBe('9');
    const every = ANALYTICS_VIEWS.map((v) => `select * from globex_analytics.${v.name}`);
    expect(await queryAs(h.database.url, granted.role, every)).toEqual(
      Array(every.length).fill('0 rows'),
    );
    expect(
      await queryAs(h.database.url, byHand.role, [
        'select * from globex_analytics.time_to_fill',
        'select * from globex_analytics.source_of_hire',
      ]),
    ).toEqual(['0 rows', 'permission denied']);
    expect(await queryAs(h.database.url, never.role, every.slice(0, 3))).toEqual(
      Array(3).fill('permission denied'),
    );
  });

  it('leaves a schema of the name that hiresync did not make alone, with a warning', async () => {
    const h = await accounts({ accounts: ['globex'], records: 1 });
    const db = h.database.db;
    await sql`drop schema globex_analytics cascade`.execute(db);
    await sql`create schema globex_analytics`.execute(db);
    await sql`create table globex_analytics.notes (note text)`.execute(db);
    const outcome = await migrateAll(db);
    expect(outcome.warnings).toContain(
      "schema globex_analytics exists and is not hiresync's (it lacks the comment 'hiresync analytics schema of account globex: …'): account globex's analytics views are not built there; rename or drop that schema, then run 'hiresync migrate'",
    );
    expect((await relationsOf(db, 'globex_analytics')).map((r) => r.relation)).toEqual(['notes']);
  });

  it('every analytics view and each of its columns has a comment', async () => {
    const h = await accounts({ accounts: ['globex'], records: 1 });
    const { rows } = await sql<{ missing: string }>`
      select n.nspname || '.' || c.relname || coalesce('.' || a.attname, '') as missing
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and col_description(c.oid, a.attnum) is null
      where n.nspname in ('analytics', 'globex_analytics', 'all_accounts') and c.relkind = 'v'
        and c.relname = any(${ANALYTICS_VIEWS.map((v) => v.name)}::text[])
        and (a.attname is not null or obj_description(c.oid, 'pg_class') is null)`.execute(
      h.database.db,
    );
    expect(rows).toEqual([]);
  });
});

describe('accounts remove --drop-data', () => {
  it("drops the account's analytics schema with its data; without --drop-data it stays", async () => {
    const h = await accounts({ accounts: ['globex', 'initech'], records: 1 });
    const db = h.database.db;
    const env = h.env;
    const present = async () => {
      const { rows } = await sql<{ schema: string }>`
        select nspname as schema from pg_namespace where nspname like '%analytics' order by 1`.execute(
        db,
      );
      return rows.map((r) => r.schema);
    };
    expect(await present()).toEqual(['analytics', 'globex_analytics', 'initech_analytics']);
    expect(await runAccounts(env, ['remove', 'globex', '--drop-data', '--yes'])).toMatchObject({
      code: 0,
    });
    expect(await runAccounts(env, ['remove', 'initech'])).toMatchObject({ code: 0 });
    expect(await present()).toEqual(['analytics', 'initech_analytics']);
  });
});
