import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../../src/warehouse/tables.js';

const made = new Map<string, Kysely<Database>>();

/**
 * A Kysely instance over `url` whose connections search `schema` (default
 * `public`), as an analyst's session does, or as the release before shared
 * storage pointed its connections: for a test's own SQL that names an
 * account's relations unqualified (`select * from jobs_flat`), or that builds
 * a schema of the earlier per-account layout with its migrations (which name
 * their tables unqualified). hiresync's own connections search pg_catalog
 * only (src/warehouse/database.ts); its functions take this instance too, as
 * they name every relation with its schema. One instance per URL and schema;
 * {@link closeSearchingDatabases} closes them (in an `afterAll`).
 */
export function searchingDatabase(url: string, schema = 'public'): Kysely<Database> {
  const key = `${schema}\n${url}`;
  let db = made.get(key);
  if (db === undefined) {
    const pool = new pg.Pool({
      connectionString: url,
      max: 3,
      options: `-c search_path="${schema}"`,
    });
    // The test drops its database while these connections idle: not an error of the test's.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    made.set(key, db);
  }
  return db;
}

/** Closes every instance {@link searchingDatabase} made. */
export async function closeSearchingDatabases(): Promise<void> {
  const all = [...made.values()];
  made.clear();
  await Promise.all(all.map((db) => db.destroy()));
}
