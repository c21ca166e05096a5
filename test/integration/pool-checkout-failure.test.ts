import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createDatabase, poolSize } from '../../src/warehouse/database.js';
import type { Database } from '../../src/warehouse/tables.js';
import { createTestDatabase } from '../support/databases.js';

/** Runs `select 1`: 'ok', or 'error' when it fails. */
function selectOne(db: Kysely<Database>): Promise<'ok' | 'error'> {
  return sql`select 1`.execute(db).then(
    () => 'ok' as const,
    () => 'error' as const,
  );
}

describe("hiresync's pool", () => {
  it('drops a connection whose backend was terminated while idle: at most one statement fails on it, and it is never leaked', async () => {
    const url = inject('databaseUrl');
    const db = createDatabase(url, { max: 1, applicationName: 'pool-checkout-failure' });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      for (let i = 0; i < 30; i++) {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
        await admin.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
        // The statements right after may meet the dying connection. No
        // deadline here: a leaked connection makes a checkout wait for good
        // (max 1), which fails the test by its timeout.
        const results = [];
        for (let n = 0; n < 3; n++) results.push(await selectOne(db));
        expect(
          results.filter((r) => r === 'error').length,
          `iteration ${i}: ${results.join(', ')}, pool holds ${poolSize(db)}`,
        ).toBeLessThanOrEqual(1);
        expect(results.at(-1), `iteration ${i}: ${results.join(', ')}`).toBe('ok');
      }
    } finally {
      await admin.end();
      await Promise.race([db.destroy(), new Promise((r) => setTimeout(r, 1000))]);
    }
  });

  it('searches pg_catalog and pg_temp only, from the first statement of every connection, whatever the database or the URL sets, and sends no search_path', async () => {
    const t = await createTestDatabase(inject('databaseUrl'));
    await sql`alter database ${sql.id(new URL(t.url).pathname.slice(1))} set search_path to public`.execute(
      t.db,
    );
    const url = new URL(t.url);
    url.searchParams.set('options', '-c statement_timeout=4321');
    const db = createDatabase(url.toString(), { max: 2, applicationName: 'pool-search-path' });
    const sent: string[] = [];
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const query = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      const first = args[0];
      sent.push(typeof first === 'string' ? first : String((first as { text?: unknown }).text));
      return query.apply(this, args);
    };
    try {
      const settings = await Promise.all(
        [1, 2].map(() =>
          db.connection().execute(async (conn) => {
            const { rows } = await sql<{ path: string; timeout: string; schema: string | null }>`
              select current_setting('search_path') as path, current_setting('statement_timeout') as timeout,
                current_schema() as schema`.execute(conn);
            return rows[0];
          }),
        ),
      );
      expect(settings).toEqual([
        { path: 'pg_catalog,pg_temp', timeout: '4321ms', schema: 'pg_catalog' },
        { path: 'pg_catalog,pg_temp', timeout: '4321ms', schema: 'pg_catalog' },
      ]);
      expect(sent.filter((s) => /search_path\s*(to|=)|set_config\('search_path/i.test(s))).toEqual(
        [],
      );
    } finally {
      proto.query = query;
      await Promise.race([db.destroy(), new Promise((r) => setTimeout(r, 1000))]);
      await t.drop();
    }
  });
});
