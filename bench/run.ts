/**
 * `npm run bench`: runs every benchmark and prints one table of measured figures.
 * Needs Postgres and Redis: DATABASE_URL and REDIS_URL (defaults: the local ones).
 */
import { cpus, totalmem } from 'node:os';
import { rateLimitedWalk } from './rate-limited-walk.js';

const rows: Array<[string, string]> = [];

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
