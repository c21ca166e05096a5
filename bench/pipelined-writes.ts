/**
 * Benchmark: a full run's page writes one at a time (writePage) and two at a
 * time as a full run writes them (each page beside the one before it:
 * writePageAfter), against COPY of the same rows into the same table on one
 * connection and on two. N tracking links (nested objects, history on) in
 * pages of 500: inserts into empty tables, then the same pages re-written.
 * Passes alternate round by round, each into a fresh database, so the
 * machine's drift falls on all alike; medians are printed.
 *
 *   node dist/bench/pipelined-writes.js [records] [rounds]
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { trackingLinks } from '../src/resources/tracking-links.js';
import { Dataset } from '../src/simulator/dataset.js';
import { createDatabase } from '../src/warehouse/database.js';
import { type PageToWrite, validatePage, writePage } from '../src/warehouse/pages/write-page.js';
import { createRun } from '../src/warehouse/runs/sync-runs.js';
import type { Database } from '../src/warehouse/tables.js';
import { fmt, freshDatabase, median } from './support.js';
import {
  type BenchPage,
  COPY_SQL,
  copyChunk,
  copyTarget,
  generatedPages,
} from './warehouse-upsert.js';
import { writeTwoAtATime } from './write-two-at-a-time.js';

/** Writes every page, one at a time or each beside the one before it; returns the seconds it took. */
async function writePass(
  db: Kysely<Database>,
  pages: readonly BenchPage[],
  pipelined: boolean,
): Promise<number> {
  const runId = await createRun(db, 'default', { resource: 'tracking_links', mode: 'full' });
  const toWrite = function* (): Generator<PageToWrite> {
    for (const [index, p] of pages.entries()) {
      yield {
        account: 'default',
        resource: trackingLinks,
        runId,
        pageNumber: index + 1,
        body: p.body,
        records: p.records,
      };
    }
  };
  const started = performance.now();
  if (pipelined) {
    await writeTwoAtATime(db, toWrite());
  } else {
    for (const page of toWrite())
      await writePage(db, page, validatePage(trackingLinks, page.records));
  }
  return (performance.now() - started) / 1000;
}

/** COPYs every page's rows, one statement a page, over `clients` (pages dealt in turn); returns the seconds. */
async function copyPass(clients: readonly pg.Client[], chunks: readonly string[]): Promise<number> {
  const started = performance.now();
  await Promise.all(
    clients.map(async (client, k) => {
      for (let i = k; i < chunks.length; i += clients.length) {
        await pipeline(
          Readable.from([chunks[i] as string]),
          client.query(copyStreams.from(COPY_SQL)),
        );
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

type Figure = 'one' | 'two' | 'copy1' | 'copy2';

async function main(): Promise<void> {
  const records = Number(process.argv[2]) || 200_000;
  const rounds = Number(process.argv[3]) || 3;
  const pages = [...generatedPages(new Dataset({ counts: { tracking_links: records } }), records)];
  const chunks = pages.map((p) => copyChunk(p.records));
  const inserts: Record<Figure, number[]> = { one: [], two: [], copy1: [], copy2: [] };
  const rewrites: Record<Figure, number[]> = { one: [], two: [], copy1: [], copy2: [] };
  for (let round = 0; round < rounds; round += 1) {
    const order: Figure[] =
      round % 2 === 0 ? ['one', 'two', 'copy1', 'copy2'] : ['copy2', 'copy1', 'two', 'one'];
    for (const figure of order) {
      const target = await freshDatabase('pipelined');
      try {
        if (figure === 'one' || figure === 'two') {
          const db = createDatabase(target.url, { max: 4 });
          try {
            await sql`checkpoint`.execute(db);
            inserts[figure].push(records / (await writePass(db, pages, figure === 'two')));
            await sql`checkpoint`.execute(db);
            rewrites[figure].push(records / (await writePass(db, pages, figure === 'two')));
          } finally {
            await db.destroy();
          }
        } else {
          // COPY has no re-write: each of its passes goes into empty tables.
          const clients = await Promise.all(
            Array.from({ length: figure === 'copy1' ? 1 : 2 }, () => copyTarget(target.url)),
          );
          try {
            await (clients[0] as pg.Client).query('checkpoint');
            inserts[figure].push(records / (await copyPass(clients, chunks)));
            await (clients[0] as pg.Client).query('truncate hiresync.data_tracking_links');
            await (clients[0] as pg.Client).query('checkpoint');
            rewrites[figure].push(records / (await copyPass(clients, chunks)));
          } finally {
            await Promise.all(clients.map((c) => c.end()));
          }
        }
      } finally {
        await target.drop();
      }
    }
    process.stderr.write(
      `  round ${round + 1}: inserts one ${fmt(inserts.one.at(-1) ?? 0)}, two ${fmt(inserts.two.at(-1) ?? 0)}, COPY ${fmt(inserts.copy1.at(-1) ?? 0)} / ${fmt(inserts.copy2.at(-1) ?? 0)} rows/s\n`,
    );
  }
  const line = (name: string, figures: Record<Figure, number[]>) => {
    const m = (f: Figure) => median(figures[f]);
    return (
      `  ${name}: one page at a time ${fmt(m('one'))} records/s = ${(m('one') / m('copy1')).toFixed(2)} x COPY; ` +
      `two at a time ${fmt(m('two'))} records/s = ${(m('two') / m('one')).toFixed(2)} x one at a time, ` +
      `${(m('two') / m('copy1')).toFixed(2)} x COPY on one connection (${fmt(m('copy1'))} rows/s), ` +
      `${(m('two') / m('copy2')).toFixed(2)} x COPY on two (${fmt(m('copy2'))} rows/s)\n`
    );
  };
  process.stdout.write(
    `page writes of ${fmt(records)} tracking links in pages of 500, history on, medians of ${rounds} alternated rounds:\n` +
      line('inserts', inserts) +
      line('re-writes', rewrites),
  );
}

await main();
