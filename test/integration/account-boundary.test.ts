// An account's schema is an isolation boundary (../shared/interface.md,
// "Tenancy"; docs/shared-storage.md, "An account's schema is a boundary"): a
// role given only usage on the schema and select on its relations reads that
// account's rows and nothing else, whatever functions, planner settings,
// EXPLAIN, prepared statements or cursors it uses.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { schemaOf } from '../../src/account-name.js';
import { migrateControl } from '../../src/warehouse/setup/migrate-all.js';
import type { AccountsHarness } from '../support/accounts-harness.js';
import { leakyReader, relationsOf, testRole } from '../support/leaky-reader.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer, accounts } = cleanupAfterEach();

// Three accounts whose rows are in the same of the 8 hash partitions of every
// shared table (checked below): a plain view's filter let a leaky function see
// the rows of the whole partition.
const SAME_PARTITION = ['default', 'globex', 'cyberdyne'] as const;
const RESOURCES = ['jobs', 'job_posts', 'tracking_links', 'applications'] as const;

/** Every account of SAME_PARTITION with rows in every relation hiresync makes: synced, plus a rejected record each. */
async function populated(): Promise<AccountsHarness> {
  const h = await accounts({
    accounts: ['globex', 'cyberdyne'],
    records: 12,
    env: { HIRESYNC_RESOURCES: RESOURCES.join(',') },
  });
  const db = h.database.db;
  const { rows: partitions } = await sql<{ account: string; partition: number }>`
    select a as account, (select r from generate_series(0, 7) r
      where satisfies_hash_partition('hiresync.data_jobs'::regclass, 8, r, a)) as partition
    from unnest(${[...SAME_PARTITION]}::text[]) a`.execute(db);
  expect(new Set(partitions.map((p) => p.partition)).size, 'one partition for all three').toBe(1);
  const outcomes = await h.sync(
    SAME_PARTITION.flatMap((account) => RESOURCES.map((resource) => ({ account, resource }))),
    'full',
  );
  expect(outcomes.every((o) => o.ok)).toBe(true);
  for (const account of SAME_PARTITION) {
    const s = sql.id(schemaOf(account));
    await sql`insert into ${s}.rejected_records (resource, run_id, page, raw, record_key, reason)
      select 'jobs', max(id), 1, ${`{"id":"${account}-secret"}`}, '1:0:abc', 'id is not an integer'
      from ${s}.sync_runs`.execute(db);
  }
  // Each other account has rows in the shared tables behind every kind of relation.
  for (const table of [
    'jobs',
    'jobs_history',
    'tracking_links',
    'sync_runs',
    'rejected_records',
    'typed_views',
    'applications_data',
  ]) {
    const { rows } = await sql<{ accounts: string[] }>`
      select array_agg(distinct account order by account) as accounts
      from ${sql.id('hiresync', `data_${table}`)}`.execute(db);
    expect(rows[0]?.accounts, table).toEqual([...SAME_PARTITION].sort());
  }
  return h;
}

describe("an account's schema as an isolation boundary", () => {
  it("a role granted one account's schema never has another account's row in hand, through any relation there, however it queries", async () => {
    const h = await populated();
    const db = h.database.db;
    // The rule (account-views.ts, ACCOUNT_BOUNDARY): every view of an
    // account's schema that reads a shared table itself is a security barrier.
    const { rows: plain } = await sql<{ view: string }>`
      select distinct n.nspname || '.' || v.relname as view
      from pg_class v join pg_namespace n on n.oid = v.relnamespace
      join pg_rewrite r on r.ev_class = v.oid
      join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = r.oid
        and d.refclassid = 'pg_class'::regclass
      join pg_class t on t.oid = d.refobjid
      join pg_namespace tn on tn.oid = t.relnamespace and tn.nspname = 'hiresync'
      where n.nspname = any(${SAME_PARTITION.map(schemaOf)}::text[]) and v.relkind = 'v'
        and t.relname like 'data\\_%'
        and not coalesce('security_barrier=true' = any(v.reloptions), false)
      order by 1`.execute(db);
    expect.soft(plain, 'plain views over shared tables').toEqual([]);
    for (const account of SAME_PARTITION) {
      const schema = schemaOf(account);
      const { role, drop } = await testRole(db);
      defer(drop);
      await sql.raw(`grant usage on schema ${schema} to ${role}`).execute(db);
      await sql.raw(`grant select on all tables in schema ${schema} to ${role}`).execute(db);
      const relations = await relationsOf(db, schema);
      // The table views, history, rejected records, runs, typed views, list resources.
      expect(relations.map((r) => r.relation)).toEqual(
        expect.arrayContaining([
          'jobs',
          'jobs_history',
          'jobs_flat',
          'tracking_links_flat',
          'rejected_records',
          'sync_runs',
          'typed_views',
          'applications',
          'applications_data',
          'applications_flat',
        ]),
      );
      const others = SAME_PARTITION.filter((a) => a !== account);
      const reader = await leakyReader(h.database.url, role);
      defer(() => reader.close());
      for (const { relation, columns } of relations) {
        // Every column; and the first alone (a column the view computes costs
        // the condition more, and the planner would put it after the view's).
        for (const shape of [columns, columns.slice(0, 1)]) {
          const attempt = await reader.attempt(schema, relation, shape);
          const foreign = [...attempt.seen].filter((row) => !attempt.readable.has(row));
          expect
            .soft(foreign, `${schema}.${relation} (${shape.join(', ')}): rows seen`)
            .toEqual([]);
          for (const other of others) {
            expect
              .soft(attempt.explain, `${schema}.${relation}: EXPLAIN ANALYZE`)
              .not.toContain(`'${other}'`);
          }
        }
      }
      await reader.close();
    }
  }, 180_000);

  it('migrate makes the views of schemas an earlier release made (plain views) boundaries, and takes back what PUBLIC had on all_accounts', async () => {
    const h = await accounts({ accounts: ['globex', 'cyberdyne'], records: 5 });
    const db = h.database.db;
    expect(await h.sync([{ account: 'cyberdyne', resource: 'jobs' }])).toMatchObject([
      { ok: true },
    ]);
    // As release 0012 left them: plain views, and (by hand) all_accounts open to every role.
    const views = async () =>
      (
        await sql<{ view: string; barrier: boolean }>`
          select c.relname as view,
            coalesce('security_barrier=true' = any(c.reloptions), false) as barrier
          from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = 'globex' and c.relkind = 'v'
            and pg_get_viewdef(c.oid) like '%hiresync.data_%' order by 1`.execute(db)
      ).rows;
    for (const { view } of await views()) {
      await sql.raw(`alter view globex.${view} reset (security_barrier)`).execute(db);
    }
    await sql`grant usage on schema all_accounts to public`.execute(db);
    await sql`grant select on all tables in schema all_accounts to public`.execute(db);
    await sql`delete from hiresync.kysely_migration where name = '0013_account_boundary'`.execute(
      db,
    );
    const { role, drop } = await testRole(db);
    defer(drop);
    await sql.raw(`grant usage on schema globex to ${role}`).execute(db);
    await sql.raw(`grant select on all tables in schema globex to ${role}`).execute(db);

    expect((await migrateControl(db)).applied).toEqual(['0013_account_boundary']);

    const made = await views();
    expect(made.map((v) => v.view)).toEqual(expect.arrayContaining(['jobs', 'sync_runs']));
    expect(made.filter((v) => !v.barrier)).toEqual([]);
    const reader = await leakyReader(h.database.url, role);
    try {
      const attempt = await reader.attempt('globex', 'jobs', ['id', 'data']);
      expect([...attempt.seen].filter((row) => !attempt.readable.has(row))).toEqual([]);
    } finally {
      await reader.close();
    }
    const { rows } = await sql<{ schema: boolean; tables: boolean }>`
      select has_schema_privilege('public', 'all_accounts', 'usage') as schema,
        has_table_privilege('public', 'all_accounts.jobs', 'select') as tables`.execute(db);
    expect(rows).toEqual([{ schema: false, tables: false }]);
  });
});
