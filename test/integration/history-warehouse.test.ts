import { promises as fs } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { FileMigrationProvider, Migrator } from 'kysely/migration';
import { describe, expect, inject, it } from 'vitest';
import { jobs } from '../../src/resources/jobs.js';
import { MIGRATIONS_FOLDER, migrateToLatest } from '../../src/warehouse/layout/migrate.js';
import { sweepDeletions } from '../../src/warehouse/runs/sync-runs.js';
import { createTestDatabase } from '../support/databases.js';
import { closeSearchingDatabases, searchingDatabase } from '../support/searching-database.js';
import { useEmptyWarehouse } from '../support/warehouse-fixture.js';

const warehouse = useEmptyWarehouse();

async function newRun(mode: 'full' | 'incremental' = 'full'): Promise<string> {
  const row = await warehouse.db
    .withSchema('public')
    .insertInto('sync_runs')
    .values({ resource: 'jobs', mode, started_at: sql<string>`now()` })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function versions(id: number) {
  return warehouse.db
    .withSchema('public')
    .selectFrom('jobs_history')
    .select(['deleted', 'valid_to', 'data'])
    .where('id', '=', String(id))
    .orderBy('valid_from')
    .execute();
}

describe('history in the warehouse', () => {
  it('gives a deleted row that comes back as a rejected record a live version again', async () => {
    const first = await newRun();
    await warehouse.writeBody(
      jobs,
      JSON.stringify([
        { id: 1, n: 1 },
        { id: 2, n: 2 },
      ]),
      first,
    );
    await sql`update public.sync_runs set outcome = 'succeeded', finished_at = now()`.execute(
      warehouse.db,
    );
    const sweeping = await newRun();
    await warehouse.writeBody(jobs, JSON.stringify([{ id: 2, n: 2 }]), sweeping);
    expect(
      await sweepDeletions(warehouse.db, 'default', sweeping, {
        table: 'jobs',
        allowMassDelete: true,
        history: jobs,
      }),
    ).toBe(1);
    // The API lists job 1 again, with an id hiresync can read but a record it rejects.
    const third = await newRun('incremental');
    const written = await warehouse.writeBody(jobs, '[{"id": 1, "n": 3}, {"id": "bad"}]', third);
    expect(written.rejected).toHaveLength(1);
    await warehouse.writeBody(jobs, JSON.stringify([{ id: 1.5 }, { id: 1, x: [] }]), third, 2);
    const rows = await versions(1);
    expect(rows.map((r) => [r.deleted, r.valid_to === null])).toEqual([
      [false, false],
      [true, false],
      [false, false],
      [false, true],
    ]);
  });

  it('marks a rejected record seen without a version when its row was live', async () => {
    const run = await newRun('incremental');
    await warehouse.writeBody(jobs, JSON.stringify([{ id: 5, n: 1 }]), run);
    // id 5 again, now unstorable (the id is read, the record refused): the row stays as it was.
    await warehouse.writeBody(jobs, '[{"id": 5, "n": "\\u0000"}]', run, 2);
    expect((await versions(5)).map((r) => r.valid_to === null)).toEqual([true]);
  });

  it('migration 0005 gives the rows of an existing deployment one version each, and goes down cleanly', async () => {
    const t = await createTestDatabase(inject('databaseUrl'));
    try {
      // A schema of the earlier layout (its own tables), as a deployment before shared storage had.
      await migrateToLatest(t.db, { schema: 'legacy' });
      // The earlier layout's migrations name their tables unqualified (see migrate.ts).
      const legacy = searchingDatabase(t.url, 'legacy');
      const migrator = new Migrator({
        db: legacy,
        provider: new FileMigrationProvider({
          fs,
          path,
          migrationFolder: MIGRATIONS_FOLDER,
          import: (file: string) => import(file),
        }),
        migrationTableSchema: 'legacy',
      });
      const down = await migrator.migrateTo('0004_drop_reference_constraints');
      await closeSearchingDatabases();
      expect(down.error).toBeUndefined();
      await sql`insert into legacy.jobs (id, data, deleted_at, synced_at, last_seen_run_id) values
        (1, '{"id": 1}', null, '2026-01-02T03:04:05.123456Z', 7),
        (2, '{"id": 2}', '2026-02-01T00:00:00Z', '2026-01-05T00:00:00Z', 8)`.execute(t.db);
      expect((await migrateToLatest(t.db, { schema: 'legacy' })).applied).toContain('0005_history');
      const { rows } = await sql<{
        id: string;
        valid_from: string;
        deleted: boolean;
        run_id: string;
      }>`
        select id, (valid_from at time zone 'UTC')::text as valid_from, deleted, run_id
        from legacy.jobs_history order by id`.execute(t.db);
      expect(rows).toEqual([
        { id: '1', valid_from: '2026-01-02 03:04:05.123456', deleted: false, run_id: '7' },
        { id: '2', valid_from: '2026-01-05 00:00:00', deleted: true, run_id: '8' },
      ]);
    } finally {
      await t.drop();
    }
  });
});
