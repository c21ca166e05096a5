import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';
import type { StoredResource } from '../../src/warehouse/pages/page-statement.js';
import { writePage } from '../../src/warehouse/pages/write-page.js';
import type { Database } from '../../src/warehouse/tables.js';
import { createTestDatabase, type TestDatabase } from './databases.js';

/** A database of the file's own whose tables are emptied before each test, and helpers on it. */
export interface EmptyWarehouse {
  readonly db: Kysely<Database>;
  readonly url: string;
  /** Writes a page given as its body text (records parsed from it, under `recordsKey` if any). */
  writeBody(
    resource: StoredResource,
    body: string,
    runId: string,
    pageNumber?: number,
    recordsKey?: string,
  ): ReturnType<typeof writePage>;
  /** Ids of a table's soft-deleted rows, ascending. */
  deletedIds(table: 'tracking_links' | 'jobs'): Promise<string[]>;
}

/**
 * Registers the hooks of a test file whose tests each start from empty tables
 * (sweeps and guards count a whole table). Call once at the top of the file.
 */
export function useEmptyWarehouse(): EmptyWarehouse {
  let t: TestDatabase | undefined;
  beforeAll(async () => {
    t = await createTestDatabase(inject('databaseUrl'));
  });
  afterAll(async () => {
    await t?.drop();
  });
  beforeEach(async () => {
    // The shared tables behind every account's views (hiresync.data_*).
    await sql`truncate hiresync.data_tracking_links, hiresync.data_job_boards, hiresync.data_referrers, hiresync.data_sources, hiresync.data_jobs, hiresync.data_job_posts, hiresync.data_rejected_records, hiresync.data_sync_runs, hiresync.data_tracking_links_history, hiresync.data_jobs_history, hiresync.data_job_posts_history, hiresync.data_job_boards_history, hiresync.data_sources_history, hiresync.data_referrers_history`.execute(
      warehouse.db,
    );
  });
  const database = (): TestDatabase => {
    if (!t) throw new Error('the test database is not ready (used outside a test?)');
    return t;
  };
  const warehouse: EmptyWarehouse = {
    get db() {
      return database().db;
    },
    get url() {
      return database().url;
    },
    writeBody(resource, body, runId, pageNumber = 1, recordsKey) {
      const parsed = JSON.parse(body) as unknown;
      const records = (
        recordsKey === undefined ? parsed : (parsed as Record<string, unknown>)[recordsKey]
      ) as unknown[];
      return writePage(database().db, {
        account: 'default',
        resource,
        runId,
        pageNumber,
        body,
        records,
        recordsKey,
      });
    },
    async deletedIds(table) {
      const rows = await database()
        .db.withSchema('public')
        .selectFrom(table)
        .select('id')
        .where('deleted_at', 'is not', null)
        .orderBy('id')
        .execute();
      return rows.map((r) => r.id);
    },
  };
  return warehouse;
}
