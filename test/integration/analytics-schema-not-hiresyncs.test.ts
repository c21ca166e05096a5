// A schema named as an account's analytics schema that hiresync did not make
// (a DBA's `analytics`, the dbt default; a `globex_analytics` made for
// globex's reports before hiresync had analytics views; the schema of an
// account registered as NAME_analytics before such names were reserved) is
// not the account's: migrate leaves it alone with a warning, so `accounts
// grant` must give nothing there and `accounts remove --drop-data` must treat
// it as any other schema of someone else's (../shared/interface.md,
// "Tenancy": a role reads the account's rows and nothing else).
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { runAccounts } from '../support/accounts-cli.js';
import { readAs, testRole } from '../support/leaky-reader.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer, accounts } = cleanupAfterEach();

describe('a schema of the analytics name that hiresync did not make', () => {
  it('is given to no role by accounts grant, and --revoke leaves what the DBA granted there', async () => {
    const h = await accounts({ accounts: ['globex'], records: 1 });
    const db = h.database.db;
    const env = { DATABASE_URL: h.database.url };
    await sql`drop schema analytics cascade`.execute(db);
    await sql`drop schema globex_analytics cascade`.execute(db);
    await sql`create schema analytics`.execute(db);
    await sql`create table analytics.payroll (id int, salary int)`.execute(db);
    await sql`create schema globex_analytics`.execute(db);
    await sql`create table globex_analytics.board_notes (note text)`.execute(db);
    await sql`create table globex_analytics.shared_notes (note text)`.execute(db);
    expect((await migrateAll(db)).warnings).toHaveLength(2);
    const { role, drop } = await testRole(db);
    defer(drop);

    const globex = await runAccounts(env, ['grant', 'globex', role]);
    expect(globex).toMatchObject({ code: 0 });
    expect(globex.stdout).toContain('on schema globex,');
    expect((await runAccounts(env, ['grant', 'default', role])).code).toBe(0);
    expect(
      await readAs(h.database.url, role, [
        'globex.jobs',
        'public.jobs',
        'globex_analytics.board_notes',
        'analytics.payroll',
      ]),
    ).toEqual({
      'globex.jobs': 'read 0',
      'public.jobs': 'read 0',
      'globex_analytics.board_notes': 'permission denied',
      'analytics.payroll': 'permission denied',
    });

    // The DBA opens one table of theirs to the role; taking the account back leaves it open.
    await sql
      .raw(
        `grant usage on schema globex_analytics to ${role}; grant select on globex_analytics.shared_notes to ${role}`,
      )
      .execute(db);
    expect((await runAccounts(env, ['grant', 'globex', role, '--revoke'])).code).toBe(0);
    expect(
      await readAs(h.database.url, role, ['globex.jobs', 'globex_analytics.shared_notes']),
    ).toEqual({ 'globex.jobs': 'permission denied', 'globex_analytics.shared_notes': 'read 0' });
  });

  it("is not dropped with the account's data: accounts remove --drop-data names a view of it on the account's schema and refuses without --cascade", async () => {
    const h = await accounts({ accounts: ['globex'], records: 1 });
    const db = h.database.db;
    await sql`drop schema globex_analytics cascade`.execute(db);
    await sql`create schema globex_analytics`.execute(db);
    await sql`create view globex_analytics.open_jobs as select id from globex.jobs`.execute(db);
    await migrateAll(db);

    const refused = await runAccounts(h.env, ['remove', 'globex', '--drop-data', '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('view globex_analytics.open_jobs');
    const { rows } = await sql<{ found: boolean }>`
      select to_regclass('globex_analytics.open_jobs') is not null as found`.execute(db);
    expect(rows[0]?.found).toBe(true);
  });
});
