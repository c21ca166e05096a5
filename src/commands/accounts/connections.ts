import { type Kysely, sql } from 'kysely';
import { configErrorIn, HiresyncError } from '../../errors.js';
import { createDatabase } from '../../warehouse/database.js';
import type { Database } from '../../warehouse/tables.js';
import { describeConnectionError } from '../connection-error.js';

/** A connection error's code and message, for a message that names its cause. */
export function connectionReason(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return e.code ? `${e.code}: ${e.message ?? ''}` : (e.message ?? String(error));
}

/**
 * A pool of two connections to DATABASE_URL, checked: a failure to connect
 * throws at once, naming the cause and the variable to fix. The caller
 * destroys it.
 */
export async function openDatabase(url: string, subcommand: string): Promise<Kysely<Database>> {
  const db = createDatabase(url, { max: 2, applicationName: `hiresync accounts ${subcommand}` });
  try {
    await sql`select 1`.execute(db);
    return db;
  } catch (error) {
    await db.destroy();
    const misconfigured = configErrorIn(error);
    if (misconfigured) throw misconfigured;
    throw new HiresyncError(
      describeConnectionError(error, 'DATABASE_URL') ??
        `cannot reach Postgres (${connectionReason(error)}): check DATABASE_URL`,
      { cause: error },
    );
  }
}
