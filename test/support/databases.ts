import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { createDatabase } from '../../src/warehouse/database.js';
import type { Database } from '../../src/warehouse/tables.js';

// HIRESYNC_TEST_TAG keeps test runs that share one server apart (several
// checkouts at once): each run drops and clones only databases of its own tag.
const TAG = (process.env.HIRESYNC_TEST_TAG ?? '').replace(/[^a-z0-9]/g, '');
export const TEST_DATABASE_PREFIX = `hiresync_test_${TAG ? `${TAG}x` : ''}`;
export const TEMPLATE_DATABASE = `${TEST_DATABASE_PREFIX}template`;

/** The URL of another database on the same server. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.href;
}

/** Runs statements on the server's admin database (CREATE/DROP DATABASE). */
export async function adminQuery(adminUrl: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A database of its own for one test file, cloned from the migrated template. */
export interface TestDatabase {
  name: string;
  url: string;
  db: Kysely<Database>;
  drop: () => Promise<void>;
}

export async function createTestDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, [`create database ${name} template ${TEMPLATE_DATABASE}`]);
  const url = databaseUrl(adminUrl, name);
  const db = createDatabase(url);
  return {
    name,
    url,
    db,
    drop: async () => {
      await db.destroy();
      await adminQuery(adminUrl, [`drop database if exists ${name} with (force)`]);
    },
  };
}
