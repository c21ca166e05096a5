import { Kysely, PostgresDialect, type PostgresPool } from 'kysely';
import pg from 'pg';
import { ConfigError } from '../errors.js';
import { describeTlsFailure, type PostgresTls, postgresTls } from '../postgres-tls.js';
import type { Database } from './tables.js';

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
  /**
   * Told once, on creation, when DATABASE_URL's sslmode encrypts without
   * verifying the server's certificate (`require` without `sslrootcert`):
   * the warning to log.
   */
  onUnverified?: (warning: string) => void;
}

/** The schema of the environment's account (`default`): its tables stay where they always were. */
export const PUBLIC_SCHEMA = 'public';

/**
 * The `search_path` of every connection hiresync opens, from its first
 * statement (a connection option, so no statement sets it and none of
 * hiresync's ever changes it): only `pg_catalog`, then `pg_temp`, which
 * Postgres never searches for functions or operators. So every function and
 * operator hiresync calls unqualified (`unnest`, `cardinality`, `=`, `->>`)
 * is pg_catalog's, and no role that may create objects in `public` or in an
 * account's schema can plant one that hiresync runs with its privileges
 * (CVE-2018-1058). Every relation hiresync names is therefore qualified: the
 * shared tables `hiresync.data_<table>` (the account a bound parameter, see
 * src/warehouse/shared-relation.ts), hiresync's control tables, an
 * account's schema for its views.
 */
export const SEARCH_PATH = 'pg_catalog,pg_temp';

/** The pool behind each instance {@link createDatabase} made. */
const pools = new WeakMap<Kysely<Database>, { pool: pg.Pool }>();

/**
 * The pool's connection settings: `connectionString` with `-c
 * search_path=…` ({@link SEARCH_PATH}) and `-c datestyle=iso` last in its
 * startup `options`, after any the URL gives (pg takes the URL's `options`
 * over a separate one). Sent in the startup packet, they are the session's
 * own defaults before any statement, and win over those a role or database
 * sets (`alter role … set search_path`) and over the URL's; no statement of
 * a new connection sets them.
 *
 * Timestamps are read as the text Postgres prints (see `types`): in ISO
 * format whatever DateStyle the server, database, role or URL sets (SQL or
 * German style print zone abbreviations no reader can convert). `iso` sets
 * the output format only: the order of day and month, read only in
 * ambiguous input hiresync never sends, stays as the URL or the server sets it.
 */
function withSessionDefaults(connectionString: string): {
  connectionString: string;
  options: string;
} {
  const ours = `-c search_path=${SEARCH_PATH} -c datestyle=iso`;
  try {
    const url = new URL(connectionString);
    const theirs = url.searchParams.get('options');
    if (theirs === null) return { connectionString, options: ours };
    url.searchParams.set('options', `${theirs} ${ours}`);
    return { connectionString: url.toString(), options: `${theirs} ${ours}` };
  } catch {
    return { connectionString, options: ours };
  }
}

/**
 * A Kysely instance over a pg pool whose every connection searches
 * {@link SEARCH_PATH} only, with TLS as the URL's `sslmode`, `sslrootcert`,
 * `sslcert` and `sslkey` say (src/postgres-tls.ts): a ConfigError
 * at once for a file that cannot be read, and on connecting for a failure of
 * TLS. Call `destroy()` on it to close the pool.
 */
export function createDatabase(
  connectionString: string,
  options: DatabaseOptions = {},
): Kysely<Database> {
  const tls = postgresTls(connectionString);
  if (tls.unverified !== undefined) options.onUnverified?.(tls.unverified);
  const pool = new pg.Pool({
    ...withSessionDefaults(tls.connectionString),
    ...(tls.ssl === undefined ? {} : { ssl: tls.ssl }),
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
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: droppingPool(pool, tls) }),
  });
  pools.set(db, { pool });
  return db;
}

/** Connections a statement failed on other than as a statement does (see {@link droppingPool}). */
const broken = new WeakSet<pg.PoolClient>();

/** The connections {@link droppingPool} watches (once each). */
const watched = new WeakSet<pg.PoolClient>();

/**
 * `pool` as Kysely's Postgres dialect sees it, dropping on release a
 * connection a statement failed on other than as a statement does (an error
 * whose severity is not ERROR: FATAL, as for a backend terminated by an
 * administrator, or a socket error): the next statement never meets it, so
 * one statement at most fails on a dead connection (a run retries from its
 * checkpoint), and a failed connection is never leaked.
 */
function droppingPool(pool: pg.Pool, tls: PostgresTls): PostgresPool {
  return {
    Client: pg.Client,
    options: pool.options,
    end: () => pool.end(),
    connect: async () => {
      const client = await connectOrExplain(pool, tls);
      if (!watched.has(client)) {
        watched.add(client);
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        client.query = ((...args: unknown[]) => {
          const result = query(...args);
          if (result instanceof Promise) {
            result.catch((error: unknown) => {
              if ((error as { severity?: unknown }).severity !== 'ERROR') broken.add(client);
            });
          }
          return result;
        }) as typeof client.query;
      }
      const release = client.release;
      client.release = ((error?: Error | boolean) => {
        client.release = release;
        return release(error || broken.has(client));
      }) as typeof client.release;
      return client;
    },
  };
}

/**
 * A connection of `pool`; a failure TLS caused (a certificate that does not
 * verify, a server without TLS, a client certificate refused) is a
 * ConfigError naming DATABASE_URL's parameter to change.
 */
async function connectOrExplain(pool: pg.Pool, tls: PostgresTls): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (error) {
    const message = describeTlsFailure(error, tls);
    throw message === undefined
      ? error
      : new ConfigError([{ variable: 'DATABASE_URL', message }], { cause: error });
  }
}

/** How many connections the pool of `db` holds now (idle or in use): the bench's figure. */
export function poolSize(db: Kysely<Database>): number {
  return pools.get(db)?.pool.totalCount ?? 0;
}
