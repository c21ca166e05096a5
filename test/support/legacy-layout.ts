import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../../src/warehouse/schema.js';

/**
 * A Kysely instance whose connections search `schema` alone, as the release
 * before shared storage pointed them: for tests that build a schema of the
 * earlier per-account layout with its migrations (which name their tables
 * unqualified) or write into it as that release did. hiresync's own
 * connections never search anything but pg_catalog (src/warehouse/database.ts).
 * Call `destroy()` when done.
 */
export function legacyLayoutDatabase(url: string, schema: string): Kysely<Database> {
  return new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: new pg.Pool({ connectionString: url, max: 2, options: `-c search_path="${schema}"` }),
    }),
  });
}
