/**
 * One sync in a process of its own, so its peak RSS is its own. Reads a JSON
 * job from argv[2]: { env, resources, requested }. Prints one JSON line:
 * { seconds, pages, records, maxRssMb, outcomes }.
 */
import { createApp } from '../src/app.js';
import { loadConfig, type ResourceName } from '../src/config/load-config.js';
import { createLogger } from '../src/logger.js';
import { runOnce } from '../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../src/resources/index.js';

const job = JSON.parse(process.argv[2] ?? '{}') as {
  env: Record<string, string>;
  resources: ResourceName[];
  requested?: 'auto' | 'full';
};
const config = loadConfig(job.env, RESOURCE_NAMES);
const app = createApp(
  config,
  createLogger({ level: process.env.LOG_LEVEL ?? 'silent', destination: process.stderr }),
  {
    defaultMetrics: false,
  },
);
const started = performance.now();
const outcomes = await runOnce(app, job.resources, job.requested ?? 'auto');
const seconds = (performance.now() - started) / 1000;
await app.close();
let pages = 0;
let records = 0;
for (const o of outcomes) {
  if (o.ok) {
    pages += o.summary.pages;
    records += o.summary.records;
  }
}
process.stdout.write(
  `${JSON.stringify({ seconds, pages, records, maxRssMb: process.resourceUsage().maxRSS / 1024, ok: outcomes.every((o) => o.ok) })}\n`,
);
process.exit(0);
