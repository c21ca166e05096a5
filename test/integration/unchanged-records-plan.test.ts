// The plan of the unchanged-records statement (issue 35, item 5): on a table
// its first run has just filled, before any ANALYZE, the planner has no
// statistics and once took the account's 2,000 rows for one, comparing each
// with every record of the page (a million jsonb comparisons, 0.7–0.9 s for a
// no-op page). Whatever the estimates, the stored table must be reached by its
// primary key, once per record of the page. Asserted on the plan's shape, never
// on its time.
import { CompiledQuery, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { jobs } from '../../src/resources/jobs.js';
import { trackingLinks } from '../../src/resources/tracking-links.js';
import { Dataset } from '../../src/simulator/dataset.js';
import type { StoredResource } from '../../src/warehouse/pages/page-statement.js';
import { unchangedRecords } from '../../src/warehouse/pages/sql/unchanged-records.js';
import { writePage } from '../../src/warehouse/pages/write-page.js';
import { createRun } from '../../src/warehouse/runs/sync-runs.js';
import { useEmptyWarehouse } from '../support/warehouse-fixture.js';

const w = useEmptyWarehouse();

/** The stored rows: the account's, on a table no ANALYZE has seen. */
const ROWS = 2000;
const PER_PAGE = 500;

/** A node of EXPLAIN (FORMAT JSON)'s plan. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** Writes `records` as a full run's pages of {@link PER_PAGE}, newest first, as a first sync does. */
async function fill(resource: StoredResource, records: unknown[]): Promise<void> {
  const runId = await createRun(w.db, 'default', { resource: resource.name, mode: 'full' });
  for (let page = 0; page * PER_PAGE < records.length; page += 1) {
    const slice = records.slice(page * PER_PAGE, (page + 1) * PER_PAGE);
    await writePage(w.db, {
      account: 'default',
      resource,
      runId,
      pageNumber: page + 1,
      body: JSON.stringify(slice),
      records: slice,
    });
  }
}

/** The plan of the statement for `body`, an incremental run's page, as Postgres would run it now. */
async function planOf(resource: StoredResource, body: string): Promise<PlanNode[]> {
  const runId = await createRun(w.db, 'default', { resource: resource.name, mode: 'incremental' });
  const test = resource.storage === 'json' ? 'json' : 'tracking_links';
  const { rows } = await w.db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
    CompiledQuery.raw(`explain (format json) ${unchangedRecords(test, resource.table)}`, [
      body,
      null,
      runId,
      [],
      1,
      null,
      null,
      'default',
    ]),
  );
  const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
  if (!plan) throw new Error('no plan');
  return nodesOf(plan);
}

/** Has any ANALYZE (by hand or autovacuum's) given the table statistics? */
async function analyzed(table: string): Promise<boolean> {
  const { rows } = await sql<{ analyzed: boolean }>`
    select coalesce(bool_or(s.last_analyze is not null or s.last_autoanalyze is not null), false)
      as analyzed
    from pg_catalog.pg_stat_user_tables s
    join pg_catalog.pg_inherits i on i.inhrelid = s.relid
    where i.inhparent = ${`hiresync.data_${table}`}::regclass`.execute(w.db);
  return rows[0]?.analyzed ?? false;
}

const flat = new Dataset({ counts: { tracking_links: ROWS }, flatTrackingLinks: true });
const shapes = [
  {
    resource: trackingLinks,
    records: Array.from({ length: ROWS }, (_, i) => flat.record('tracking_links', ROWS - 1 - i)),
  },
  {
    resource: jobs,
    records: Array.from({ length: ROWS }, (_, i) => ({ id: ROWS - i, title: `job ${ROWS - i}` })),
  },
];

describe('the unchanged-records statement on a freshly filled table without statistics', () => {
  for (const { resource, records } of shapes) {
    it(`reaches the stored ${resource.name} by their primary key, once per record of the page, at ${ROWS} rows`, async () => {
      await fill(resource, records);
      expect(await analyzed(resource.table)).toBe(false);

      const nodes = await planOf(resource, JSON.stringify(records.slice(0, PER_PAGE)));

      const stored = nodes.filter((n) =>
        new RegExp(`^data_${resource.table}(_p\\d+)?$`).test(n['Relation Name'] ?? ''),
      );
      expect(stored.length).toBeGreaterThan(0);
      for (const scan of stored) {
        // A probe by (account, id) of the page's record, never a scan of all the account's rows.
        expect(scan['Node Type']).toMatch(/^Index (Only )?Scan$/);
        expect(scan['Index Name']).toMatch(/_pkey$/);
        expect(scan['Index Cond']).toMatch(/\(account = .*\) AND \(id = l\.id\)/);
      }
    });
  }
});
