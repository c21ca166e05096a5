// `hiresync accounts grant NAME ROLE [--revoke]` (../shared/interface.md,
// "Tenancy"): read-only access to one account's rows, and nothing else.
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ensureListResources } from '../../src/warehouse/setup/migrate-all.js';
import type { Database } from '../../src/warehouse/tables.js';
import { runAccounts } from '../support/accounts-cli.js';
import { leakyReader, readAs, testRole } from '../support/leaky-reader.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer, accounts } = cleanupAfterEach();

async function countOf(db: Kysely<Database>, relation: string): Promise<string> {
  const { rows } = await sql<{
    n: string;
  }>`select count(*)::text as n from ${sql.raw(relation)}`.execute(db);
  return `read ${rows[0]?.n}`;
}

describe('hiresync accounts grant', () => {
  it("gives a role read-only access to one account's schema, its analytics schema and what hiresync makes there later; --revoke takes it all back; idempotent", async () => {
    const h = await accounts({ accounts: ['globex', 'cyberdyne'], records: 5 });
    const db = h.database.db;
    const env = { DATABASE_URL: h.database.url };
    expect(
      await h.sync([
        { account: 'globex', resource: 'jobs' },
        { account: 'cyberdyne', resource: 'jobs' },
      ]),
    ).toMatchObject([{ ok: true }, { ok: true }]);
    // Its analytics schema (globex_analytics) is made by migrate, as the account is.
    const { role, drop } = await testRole(db);
    defer(drop);

    const first = await runAccounts(env, ['grant', 'globex', role]);
    expect(first).toEqual({
      code: 0,
      stdout: `role ${role} reads account globex, read-only: usage and select on schema globex and globex_analytics, and on what hiresync makes there later\n`,
      stderr: '',
    });
    expect(await runAccounts(env, ['grant', 'globex', role])).toEqual(first);
    // Made after the grant: a list resource's views.
    await ensureListResources(db, ['applications'], { schema: 'globex' });
    const relations = [
      'globex.jobs',
      'globex.jobs_flat',
      'globex.sync_runs',
      'globex.applications',
      'globex_analytics.source_of_hire',
      'cyberdyne.jobs',
      'cyberdyne_analytics.source_of_hire',
      'public.jobs',
      'hiresync.data_jobs',
      'all_accounts.jobs',
    ];
    expect(await readAs(h.database.url, role, relations)).toEqual({
      'globex.jobs': await countOf(db, 'globex.jobs'),
      'globex.jobs_flat': await countOf(db, 'globex.jobs_flat'),
      'globex.sync_runs': await countOf(db, 'globex.sync_runs'),
      'globex.applications': 'read 0',
      'globex_analytics.source_of_hire': 'read 0',
      'cyberdyne_analytics.source_of_hire': 'permission denied',
      'cyberdyne.jobs': 'permission denied',
      'public.jobs': 'permission denied',
      'hiresync.data_jobs': 'permission denied',
      'all_accounts.jobs': 'permission denied',
    });
    // Read-only.
    const client = new pg.Client({ connectionString: h.database.url });
    await client.connect();
    try {
      await client.query(`set role ${role}`);
      await expect(client.query('delete from globex.jobs')).rejects.toThrow(/permission denied/);
    } finally {
      await client.end();
    }
    // Through the grant, the leaky function still sees globex's rows only.
    const reader = await leakyReader(h.database.url, role);
    try {
      const attempt = await reader.attempt('globex', 'jobs', ['id', 'data']);
      expect(attempt.seen.size).toBeGreaterThan(0);
      expect([...attempt.seen].filter((row) => !attempt.readable.has(row))).toEqual([]);
    } finally {
      await reader.close();
    }

    const revoked = await runAccounts(env, ['grant', 'globex', role, '--revoke']);
    expect(revoked).toEqual({
      code: 0,
      stdout: `role ${role} no longer reads account globex: revoked usage and select on schema globex and globex_analytics, and on what hiresync makes there later\n`,
      stderr: '',
    });
    expect(await runAccounts(env, ['grant', 'globex', role, '--revoke'])).toEqual(revoked);
    await ensureListResources(db, ['candidates'], { schema: 'globex' });
    const after = await readAs(h.database.url, role, [
      'globex.jobs',
      'globex.applications',
      'globex.candidates',
      'globex_analytics.source_of_hire',
    ]);
    expect(Object.values(after)).toEqual(Array(4).fill('permission denied'));
    // The role holds nothing any more: it can be dropped without `drop owned`.
    const { rows } = await sql<{ n: string }>`
      select count(*)::text as n from pg_default_acl d, aclexplode(d.defaclacl) x
      where x.grantee = (select oid from pg_roles where rolname = ${role})`.execute(db);
    expect(rows[0]?.n).toBe('0');
  });

  it("grants default's schema public", async () => {
    const h = await accounts({ accounts: ['globex'], records: 5 });
    const { role, drop } = await testRole(h.database.db);
    defer(drop);
    expect(
      await runAccounts({ DATABASE_URL: h.database.url }, ['grant', 'default', role]),
    ).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('usage and select on schema public and analytics,'),
    });
    expect(
      await readAs(h.database.url, role, [
        'public.jobs',
        'analytics.source_of_hire',
        'globex.jobs',
        'globex_analytics.source_of_hire',
      ]),
    ).toEqual({
      'public.jobs': 'read 0',
      'analytics.source_of_hire': 'read 0',
      'globex.jobs': 'permission denied',
      'globex_analytics.source_of_hire': 'permission denied',
    });
  });

  it("grants in public only hiresync's relations: a table of the DBA's there stays closed, and --revoke leaves the DBA's own grants", async () => {
    const h = await accounts({ accounts: ['globex'], records: 5 });
    const { role, drop } = await testRole(h.database.db);
    defer(drop);
    await sql`create table public.payroll (id int, salary int)`.execute(h.database.db);
    await sql`create table public.payroll_terms (id int)`.execute(h.database.db);
    const env = { DATABASE_URL: h.database.url };
    expect((await runAccounts(env, ['grant', 'default', role])).code).toBe(0);
    expect(
      await readAs(h.database.url, role, [
        'public.jobs',
        'public.tracking_links_flat',
        'public.payroll',
      ]),
    ).toEqual({
      'public.jobs': 'read 0',
      'public.tracking_links_flat': 'read 0',
      'public.payroll': 'permission denied',
    });
    // The DBA opens one table of theirs; taking the account back leaves it open.
    await sql.raw(`grant select on public.payroll_terms to ${role}`).execute(h.database.db);
    expect((await runAccounts(env, ['grant', 'default', role, '--revoke'])).code).toBe(0);
    expect(await readAs(h.database.url, role, ['public.jobs', 'public.payroll_terms'])).toEqual({
      'public.jobs': 'permission denied',
      'public.payroll_terms': 'read 0',
    });
  });

  it('exits 1 for an unknown account, 2 for a role that does not exist (with the line that makes it), 2 for bad names before connecting', async () => {
    const h = await accounts({ accounts: ['globex'], records: 5 });
    const env = { DATABASE_URL: h.database.url };
    const { role, drop } = await testRole(h.database.db);
    defer(drop);
    expect(await runAccounts(env, ['grant', 'nosuch', role])).toEqual({
      code: 1,
      stdout: '',
      stderr:
        "hiresync accounts grant: no account nosuch is registered; see 'hiresync accounts list'\n",
    });
    const missing = await runAccounts(env, ['grant', 'globex', 'hiresync_test_nobody']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('create role hiresync_test_nobody nologin;');
    expect(missing.stderr).toContain("create role hiresync_test_nobody login password '…';");
    // Nowhere to connect to: the names are refused first.
    const unreachable = { DATABASE_URL: 'postgres://hiresync@127.0.0.1:1/hiresync' };
    for (const [args, message] of [
      [['grant', 'Globex', role], /account name "Globex" must be/],
      [['grant', 'globex', 'public'], /role public is every role/],
      [['grant', 'globex', 'pg_read_all_data'], /predefined roles/],
      [['grant', 'globex', 'x; drop table y'], /role name "x; drop table y" must be/],
      [['grant', 'globex'], /takes NAME ROLE, got 1 argument/],
    ] as const) {
      const out = await runAccounts(unreachable, [...args]);
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stderr, args.join(' ')).toMatch(message);
    }
  });
});
