import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { PG_CATALOG_FUNCTIONS } from '../support/statement-lint.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
});
afterAll(async () => {
  await t?.drop();
});

describe("the statement lint's allowlist", () => {
  it('names only functions of pg_catalog', async () => {
    const names = [...PG_CATALOG_FUNCTIONS];
    const { rows } = await sql<{ name: string }>`
      select distinct p.proname as name from pg_catalog.pg_proc p
      where p.pronamespace = 'pg_catalog'::regnamespace and p.proname = any(${names}::text[])`.execute(
      t.db,
    );
    expect(rows.map((r) => r.name).sort()).toEqual(names.sort());
  });
});
