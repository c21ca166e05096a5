import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrateToLatest } from '../../src/warehouse/layout/migrate.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

// The earlier per-account layout's migrations name their tables unqualified,
// so they alone run with the schema on the search path: a function another
// role planted there (or in public) with exact argument types would win over
// pg_catalog's and run with hiresync's privileges (CVE-2018-1058).
let t: TestDatabase;
const role = `planter_${randomUUID().slice(0, 8)}`;
beforeAll(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
  await sql.raw(`create role ${role} nologin`).execute(t.db);
});
afterAll(async () => {
  await t?.drop();
  // The database that held its objects is gone: the role has nothing left.
  const admin = await createTestDatabase(inject('databaseUrl'));
  await sql.raw(`drop role if exists ${role}`).execute(admin.db);
  await admin.drop();
});

describe('migrate of a schema of the earlier layout', () => {
  it("refuses while another role's function lies in the schema or public, naming it; runs once it is gone", async () => {
    await sql
      .raw(`create schema legacy; grant usage, create on schema legacy, public to ${role}`)
      .execute(t.db);
    await t.db.connection().execute(async (conn) => {
      await sql.raw(`set role ${role}`).execute(conn);
      await sql
        .raw(
          `create function legacy.unnest(bigint[]) returns setof bigint language sql as 'select 1::bigint'`,
        )
        .execute(conn);
      await sql.raw('reset role').execute(conn);
    });
    await expect(migrateToLatest(t.db, { schema: 'legacy' })).rejects.toThrow(
      new RegExp(`legacy\\.unnest\\(bigint\\[\\]\\) \\(owned by ${role}\\)`),
    );
    const { rows } = await sql<{ made: boolean }>`
      select to_regclass('legacy.jobs') is not null as made`.execute(t.db);
    expect(rows[0]?.made).toBe(false);

    await sql.raw('drop function legacy.unnest(bigint[])').execute(t.db);
    await t.db.connection().execute(async (conn) => {
      await sql.raw(`set role ${role}`).execute(conn);
      await sql
        .raw(
          `create function public.cardinality(integer[]) returns integer language sql as 'select 0'`,
        )
        .execute(conn);
      await sql.raw('reset role').execute(conn);
    });
    await expect(migrateToLatest(t.db, { schema: 'legacy' })).rejects.toThrow(
      /public\.cardinality\(integer\[\]\)/,
    );

    await sql.raw('drop function public.cardinality(integer[])').execute(t.db);
    const outcome = await migrateToLatest(t.db, { schema: 'legacy' });
    expect(outcome.applied).toContain('0001_initial');
  });
});
