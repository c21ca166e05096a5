import { Kysely, PostgresDialect, type PostgresPool } from 'kysely';
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

/** The schema of the environment's account (`default`): its tables stay where they always were. */
export const PUBLIC_SCHEMA = 'public';

/** Schema names hiresync creates: account names (see src/account-name.ts), `public`, `hiresync`, `all_accounts`. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The pool behind a root instance, and the instance of each schema made over it. */
const pools = new WeakMap<
  Kysely<Database>,
  { pool: pg.Pool; schemas: Map<string, Kysely<Database>>; unpointed?: Kysely<Database> }
>();

/**
 * A Kysely instance over `pool` whose every statement runs with
 * `search_path` set to `schema` alone: each connection it takes from the
 * pool is pointed at the schema first, unless that is where it points
 * already (see {@link schemaPool}). The warehouse's statements name tables
 * without a schema, so the same code writes `public` for the `default`
 * account and an account's own schema for the others; a table the schema
 * lacks is an error, never another account's table.
 */
function overSchema(pool: pg.Pool, schema: string): Kysely<Database> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`not a schema name: ${JSON.stringify(schema)}`);
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: schemaPool(pool, schema) }) });
}

/** Checkouts tried before a failing `set search_path` fails the statement. */
const CHECKOUT_ATTEMPTS = 3;

/**
 * The `search_path` each live pooled connection was given at its last
 * checkout by a {@link schemaPool}, while nothing has pointed it elsewhere
 * since (see {@link rememberPath}): a connection taken for the schema it
 * points at already needs no `set`, so a statement costs one round trip,
 * not two.
 */
const searchPaths = new WeakMap<pg.PoolClient, string>();

/** The connections {@link rememberPath} watches (once each). */
const watched = new WeakSet<pg.PoolClient>();

/**
 * Keeps the path `client` points at. It is forgotten when a statement names
 * `search_path` (as the run lock's points its connection, see
 * ResourceLock.tryAcquire): the next checkout points the connection again.
 * And a connection is forgotten when a statement on it fails other than as a
 * statement does (an error whose severity is not ERROR: FATAL, as for a
 * backend terminated by an administrator, or a socket error), or when it
 * ends: its next checkout tries the `set`, which fails on a dead connection,
 * and the pool drops it.
 */
function rememberPath(client: pg.PoolClient, schema: string): void {
  if (!watched.has(client)) {
    watched.add(client);
    client.once('end', () => searchPaths.delete(client));
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const first = args[0];
      const text = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
      if (typeof text === 'string' && text.includes('search_path')) searchPaths.delete(client);
      const result = query(...args);
      if (result instanceof Promise) {
        result.catch((error: unknown) => {
          if ((error as { severity?: unknown }).severity !== 'ERROR') searchPaths.delete(client);
        });
      }
      return result;
    }) as typeof client.query;
  }
  searchPaths.set(client, schema);
}

/**
 * `pool` as Kysely's Postgres dialect sees it, handing out connections
 * pointed at `schema`. A connection whose `set` fails (its backend was
 * terminated while idle) is dropped from the pool and another is taken: a
 * failed checkout never leaks a connection. One pointed at `schema` already
 * is handed out as it is: should its backend have been terminated a moment
 * before, unseen yet, the statement fails (a run retries from its
 * checkpoint) and the pool drops it.
 */
function schemaPool(pool: pg.Pool, schema: string): PostgresPool {
  const setPath = `set search_path to "${schema}"`;
  return {
    Client: pg.Client,
    options: pool.options,
    end: () => pool.end(),
    connect: async () => {
      for (let attempt = 1; ; attempt += 1) {
        const client = await pool.connect();
        if (searchPaths.get(client) === schema) return client;
        try {
          await client.query(setPath);
          rememberPath(client, schema);
          return client;
        } catch (error) {
          searchPaths.delete(client);
          client.release(error instanceof Error ? error : true);
          if (attempt >= CHECKOUT_ATTEMPTS) throw error;
        }
      }
    },
  };
}

/**
 * `pool` handing out connections as they are: no `set` is sent, and where a
 * connection points is forgotten, since what runs on it may point it
 * anywhere (see {@link unpointed}).
 */
function unpointedPool(pool: pg.Pool): PostgresPool {
  return {
    Client: pg.Client,
    options: pool.options,
    end: () => pool.end(),
    connect: async () => {
      const client = await pool.connect();
      searchPaths.delete(client);
      return client;
    },
  };
}

/**
 * A Kysely instance over a pg pool, whose statements run in schema `public`.
 * {@link inSchema} gives instances over the same pool for other schemas. Call
 * `destroy()` on this instance (never on those) to close the pool.
 */
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
    // Timestamps are read as the text Postgres prints (see `types`): in ISO
    // format whatever DateStyle the server, database, role or URL sets (SQL
    // or German style print zone abbreviations no reader can convert). Only
    // the output format changes; queued before any statement of the client.
    client.query('set datestyle to iso').catch(() => {});
  });
  const db = overSchema(pool, PUBLIC_SCHEMA);
  pools.set(db, { pool, schemas: new Map([[PUBLIC_SCHEMA, db]]) });
  return db;
}

/**
 * The instance of `schema` over the pool of `db` (an instance made by
 * {@link createDatabase}): the same connections, whatever the number of
 * schemas. Made once per schema and kept.
 */
export function inSchema(db: Kysely<Database>, schema: string): Kysely<Database> {
  const root = pools.get(db);
  if (!root) throw new Error('inSchema needs an instance made by createDatabase');
  let scoped = root.schemas.get(schema);
  if (!scoped) {
    scoped = overSchema(root.pool, schema);
    root.schemas.set(schema, scoped);
    pools.set(scoped, root);
  }
  return scoped;
}

/**
 * An instance over the pool of `db` (an instance made by
 * {@link createDatabase}) whose connections point nowhere in particular: a
 * checkout sends no `set search_path`, and what runs on the connection
 * points it itself before it names a table, or names none (catalog
 * functions and views only). The run lock is taken so (ResourceLock), its
 * statement pointing its connection at the run's schema: the run's
 * statements then go through that one connection with no `set` at all. An
 * unqualified table name before the connection is pointed would resolve
 * against whatever schema it points at: never send one.
 */
export function unpointed(db: Kysely<Database>): Kysely<Database> {
  const root = pools.get(db);
  if (!root) throw new Error('unpointed needs an instance made by createDatabase');
  root.unpointed ??= new Kysely<Database>({
    dialect: new PostgresDialect({ pool: unpointedPool(root.pool) }),
  });
  return root.unpointed;
}

/** How many connections the pool of `db` holds now (idle or in use): the bench's figure. */
export function poolSize(db: Kysely<Database>): number {
  return pools.get(db)?.pool.totalCount ?? 0;
}
