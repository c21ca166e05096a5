import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createDatabase, inSchema, poolSize, unpointed } from '../../src/warehouse/database.js';
import type { Database } from '../../src/warehouse/schema.js';

/** Runs `select 1`: 'ok', or 'error' when it fails. */
function selectOne(db: Kysely<Database>): Promise<'ok' | 'error'> {
  return sql`select 1`.execute(db).then(
    () => 'ok' as const,
    () => 'error' as const,
  );
}

describe('the pool behind the per-schema instances', () => {
  it('drops a connection whose backend was terminated while idle: at most one statement fails on it, and it is never leaked', async () => {
    const url = inject('databaseUrl');
    const db = createDatabase(url, { max: 1, applicationName: 'pool-checkout-failure' });
    // Every other checkout goes through another schema's instance: its
    // `set search_path` meets the dying connection too.
    const other = inSchema(db, 'hiresync');
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      for (let i = 0; i < 30; i++) {
        const instance = i % 2 === 0 ? db : other;
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(
          instance,
        );
        await admin.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
        // The statements right after may meet the dying connection. No
        // deadline here: a leaked connection makes a checkout wait for good
        // (max 1), which fails the test by its timeout.
        const results = [];
        for (let n = 0; n < 3; n++) results.push(await selectOne(i % 4 < 2 ? db : other));
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

  it('points a connection at a schema once: the next checkouts for that schema send no set', async () => {
    const url = inject('databaseUrl');
    const db = createDatabase(url, { max: 1, applicationName: 'pool-search-path' });
    const other = inSchema(db, 'information_schema');
    const sent: string[] = [];
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const query = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      if (typeof args[0] === 'string') sent.push(args[0]);
      return query.apply(this, args);
    };
    try {
      const paths = [];
      for (const instance of [db, db, other, other, db]) {
        const { rows } = await sql<{
          path: string;
        }>`select current_schema() as path`.execute(instance);
        paths.push(rows[0]?.path);
      }
      expect(paths).toEqual([
        'public',
        'public',
        'information_schema',
        'information_schema',
        'public',
      ]);
      expect(sent.filter((s) => s.startsWith('set search_path'))).toEqual([
        'set search_path to "public"',
        'set search_path to "information_schema"',
        'set search_path to "public"',
      ]);
    } finally {
      proto.query = query;
      await Promise.race([db.destroy(), new Promise((r) => setTimeout(r, 1000))]);
    }
  });

  it('points a connection again after a statement pointed it elsewhere (the run lock points its own)', async () => {
    const url = inject('databaseUrl');
    const db = createDatabase(url, { max: 1, applicationName: 'pool-search-path-moved' });
    const schemaOf = async (instance: Kysely<Database>) =>
      (await sql<{ path: string }>`select current_schema() as path`.execute(instance)).rows[0]
        ?.path;
    try {
      expect(await schemaOf(db)).toBe('public');
      // As the run lock's statement does, on a connection taken with no set.
      await sql`select set_config('search_path', '"hiresync"', false)`.execute(unpointed(db));
      expect(await schemaOf(db)).toBe('public');
      // A statement of a schema's instance naming search_path.
      await sql`select set_config('search_path', '"hiresync"', false)`.execute(db);
      expect(await schemaOf(db)).toBe('public');
    } finally {
      await Promise.race([db.destroy(), new Promise((r) => setTimeout(r, 1000))]);
    }
  });
});
