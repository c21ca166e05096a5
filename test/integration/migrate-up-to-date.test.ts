import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrateToLatest } from '../../src/warehouse/layout/migrate.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

/** The advisory lock Kysely's Postgres adapter (and migrateToLatest) takes around a run. */
const KYSELY_MIGRATION_LOCK = '3853314791062309107';

let t: TestDatabase;
let folder: string;
beforeAll(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
  folder = await mkdtemp(join(tmpdir(), 'hiresync-migrations-'));
});
afterAll(async () => {
  await t?.drop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('migrating a schema that is up to date', () => {
  it('imports no migration and takes no lock: the folder listing and its kysely_migration tell', async () => {
    // A migration that fails if imported, beside files Kysely's provider skips.
    await writeFile(
      join(folder, '0001_first.mjs'),
      "throw new Error('a migration was imported');\n",
    );
    await writeFile(join(folder, '0001_first.mjs.map'), '{}\n');
    await writeFile(join(folder, 'types.d.ts'), 'export {};\n');
    await writeFile(join(folder, 'README.md'), 'migrations\n');
    // As a run before left it: the migration recorded.
    await sql`create schema up_to_date`.execute(t.db);
    await sql`create table up_to_date.kysely_migration (
      name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(t.db);
    await sql`insert into up_to_date.kysely_migration values ('0001_first', ${new Date().toISOString()})`.execute(
      t.db,
    );
    // Another session holds the migration lock (a migration in progress elsewhere).
    const other = new pg.Client({ connectionString: t.url });
    await other.connect();
    try {
      await other.query(`select pg_advisory_lock(${KYSELY_MIGRATION_LOCK}::bigint)`);
      expect(await migrateToLatest(t.db, { schema: 'up_to_date', folder })).toEqual({
        schema: 'up_to_date',
        applied: [],
      });
    } finally {
      await other.end();
    }
  });

  it('still applies a migration whose file is not recorded yet', async () => {
    const pending = await mkdtemp(join(tmpdir(), 'hiresync-migrations-'));
    try {
      await writeFile(
        join(pending, '0001_marks.mjs'),
        "export async function up(db) { await db.schema.createTable('marks').addColumn('id', 'integer').execute(); }\n",
      );
      await writeFile(join(pending, 'types.d.ts'), 'export {};\n');
      const first = await migrateToLatest(t.db, { schema: 'pending_one', folder: pending });
      expect(first).toEqual({ schema: 'pending_one', applied: ['0001_marks'] });
      const { rows } = await sql<{ present: boolean }>`
        select to_regclass('pending_one.marks') is not null as present`.execute(t.db);
      expect(rows[0]?.present).toBe(true);
      expect(await migrateToLatest(t.db, { schema: 'pending_one', folder: pending })).toEqual({
        schema: 'pending_one',
        applied: [],
      });
    } finally {
      await rm(pending, { recursive: true, force: true });
    }
  });
});
