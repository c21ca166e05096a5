import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

const TIMESTAMPTZ_OID = 1184;
const TIMESTAMP_OID = 1114;

/**
 * Timestamps come back as Postgres prints them (microseconds kept); bigints
 * stay strings (pg's default). Everything else uses pg's parsers.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === TIMESTAMPTZ_OID || oid === TIMESTAMP_OID) return (value: string) => value;
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/** Options of {@link createDatabase}. */
export interface DatabaseOptions {
  /** Pool size. Default 5. */
  max?: number;
  /** `application_name` seen in pg_stat_activity. Default `hiresync`. */
  applicationName?: string;
}

/** A Kysely instance over a pg pool. Call `destroy()` to close it. */
export function createDatabase(
  connectionString: string,
  options: DatabaseOptions = {},
): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 5,
    application_name: options.applicationName ?? 'hiresync',
    types,
  });
  // A client losing its connection (a Postgres restart) must not crash the
  // process. pg-pool listens on idle clients only ('error' on the pool); a
  // checked-out client (between the statements of a transaction) emits on
  // itself. The query in flight still fails through its promise, and the pool
  // drops the broken client when it is released.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
