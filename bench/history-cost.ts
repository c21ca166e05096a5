/**
 * Benchmark: what keeping history costs the page write.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node dist/bench/history-cost.js [records]
 *
 * Writes the same pages of 500 records with writePage into two databases, one
 * with history (HIRESYNC_HISTORY on, the default) and one without, page by
 * page in alternating order so both meet the same machine conditions. Three
 * passes per resource: inserts into empty tables (every record a first
 * version), re-writes of unchanged records (a full run's usual page: no
 * version), and re-writes after 1% of the records changed. Only the writes are
 * timed. Tracking links (the heaviest statement) and jobs (the lightest,
 * where history weighs most) are measured.
 */

import type { Kysely } from 'kysely';
import { jobs } from '../src/resources/jobs.js';
import { trackingLinks } from '../src/resources/tracking-links.js';
import { Dataset } from '../src/simulator/dataset.js';
import { createDatabase } from '../src/warehouse/database.js';
import type { StoredResource } from '../src/warehouse/pages/page-statement.js';
import { writePage } from '../src/warehouse/pages/write-page.js';
import { createRun } from '../src/warehouse/runs/sync-runs.js';
import type { Database } from '../src/warehouse/tables.js';
import { fmt, freshDatabase } from './support.js';

const PAGE = 500;

/** One pass of one resource: records/s with and without history. */
export interface HistoryPass {
  pass: 'inserts' | 'unchanged re-writes' | 're-writes, 1% changed';
  withPerS: number;
  withoutPerS: number;
  /** Versions the pass added to the history table. */
  versions: number;
}

export interface HistoryCostResult {
  records: number;
  resources: Array<{ resource: string; passes: HistoryPass[] }>;
}

function pagesOf(dataset: Dataset, resource: string, records: number): string[] {
  const size = dataset.size(resource);
  const bodies: string[] = [];
  for (let start = size - 1; start >= size - records; start -= PAGE) {
    const page: unknown[] = [];
    for (let i = start; i > start - PAGE && i >= size - records; i -= 1) {
      page.push(dataset.record(resource, i));
    }
    bodies.push(JSON.stringify(page));
  }
  return bodies;
}

async function countVersions(db: Kysely<Database>, table: string): Promise<number> {
  const row = await db
    .selectFrom(table as 'jobs_history')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Writes every page into both databases, alternating which goes first; returns ms spent in each. */
async function pass(
  withHistory: Kysely<Database>,
  without: Kysely<Database>,
  resource: StoredResource,
  bodies: readonly string[],
): Promise<{ withMs: number; withoutMs: number }> {
  const runs = await Promise.all(
    [withHistory, without].map((db) =>
      createRun(db, 'default', { resource: resource.name, mode: 'full' }),
    ),
  );
  const spent = [0, 0];
  for (const [index, body] of bodies.entries()) {
    const records = JSON.parse(body) as unknown[];
    const order = index % 2 === 0 ? [0, 1] : [1, 0];
    for (const which of order) {
      const started = performance.now();
      await writePage(which === 0 ? withHistory : without, {
        account: 'default',
        resource,
        runId: runs[which] as string,
        pageNumber: index + 1,
        body,
        records,
        history: which === 0,
      });
      spent[which] = (spent[which] ?? 0) + performance.now() - started;
    }
  }
  return { withMs: spent[0] ?? 0, withoutMs: spent[1] ?? 0 };
}

async function measure(resource: StoredResource, records: number): Promise<HistoryPass[]> {
  const dataset = new Dataset({ counts: { [resource.name]: records } });
  const targets = [await freshDatabase('history_on'), await freshDatabase('history_off')];
  const [withHistory, without] = targets.map((t) => createDatabase(t.url, { max: 2 })) as [
    Kysely<Database>,
    Kysely<Database>,
  ];
  const passes: HistoryPass[] = [];
  const run = async (name: HistoryPass['pass']) => {
    const before = await countVersions(withHistory, resource.historyTable);
    const { withMs, withoutMs } = await pass(
      withHistory,
      without,
      resource,
      pagesOf(dataset, resource.name, records),
    );
    passes.push({
      pass: name,
      withPerS: records / (withMs / 1000),
      withoutPerS: records / (withoutMs / 1000),
      versions: (await countVersions(withHistory, resource.historyTable)) - before,
    });
  };
  try {
    await run('inserts');
    await run('unchanged re-writes');
    const size = dataset.size(resource.name);
    for (let i = 0; i < size; i += 100) dataset.touch(resource.name, i);
    await run('re-writes, 1% changed');
    return passes;
  } finally {
    await withHistory.destroy();
    await without.destroy();
    for (const t of targets) await t.drop();
  }
}

export async function historyCost(records = 100_000): Promise<HistoryCostResult> {
  const resources = [];
  for (const resource of [trackingLinks, jobs]) {
    resources.push({ resource: resource.name, passes: await measure(resource, records) });
  }
  return { records, resources };
}

/** One line per pass: both rates and their ratio. */
export function describeHistoryCost(r: HistoryCostResult): string[] {
  return r.resources.flatMap(({ resource, passes }) =>
    passes.map(
      (p) =>
        `${resource} ${p.pass}: ${(p.withPerS / p.withoutPerS).toFixed(2)} x the write without history (${fmt(p.withPerS)} vs ${fmt(p.withoutPerS)} records/s; ${fmt(p.versions)} versions)`,
    ),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await historyCost(Number(process.argv[2]) || 100_000);
  process.stdout.write(
    `history cost, ${fmt(r.records)} records per resource in pages of ${PAGE}:\n${describeHistoryCost(
      r,
    )
      .map((line) => `  ${line}`)
      .join('\n')}\n`,
  );
}
