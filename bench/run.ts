/**
 * `npm run bench`: runs every benchmark, prints one table of figures measured
 * in this run, and writes it to bench/RESULTS.md with the command, the date
 * and the machine. Needs Postgres and Redis: DATABASE_URL and REDIS_URL
 * (defaults: the local ones). Takes about ten minutes (565 s in the run of bench/RESULTS.md),
 * plus a few for the thousands-of-accounts rows at N = 100 (1,000 and 5,000 run alone:
 * node dist/bench/accounts-thousands.js N).
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { accountsScale, describeAccountsScale, idealSeconds } from './accounts-scale.js';
import { accountsThousands, busyText } from './accounts-thousands.js';
import { childSync, clearPrefix, endToEnd, startSimulatorProcess, syncEnv } from './end-to-end.js';
import { historyCost } from './history-cost.js';
import { incrementalUpdates } from './incremental-updates.js';
import { describeWalk, rateLimitedWalk } from './rate-limited-walk.js';
import { describeRedactionScale, redactionScale } from './redaction-scale.js';
import { resumeCost } from './resume-cost.js';
import { scheduleSpread } from './schedule-spread.js';
import { ADMIN_URL, fmt, freshDatabase, postgresClient } from './support.js';
import { v3PacingRows } from './v3-pacing.js';
import { warehouseUpsert } from './warehouse-upsert.js';
import { workerScaling } from './worker-scaling.js';

const rows: Array<[string, string, string]> = [];
const row = (name: string, result: string, target: string) => {
  rows.push([name, result, target]);
  process.stderr.write(`${name}: ${result}\n`);
};

// First, while this process is fresh: its peak RSS is the warehouse benchmark's own.
const wh = await warehouseUpsert(200_000);
row(
  'warehouse: writePage, 200,000 tracking links in pages of 500, fresh inserts',
  `${fmt(wh.insertPerS)} records/s = ${(wh.insertPerS / wh.insertCopyPerS).toFixed(2)} × COPY (${fmt(wh.insertCopyPerS)} rows/s, interleaved)`,
  '≥ 0.45 × COPY',
);
row(
  'warehouse: the same pages re-written',
  `${fmt(wh.rewritePerS)} records/s = ${(wh.rewritePerS / wh.rewriteCopyPerS).toFixed(2)} × COPY (${fmt(wh.rewriteCopyPerS)} rows/s, interleaved); peak RSS of the benchmark process ${wh.peakRssMb.toFixed(0)} MB`,
  '≥ 0.45 × COPY',
);

// History: the page write with history against the same write without it.
const history = await historyCost(100_000);
for (const { resource, passes } of history.resources) {
  row(
    `history: writePage of 100,000 ${resource.replace('_', ' ')} with history ÷ without (pages of 500, interleaved)`,
    passes
      .map(
        (p) =>
          `${p.pass} ${(p.withPerS / p.withoutPerS).toFixed(2)} × (${fmt(p.withPerS)} vs ${fmt(p.withoutPerS)} records/s, ${fmt(p.versions)} versions)`,
      )
      .join('; '),
    '≥ 0.9 ×',
  );
}

const e2e = await endToEnd(200_000);
const e2eRate = e2e.endToEnd.records / e2e.endToEnd.seconds;
row(
  'end to end: sync of 200,000 tracking links, simulator on loopback, per_page 500 (mean of 2 rounds alternated with (c))',
  `${fmt(e2eRate)} records/s, ${(e2e.pages / e2e.endToEnd.seconds).toFixed(1)} pages/s, peak RSS ${e2e.endToEnd.maxRssMb.toFixed(0)} MB; ${(e2eRate / e2e.copyPerS).toFixed(2)} × COPY, ${Math.round((100 * e2eRate) / e2e.writePerS)}% of the page-write rate`,
  '≥ 0.9 × the page-write rate',
);
row(
  '  (a) COPY of the same rows into the same table, one statement per page',
  `${fmt(e2e.copyPerS)} rows/s`,
  '',
);
row(
  '  (b) bare walk of the same pages, no database writes',
  `${fmt(e2e.bareWalkPerS)} records/s`,
  '',
);
row('  (c) writePage alone on the same pages', `${fmt(e2e.writePerS)} records/s`, '');

// Pacing: the window stated by X-RateLimit-Reset, then learned without it
// (HIRESYNC_RATE_LIMIT_WINDOW left at its 10 s default, a wrong first guess).
for (const walkCase of [
  { pages: 200, limit: 20, windowS: 2, headers: true, target: '≤ 1.05 × minimum, 0 × 429' },
  { pages: 200, limit: 20, windowS: 2, headers: false, target: '≤ 1.3 × minimum, ≤ 2 × 429' },
  { pages: 150, limit: 50, windowS: 30, headers: false, target: '≤ 1.1 × minimum' },
]) {
  const walk = await rateLimitedWalk(walkCase.pages, walkCase.limit, walkCase.windowS, {
    headers: walkCase.headers,
  });
  row(
    `rate-limited walk: ${walkCase.pages} pages at ${walkCase.limit} requests / ${walkCase.windowS} s, ` +
      (walkCase.headers
        ? 'X-RateLimit-Limit and -Reset sent'
        : 'only X-RateLimit-Remaining sent, window not configured'),
    describeWalk(walk),
    walkCase.target,
  );
}

// Pacing per credential against the live service's shapes (v3; also alone:
// node dist/bench/v3-pacing.js [rounds]).
for (const [name, result, target] of await v3PacingRows(3)) row(name, result, target);

const updates = await incrementalUpdates(200_000);
row(
  `incremental run with HIRESYNC_UPDATED_FILTER after 1% of ${fmt(updates.records)} links changed (and 0.1% added)`,
  `${updates.incremental.requests} requests, ${updates.incremental.seconds.toFixed(1)} s, ${fmt(updates.incremental.records)} records, every change landed: ${updates.incremental.caught ? 'yes' : 'NO'}; the full run that is the other way to catch them: ${updates.full.requests} requests, ${updates.full.seconds.toFixed(1)} s (${(updates.full.seconds / updates.incremental.seconds).toFixed(1)} × longer)`,
  'every change caught, a fraction of a full run',
);

const memory: Record<number, number> = {};
for (const records of [100_000, 1_000_000]) {
  const sim = await startSimulatorProcess(['--records', '0', '--tracking-links', String(records)]);
  const target = await freshDatabase('memory');
  const env = syncEnv(sim.url, target.url);
  try {
    const result = await childSync(env, ['tracking_links']);
    if (!result.ok) throw new Error(`the ${records}-record sync failed`);
    memory[records] = result.maxRssMb;
  } finally {
    await sim.stop();
    await target.drop();
    await clearPrefix(env.HIRESYNC_REDIS_PREFIX as string);
  }
}
const small = memory[100_000] ?? 0;
const large = memory[1_000_000] ?? 0;
row(
  'memory: peak RSS of a 100,000- and a 1,000,000-record sync',
  `${small.toFixed(0)} MB and ${large.toFixed(0)} MB (${(large / small).toFixed(2)} ×)`,
  '≤ 1.2 ×, < 200 MB',
);

const resume = await resumeCost(3);
row(
  'resume cost: sync killed with SIGKILL at a random page, then run again (3 trials)',
  resume
    .map((r) => `killed after page ${r.killedAfterPage}: ${r.rereadRecords} records re-read`)
    .join('; '),
  '≤ one page (100 records)',
);

const scaling = await workerScaling(30_000);
row(
  'all three resources (30,000 records each), 1 vs 2 worker processes on one Redis',
  scaling
    .map(
      (s) =>
        `${s.workers} worker${s.workers > 1 ? 's' : ''}: ${fmt(s.recordsPerS)} records/s (${s.seconds.toFixed(1)} s)`,
    )
    .join('; '),
  '',
);

row(
  'redaction: a new access token of one account (with the next log line), and one log line, with 100 / 1,000 / 5,000 accounts registered (secret, Basic credential, JWT-shaped token each; medians)',
  describeRedactionScale(await redactionScale()),
  'flat in accounts',
);

const accounts = await accountsScale();
const accountRows = [...accounts.rounds, accounts.few];
row(
  `accounts: ${accounts.rounds[0]?.accounts} accounts × 3 resources, each rate-limited on its own, 1/2/4 worker processes on one Redis (see "Accounts: scale-out")`,
  accounts.rounds
    .map(
      (r) =>
        `${r.workers}: ${r.seconds.toFixed(1)} s (ideal ${idealSeconds(accounts, r.workers, r.runs).toFixed(1)} s)`,
    )
    .join('; ') +
    `; Postgres connections per worker ${Math.max(...accounts.rounds.flatMap((r) => r.peakPgConnections))} at most with ${accounts.rounds[0]?.accounts} accounts, ${Math.max(...accounts.few.peakPgConnections)} with ${accounts.few.accounts}; ` +
    `${accountRows.reduce((n, r) => n + r.failed, 0)} runs failed, ${accountRows.reduce((n, r) => n + r.mismatches, 0)} rows mismatched`,
  'connections flat in accounts; 0 failed, 0 mismatched',
);

// Schedules: from the schedulers' next times (also alone: node dist/bench/schedule-spread.js [accounts]).
const spread = await scheduleSpread(5000);
row(
  `schedules: ${fmt(spread.accounts)} accounts × 3 resources, runs per second over one 15-min incremental period and over the 1-h full window (HIRESYNC_FULL_WINDOW), from the schedulers' next times`,
  `incremental peak ${spread.after.incremental.peakPerS}/s vs mean ${spread.after.incremental.meanPerS.toFixed(1)}/s, busiest minute ${fmt(spread.after.incremental.peakPerMinute)} (before the spread: ${fmt(spread.before.incremental.peakPerS)}/s, all within ${spread.before.incremental.busySeconds} s); full peak ${spread.after.full.peakPerS}/s vs mean ${spread.after.full.meanPerS.toFixed(1)}/s, busiest minute ${fmt(spread.after.full.peakPerMinute)} (before: ${fmt(spread.before.full.peakPerS)} in one second); upgrade replaces ${fmt(spread.after.replaced)} schedulers in ${spread.after.upsertS.toFixed(0)} s, a restart none`,
  'flat: peak a small multiple of the mean',
);

// Thousands of accounts (issue 23), at N = 100 here.
for (const r of await accountsThousands({ accounts: 100 })) {
  row(
    `accounts, N = ${fmt(r.accounts)}: ${r.measure}`,
    `${r.value} (machine ${busyText(r.machineBusy)} busy)`,
    r.target,
  );
}

const client = postgresClient(ADMIN_URL);
await client.connect();
const postgres = (await client.query<{ server_version: string }>('show server_version')).rows[0]
  ?.server_version;
await client.end();
const machine = `${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}, PostgreSQL ${postgres}`;
const table = [
  '| benchmark | result | target |',
  '|---|---|---|',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
].join('\n');
const report = `# hiresync benchmark results

Command: \`npm run bench\` · date: ${new Date().toISOString()} · machine: ${machine}

Every figure below was measured in this one run. The machine is a shared VM whose
speed drifts by tens of percent within a minute: contenders that are compared
(page writes and COPY) are interleaved page by page, and the simulator runs in a
process of its own, as a real API would.

${table}

## Accounts: scale-out

${describeAccountsScale(accounts)}
`;
writeFileSync(new URL('../../bench/RESULTS.md', import.meta.url), report);
process.stdout.write(`${report}\n`);
