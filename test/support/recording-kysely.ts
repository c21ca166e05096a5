import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';
import type { Database } from '../../src/warehouse/schema.js';

/** A statement a {@link recordingDatabase} was sent: its text as Postgres would get it. */
export interface RecordedStatement {
  sql: string;
  parameters: readonly unknown[];
}

/** What a {@link recordingDatabase} answers to a statement: the rows it returns. */
export type CannedRows = (sql: string) => ReadonlyArray<Record<string, unknown>>;

/**
 * A Kysely instance that never connects: each statement hiresync's code sends
 * through it (Kysely's queries compiled by the Postgres compiler, `sql`
 * templates, raw texts, `begin`/`commit`) is recorded as sent and answered
 * with the rows `answer` gives (none by default). For corpora of the
 * statements a path sends, captured by calling the real functions.
 */
export function recordingDatabase(answer: CannedRows = () => []): {
  db: Kysely<Database>;
  recorded: RecordedStatement[];
} {
  const recorded: RecordedStatement[] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      recorded.push({ sql: query.sql, parameters: query.parameters });
      return { rows: answer(query.sql) as R[] };
    },
    // biome-ignore lint/correctness/useYield: nothing streams from a recording
    async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
      throw new Error('a recording database streams nothing');
    },
  };
  const send = (text: string) => async (c: DatabaseConnection) => {
    await c.executeQuery(CompiledQuery.raw(text));
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: send('begin'),
    commitTransaction: send('commit'),
    rollbackTransaction: send('rollback'),
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, recorded };
}
