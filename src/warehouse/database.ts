import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresDialect,
  type QueryCompiler,
  type TransactionSettings,
} from 'kysely';
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
  { pool: pg.Pool; schemas: Map<string, Kysely<Database>> }
>();

/**
 * A Kysely instance over `pool` whose every statement runs with
 * `search_path` set to `schema` alone: each connection it takes from the pool
 * is pointed at the schema first (one round trip per checkout). The warehouse's statements name tables
 * without a schema, so the same code writes `public` for the `default`
 * account and an account's own schema for the others; a table the schema
 * lacks is an error, never another account's table.
 */
function overSchema(pool: pg.Pool, schema: string): Kysely<Database> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`not a schema name: ${JSON.stringify(schema)}`);
  return new Kysely<Database>({ dialect: new SchemaDialect(pool, schema) });
}

/** Checkouts tried before a failing `set search_path` fails the statement. */
const CHECKOUT_ATTEMPTS = 3;

/** Postgres, with every connection pointed at one schema when it is taken from the pool. */
class SchemaDialect extends PostgresDialect {
  readonly #schema: string;
  constructor(pool: pg.Pool, schema: string) {
    super({ pool });
    this.#schema = schema;
  }
  override createDriver(): Driver {
    return new SchemaDriver(super.createDriver(), this.#schema);
  }
}

/**
 * The Postgres driver, setting `search_path` on each connection it hands
 * out. A connection whose `set` fails (its backend was terminated while idle)
 * goes back to the pool, which drops a broken client, and another is taken:
 * a failed checkout never leaks a connection.
 */
class SchemaDriver implements Driver {
  readonly #inner: Driver;
  readonly #setPath: CompiledQuery;
  constructor(inner: Driver, schema: string) {
    this.#inner = inner;
    this.#setPath = CompiledQuery.raw(`set search_path to "${schema}"`);
  }
  init(): Promise<void> {
    return this.#inner.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    for (let attempt = 1; ; attempt += 1) {
      const connection = await this.#inner.acquireConnection();
      try {
        await connection.executeQuery(this.#setPath);
        return connection;
      } catch (error) {
        // Back to the pool, which drops the client once it knows it broken;
        // a dead idle connection may take two tries to be known so.
        await this.#inner.releaseConnection(connection);
        if (attempt >= CHECKOUT_ATTEMPTS) throw error;
      }
    }
  }
  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#inner.beginTransaction(connection, settings);
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(connection);
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(connection);
  }
  savepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return this.#inner.savepoint?.(connection, name, compile) ?? Promise.resolve();
  }
  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return this.#inner.rollbackToSavepoint?.(connection, name, compile) ?? Promise.resolve();
  }
  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return this.#inner.releaseSavepoint?.(connection, name, compile) ?? Promise.resolve();
  }
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection(connection);
  }
  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
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

/** How many connections the pool of `db` holds now (idle or in use): the bench's figure. */
export function poolSize(db: Kysely<Database>): number {
  return pools.get(db)?.pool.totalCount ?? 0;
}
