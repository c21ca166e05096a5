/**
 * Benchmark: the warehouse page writer against a raw COPY of the same rows.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node dist/bench/warehouse-upsert.js [records]
 *
 * Writes N tracking links (nested objects included) in pages of 500 with
 * writePage, first into empty tables (inserts), then again (re-writes), and
 * COPYs the same rows into the same table fed one chunk per page. Only the
 * writes are timed; generating the pages is not.
 */

import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { trackingLinks } from '../src/resources/tracking-links.js';
import { Dataset } from '../src/simulator/dataset.js';
import { createDatabase } from '../src/warehouse/database.js';
import { writePage } from '../src/warehouse/pages/write-page.js';
import { createRun } from '../src/warehouse/runs/sync-runs.js';
import type { Database } from '../src/warehouse/tables.js';
import { fmt, freshDatabase, peakRssMb, postgresClient } from './support.js';

const PAGE = 500;

export interface WarehouseResult {
  records: number;
  insertPerS: number;
  /** COPY of the same pages, interleaved with the insert pass. */
  insertCopyPerS: number;
  rewritePerS: number;
  /** COPY of the same pages into a fresh table, interleaved with the re-write pass. */
  rewriteCopyPerS: number;
  peakRssMb: number;
}

function* pages(dataset: Dataset, records: number): Generator<unknown[]> {
  const size = dataset.size('tracking_links');
  for (let start = size - 1; start >= size - records; start -= PAGE) {
    const page: unknown[] = [];
    for (let i = start; i > start - PAGE && i >= size - records; i -= 1)
      page.push(dataset.record('tracking_links', i));
    yield page;
  }
}

/** The nested shape the simulator generates (bench input only). */
interface GeneratedLink {
  id: number;
  token: string;
  job_id: number | null;
  job_post_id: number | null;
  job_board: { id: number } | null;
  related_post_id: number | null;
  related_post_type: string | null;
  credited_to: { id: number | null; name: string; employee_id: string | null } | null;
  source: { id: number } | null;
  created_at: string;
  updated_at: string;
}

/** COPY text format: tabs, newlines and backslashes escaped, \N for null. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\t/g, '\\t')
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r');
}

export function copyChunk(records: readonly unknown[]): string {
  let out = '';
  for (const rec of records) {
    const r = rec as GeneratedLink;
    const anonymous = r.credited_to != null && r.credited_to.id == null;
    out += `${[
      'default',
      r.id,
      r.token,
      r.job_id,
      r.job_post_id,
      r.job_board?.id,
      r.related_post_id,
      r.related_post_type,
      r.credited_to?.id,
      anonymous ? r.credited_to?.name : null,
      anonymous ? r.credited_to?.employee_id : null,
      r.source?.id,
      r.created_at,
      r.updated_at,
      r,
    ]
      .map(copyField)
      .join('\t')}\n`;
  }
  return out;
}

/** COPY into the shared table the page write fills (shared storage), as account `default`. */
export const COPY_SQL =
  'copy hiresync.data_tracking_links (account, id, token, job_id, job_post_id, job_board_id, related_post_id, related_post_type, credited_to_id, credited_to_name, credited_to_employee_id, source_id, created_at, updated_at, raw) from stdin';

/** A COPY target: the same table, without the foreign keys (COPY writes link rows only). */
export async function copyTarget(url: string): Promise<pg.Client> {
  const client = postgresClient(url);
  await client.connect();
  await client.query(
    'alter table hiresync.data_tracking_links drop constraint if exists data_tracking_links_job_board_id_fkey, drop constraint if exists data_tracking_links_credited_to_id_fkey, drop constraint if exists data_tracking_links_source_id_fkey',
  );
  return client;
}

/** A page as the writer takes it. */
export interface BenchPage {
  body: string;
  records: readonly unknown[];
}

/**
 * One pass over the pages: each page is written with writePage and COPYed into
 * another database right after, so both meet the same machine conditions (a
 * shared VM drifts by tens of percent within a minute).
 */
async function interleavedPass(
  db: Kysely<Database>,
  copyClient: pg.Client,
  pages: Iterable<BenchPage>,
): Promise<{ writeMs: number; copyMs: number; records: number }> {
  const runId = await createRun(db, 'default', { resource: 'tracking_links', mode: 'full' });
  let writeMs = 0;
  let copyMs = 0;
  let number = 0;
  let records = 0;
  for (const page of pages) {
    number += 1;
    records += page.records.length;
    const chunk = copyChunk(page.records);
    let started = performance.now();
    await writePage(db, {
      account: 'default',
      resource: trackingLinks,
      runId,
      pageNumber: number,
      body: page.body,
      records: page.records,
    });
    writeMs += performance.now() - started;
    started = performance.now();
    await pipeline(Readable.from([chunk]), copyClient.query(copyStreams.from(COPY_SQL)));
    copyMs += performance.now() - started;
  }
  return { writeMs, copyMs, records };
}

/** writePage on the given pages into a migrated database, interleaved with COPY into a fresh one. */
export async function interleavedWrites(
  url: string,
  pages: readonly BenchPage[],
): Promise<{ writePerS: number; copyPerS: number }> {
  const copy = await freshDatabase('copy');
  const db = createDatabase(url, { max: 2 });
  const client = await copyTarget(copy.url);
  try {
    await sql`checkpoint`.execute(db);
    const pass = await interleavedPass(db, client, pages);
    return {
      writePerS: pass.records / (pass.writeMs / 1000),
      copyPerS: pass.records / (pass.copyMs / 1000),
    };
  } finally {
    await db.destroy();
    await client.end();
    await copy.drop();
  }
}

export function* generatedPages(dataset: Dataset, records: number): Generator<BenchPage> {
  for (const page of pages(dataset, records)) yield { body: JSON.stringify(page), records: page };
}

export async function warehouseUpsert(records = 200_000): Promise<WarehouseResult> {
  const dataset = new Dataset({ counts: { tracking_links: records } });
  const target = await freshDatabase('writes');
  const copies = [await freshDatabase('copy1'), await freshDatabase('copy2')];
  const db = createDatabase(target.url, { max: 2 });
  const clients = await Promise.all(copies.map((c) => copyTarget(c.url)));
  try {
    await sql`checkpoint`.execute(db);
    const inserts = await interleavedPass(
      db,
      clients[0] as pg.Client,
      generatedPages(dataset, records),
    );
    await sql`checkpoint`.execute(db);
    const rewrites = await interleavedPass(
      db,
      clients[1] as pg.Client,
      generatedPages(dataset, records),
    );
    const rate = (ms: number) => records / (ms / 1000);
    return {
      records,
      insertPerS: rate(inserts.writeMs),
      insertCopyPerS: rate(inserts.copyMs),
      rewritePerS: rate(rewrites.writeMs),
      rewriteCopyPerS: rate(rewrites.copyMs),
      peakRssMb: peakRssMb(),
    };
  } finally {
    await db.destroy();
    await Promise.all(clients.map((c) => c.end()));
    await target.drop();
    for (const c of copies) await c.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await warehouseUpsert(Number(process.argv[2]) || 200_000);
  process.stdout.write(
    `warehouse, ${fmt(r.records)} tracking links in pages of ${PAGE}:\n` +
      `  writePage inserts   ${fmt(r.insertPerS)} records/s = ${(r.insertPerS / r.insertCopyPerS).toFixed(2)} x COPY (${fmt(r.insertCopyPerS)} rows/s, interleaved)\n` +
      `  writePage re-writes ${fmt(r.rewritePerS)} records/s = ${(r.rewritePerS / r.rewriteCopyPerS).toFixed(2)} x COPY (${fmt(r.rewriteCopyPerS)} rows/s, interleaved)\n` +
      `  peak RSS ${r.peakRssMb.toFixed(0)} MB\n`,
  );
}
