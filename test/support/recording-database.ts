import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';
import type { Database } from '../../src/warehouse/tables.js';

/** A statement as the database would have received it. */
export interface RecordedStatement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/**
 * What a recorded statement returns: its rows (default none), or an error
 * to throw (a refused value, as Postgres would refuse it).
 */
export type Respond = (statement: RecordedStatement) => readonly unknown[] | Error | undefined;

/** A Kysely instance that sends nothing, and the statements it was given. */
export interface RecordingDatabase {
  readonly db: Kysely<Database>;
  readonly statements: RecordedStatement[];
}

/**
 * A Kysely instance over a driver that records each compiled statement (SQL
 * and parameters, transactions' own statements left out) and answers it with
 * `respond`'s rows, as Kysely's DummyDriver would with none: the real
 * warehouse functions run against it, and what they would send is what a
 * lint reads.
 */
export function recordingDatabase(respond: Respond = () => undefined): RecordingDatabase {
  const statements: RecordedStatement[] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      const statement = { sql: query.sql, parameters: query.parameters };
      statements.push(statement);
      const answer = respond(statement);
      if (answer instanceof Error) throw answer;
      return { rows: (answer ?? []) as R[] };
    },
    async *streamQuery() {},
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: async () => {},
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    destroy: async () => {},
    savepoint: async () => {},
    rollbackToSavepoint: async () => {},
    releaseSavepoint: async () => {},
  };
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, statements };
}
