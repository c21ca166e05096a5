import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../src/warehouse/database.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
});
afterAll(async () => {
  await t?.drop();
});

describe('the database pool', () => {
  it("survives its connection being killed between a transaction's statements, and reconnects", async () => {
    const db = createDatabase(t.url);
    try {
      const failed = db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        await sql`select pg_terminate_backend(${rows[0]?.pid})`.execute(t.db);
        // The server's goodbye arrives while the client is checked out and idle.
        await sleep(200);
        await sql`select 1`.execute(trx);
      });
      await expect(failed).rejects.toThrow();
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await db.destroy();
    }
  });

  it('returns timestamps with their microseconds and bigints as exact text', async () => {
    const { rows } = await sql<{ at: string; big: string }>`
      select '2024-03-01T10:00:00.123456Z'::timestamptz as at, 9223372036854775807::bigint as big`.execute(
      t.db,
    );
    expect(rows[0]?.at).toMatch(/\.123456/);
    expect(rows[0]?.big).toBe('9223372036854775807');
  });
});
