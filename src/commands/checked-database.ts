import type { Kysely } from 'kysely';
import { configErrorIn, HiresyncError } from '../errors.js';
import { createDatabase } from '../warehouse/database.js';
import type { Database } from '../warehouse/tables.js';
import { describeConnectionError } from './connection-error.js';

/**
 * Opens Postgres for a command that needs a table of its own before it
 * changes anything (`check` throws, naming `hiresync migrate`, when it is
 * missing): the pool is closed again on any failure, and a connection that
 * cannot be made is explained in terms of DATABASE_URL.
 */
export async function openCheckedDatabase(
  url: string,
  applicationName: string,
  check: (db: Kysely<Database>) => Promise<void>,
): Promise<Kysely<Database>> {
  const db = createDatabase(url, { max: 2, applicationName });
  try {
    await check(db);
    return db;
  } catch (error) {
    await db.destroy();
    const misconfigured = configErrorIn(error);
    if (misconfigured) throw misconfigured;
    const cause = describeConnectionError(error, 'DATABASE_URL');
    throw cause ? new HiresyncError(cause, { cause: error }) : error;
  }
}
