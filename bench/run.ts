/**
 * `npm run bench`: runs every benchmark and prints one table of measured figures.
 * Needs Postgres and Redis: DATABASE_URL and REDIS_URL (defaults: the local ones).
 */
import { cpus, totalmem } from 'node:os';
import { rateLimitedWalk } from './rate-limited-walk.js';
import { fmt } from './support.js';
import { warehouseUpsert } from './warehouse-upsert.js';

const rows: Array<[string, string]> = [];

const wh = await warehouseUpsert(200_000);
rows.push([
  `warehouse: writePage, ${fmt(wh.records)} tracking links in pages of 500, fresh inserts`,
  `${fmt(wh.insertPerS)} records/s = ${(wh.insertPerS / wh.insertCopyPerS).toFixed(2)} x COPY (${fmt(wh.insertCopyPerS)} rows/s, same pages, interleaved)`,
]);
rows.push([
  'warehouse: writePage, the same pages re-written',
  `${fmt(wh.rewritePerS)} records/s = ${(wh.rewritePerS / wh.rewriteCopyPerS).toFixed(2)} x COPY (${fmt(wh.rewriteCopyPerS)} rows/s, interleaved); peak RSS ${wh.peakRssMb.toFixed(0)} MB`,
]);

const walk = await rateLimitedWalk(100, 50, 10);
rows.push([
  `rate-limited walk, ${walk.pages} pages at ${walk.limit} req/${walk.windowS} s`,
  `${walk.wallS.toFixed(2)} s (${(walk.wallS / walk.minimumS).toFixed(3)} x the ${walk.minimumS} s minimum), ${walk.requests} requests, ${walk.rateLimited} x 429`,
]);

process.stdout.write(
  `hiresync benchmarks, ${new Date().toISOString()}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}\n\n`,
);
process.stdout.write('| benchmark | result |\n|---|---|\n');
for (const [name, result] of rows) process.stdout.write(`| ${name} | ${result} |\n`);
