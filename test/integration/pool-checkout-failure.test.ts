import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createDatabase, poolSize } from '../../src/warehouse/database.js';

describe('the pool behind the per-schema instances', () => {
  it('gets its connection back when the search_path statement of a checkout fails (a backend terminated while idle)', async () => {
    const url = inject('databaseUrl');
    const db = createDatabase(url, { max: 1, applicationName: 'pool-checkout-failure' });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      let failures = 0;
      for (let i = 0; i < 30; i++) {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
        await admin.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
        // The next checkout may take the dying connection: its `set search_path` fails.
        await sql`select 1`.execute(db).catch(() => {
          failures += 1;
        });
        // No deadline here: a leaked connection makes this checkout wait for
        // good (max 1), which fails the test by its timeout.
        const after = await sql`select 1`.execute(db).then(
          () => 'ok',
          () => 'error',
        );
        expect(
          after,
          `iteration ${i} (${failures} failed checkouts so far, pool holds ${poolSize(db)})`,
        ).toBe('ok');
      }
    } finally {
      await admin.end();
      await Promise.race([db.destroy(), new Promise((r) => setTimeout(r, 1000))]);
    }
  });
});
