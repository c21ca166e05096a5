/**
 * Benchmark: pacing per credential against the live service's shapes (v3):
 * flat tracking links, `expires_at` tokens, a fixed window of 20 requests /
 * 2 s (the live 75 / 30 s scaled down in time) with X-RateLimit-Limit,
 * -Remaining and -Reset (Unix epoch seconds) on every response.
 *
 *   - a full sync of six resources of one account (jobs, job_posts,
 *     tracking_links and the extra lists applications, candidates,
 *     departments) in one `sync` process: wall time ÷ floor (total requests ÷
 *     Limit × window), 429s, requests against pages;
 *   - one resource alone (tracking links, 30, 40, 60 and 200 pages) on the same
 *     window, Reset to the ms; 40 and 200 pages with windows aligned on the epoch;
 *   - end-to-end records/s of a sync of flat tracking links beside the seed
 *     shape's nested ones (no rate limit).
 *
 *   node dist/bench/v3-pacing.js [rounds]
 */

import { ApiSimulator } from '../src/simulator/api-simulator.js';
import { childSync, clearPrefix, startSimulatorProcess, syncEnv } from './end-to-end.js';
import { describeWalk, type RateLimitedWalkResult, rateLimitedWalk } from './rate-limited-walk.js';
import { fmt, freshDatabase } from './support.js';

/** The six resources of the account and the records each holds (per_page 100: 60 pages). */
export const SIX_RESOURCES = {
  jobs: 1000,
  job_posts: 1000,
  tracking_links: 1500,
  applications: 1000,
  candidates: 1000,
  departments: 500,
} as const;

const PER_PAGE = 100;
const LIMIT = 20;
const WINDOW_S = 2;

export interface SixResourcesResult {
  pages: number;
  requests: number;
  rateLimited: number;
  wallS: number;
  /** requests ÷ Limit × window. */
  floorS: number;
}

/** A full sync of {@link SIX_RESOURCES} of one account against the v3-like window. */
export async function sixResourcesSync(
  resetFormat: 'epoch' | 'epoch-ms' = 'epoch',
): Promise<SixResourcesResult> {
  const { jobs, job_posts, tracking_links, ...extras } = SIX_RESOURCES;
  const sim = await ApiSimulator.start({
    rateLimit: { limit: LIMIT, windowMs: WINDOW_S * 1000 },
    rateLimitHeaders: true,
    rateLimitHeadersOn429: true,
    rateLimitResetFormat: resetFormat,
    expiresField: 'expires_at',
    extraResources: Object.keys(extras),
    dataset: { flatTrackingLinks: true, counts: { jobs, job_posts, tracking_links, ...extras } },
  });
  const target = await freshDatabase('v3pacing');
  const resources = Object.keys(SIX_RESOURCES);
  const env = syncEnv(sim.url, target.url, {
    HIRESYNC_PER_PAGE: String(PER_PAGE),
    HIRESYNC_RESOURCES: resources.join(','),
    HIRESYNC_RATE_LIMIT_WINDOW: `${WINDOW_S}s`,
    HIRESYNC_CONCURRENCY: String(resources.length),
  });
  try {
    const result = await childSync(env, resources);
    if (!result.ok) throw new Error('the six-resource sync failed');
    const requests = sim.stats.listRequests;
    return {
      pages: result.pages,
      requests,
      rateLimited: sim.stats.rateLimited,
      wallS: result.seconds,
      floorS: (requests / LIMIT) * WINDOW_S,
    };
  } finally {
    await sim.close();
    await target.drop();
    await clearPrefix(env.HIRESYNC_REDIS_PREFIX as string);
  }
}

export function describeSix(r: SixResourcesResult): string {
  return (
    `${r.wallS.toFixed(2)} s = ${(r.wallS / r.floorS).toFixed(3)} × the ${r.floorS.toFixed(1)} s floor; ` +
    `${r.rateLimited} × 429; ${r.requests} requests for ${r.pages} pages`
  );
}

/** Records/s of a `sync` of `records` tracking links, flat or nested, unthrottled. */
export async function trackingLinksRate(records: number, flat: boolean): Promise<number> {
  const sim = await startSimulatorProcess([
    '--records',
    '0',
    '--tracking-links',
    String(records),
    ...(flat ? ['--flat'] : []),
  ]);
  const target = await freshDatabase(flat ? 'flat' : 'nested');
  const env = syncEnv(sim.url, target.url, { HIRESYNC_PER_PAGE: '500' });
  try {
    const result = await childSync(env, ['tracking_links']);
    if (!result.ok) throw new Error('the tracking links sync failed');
    return result.records / result.seconds;
  } finally {
    await sim.stop();
    await target.drop();
    await clearPrefix(env.HIRESYNC_REDIS_PREFIX as string);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** The rows `npm run bench` prints; each figure the median of `rounds` runs. */
export async function v3PacingRows(rounds = 3): Promise<Array<[string, string, string]>> {
  const rows: Array<[string, string, string]> = [];
  const formats = [
    ['epoch', 'Reset in epoch seconds, windows aligned on the epoch'],
    ['epoch-ms', 'Reset in epoch seconds to the ms, each window opening with its first request'],
  ] as const;
  for (const [format, says] of formats) {
    const six: SixResourcesResult[] = [];
    for (let i = 0; i < rounds; i += 1) six.push(await sixResourcesSync(format));
    six.sort((a, b) => a.wallS / a.floorS - b.wallS / b.floorS);
    const mid = six[Math.floor(six.length / 2)] as SixResourcesResult;
    rows.push([
      `v3 pacing: full sync of six resources of one account (${Object.keys(SIX_RESOURCES).join(', ')}), 20 requests / 2 s, Limit/Remaining/Reset on every response (${says}), flat links, expires_at tokens; median of ${rounds}`,
      `${describeSix(mid)} (all ${rounds}: ${six.map((r) => (r.wallS / r.floorS).toFixed(3)).join(', ')} × floor)`,
      '≤ 1.05 × floor, 0 × 429, requests = pages',
    ]);
  }
  const walks = [
    ...[30, 40, 60, 200].map((pages) => [pages, 'epoch-ms'] as const),
    ...[40, 200].map((pages) => [pages, 'epoch'] as const),
  ];
  for (const [pages, resetFormat] of walks) {
    const walked: RateLimitedWalkResult[] = [];
    for (let i = 0; i < rounds; i += 1) {
      walked.push(
        await rateLimitedWalk(pages, LIMIT, WINDOW_S, {
          headers: true,
          configureWindow: true,
          resetFormat,
        }),
      );
    }
    walked.sort((a, b) => a.wallS / a.minimumS - b.wallS / b.minimumS);
    const mid = walked[Math.floor(walked.length / 2)];
    if (!mid) continue;
    const says =
      resetFormat === 'epoch'
        ? "Reset in epoch seconds, windows aligned on the epoch (started at a random moment of a window's first half)"
        : 'Reset in epoch seconds to the ms';
    rows.push([
      `v3 pacing: one resource of ${pages} pages, 20 requests / 2 s, ${says}; median of ${rounds}`,
      `${describeWalk(mid)}; ${(mid.wallS / mid.sustainedS).toFixed(3)} × the ${mid.sustainedS} s floor (all ${rounds}: ${walked.map((w) => (w.wallS / w.minimumS).toFixed(3)).join(', ')} × minimum)`,
      pages === 40
        ? '≤ 1.15 × minimum, 0 × 429'
        : pages === 200
          ? '≤ 1.03 × minimum, 0 × 429'
          : '0 × 429',
    ]);
  }
  const flat: number[] = [];
  const nested: number[] = [];
  for (let i = 0; i < Math.max(2, rounds - 1); i += 1) {
    nested.push(await trackingLinksRate(100_000, false));
    flat.push(await trackingLinksRate(100_000, true));
  }
  rows.push([
    'end to end: sync of 100,000 tracking links, v3 (flat) beside seed (nested), per_page 500, unthrottled; median, alternated',
    `flat ${fmt(median(flat))} records/s; nested ${fmt(median(nested))} records/s (${(median(flat) / median(nested)).toFixed(2)} ×)`,
    '',
  ]);
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rounds = Number(process.argv[2]) || 3;
  for (const [name, result, target] of await v3PacingRows(rounds)) {
    process.stdout.write(`${name}: ${result} [target ${target || '-'}]\n`);
  }
}
